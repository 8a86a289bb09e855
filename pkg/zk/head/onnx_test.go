package head

import (
	"errors"
	"math"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
)

// matmulHead builds the MatMul + Add form (what torch.onnx gives for a
// Linear on a 3-D input) of a 2-layer head with known weights.
func matmulHead(op string) []byte {
	w0 := []float32{1, 2, 3, 4, 5, 6} // [in 3, out 2]
	w1 := []float32{1, -1, -1, 1}     // [in 2, out 2]
	m := onnxmodel.Model{
		Inputs:  []onnxmodel.ValueInfo{{Name: "x", ElemType: onnxmodel.Float, Shape: []int64{1, 3}}},
		Outputs: []onnxmodel.ValueInfo{{Name: "y", ElemType: onnxmodel.Float, Shape: []int64{1, 2}}},
		Initializers: []onnxmodel.Tensor{
			{Name: "w0", Dims: []int64{3, 2}, Floats: w0}, {Name: "b0", Dims: []int64{2}, Floats: []float32{0.5, -100}},
			{Name: "w1", Dims: []int64{2, 2}, Floats: w1}, {Name: "b1", Dims: []int64{2}, Floats: []float32{0, 1}},
		},
		Nodes: []onnxmodel.Node{
			{Name: "m0", OpType: "MatMul", Inputs: []string{"x", "w0"}, Outputs: []string{"h0"}},
			{Name: "a0", OpType: "Add", Inputs: []string{"b0", "h0"}, Outputs: []string{"h1"}},
			{Name: "r0", OpType: op, Inputs: []string{"h1"}, Outputs: []string{"h2"}},
			{Name: "m1", OpType: "MatMul", Inputs: []string{"h2", "w1"}, Outputs: []string{"h3"}},
			{Name: "a1", OpType: "Add", Inputs: []string{"h3", "b1"}, Outputs: []string{"y"}},
		},
	}
	return m.Marshal()
}

func TestLoadONNXMatMul(t *testing.T) {
	m, err := LoadONNX(matmulHead("Relu"))
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Dims(); len(d) != 3 || d[0] != 3 || d[1] != 2 || d[2] != 2 {
		t.Fatalf("dims %v", d)
	}
	// h = relu([1*1+2*3+3*5+0.5, 1*2+2*4+3*6-100]) = [22.5, 0]; y = [22.5, -22.5+1].
	y, err := m.Eval([]float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(y[0]-22.5) > 1e-9 || math.Abs(y[1]+21.5) > 1e-9 {
		t.Fatalf("Eval = %v, want [22.5 -21.5]", y)
	}
	if _, err := LoadONNX(matmulHead("Sigmoid")); !errors.Is(err, ErrModel) {
		t.Fatalf("Sigmoid head: err = %v, want ErrModel", err)
	}
}

func TestLoadONNXGemm(t *testing.T) {
	b, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{10, 6, 4, 3}, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadONNX(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Dims(); len(d) != 4 || d[0] != 10 || d[3] != 3 {
		t.Fatalf("dims %v", d)
	}
	if m.Input != "input" || m.Output != "logits" {
		t.Fatalf("names %q %q", m.Input, m.Output)
	}
	for _, bad := range [][]byte{nil, []byte("not onnx"), b[:len(b)/2]} {
		if _, err := LoadONNX(bad); !errors.Is(err, ErrModel) {
			t.Errorf("%d bytes: err = %v, want ErrModel", len(bad), err)
		}
	}
	if _, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{768, 400, 2}}); err == nil {
		t.Error("a 308K-parameter head was generated")
	}
}

func FuzzLoadONNX(f *testing.F) {
	b, _ := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{4, 3, 2}, Seed: 1})
	f.Add(b)
	f.Add(matmulHead("Relu"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := LoadONNX(b)
		if err != nil {
			if !errors.Is(err, ErrModel) {
				t.Fatalf("error %v does not wrap ErrModel", err)
			}
			return
		}
		if _, err := m.Eval(make([]float32, m.Layers[0].In)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Quantize(m, RandomCorpus(m.Layers[0].In, 2, 1)); err != nil && !errors.Is(err, ErrQuantize) && !errors.Is(err, ErrModel) {
			t.Fatalf("Quantize: %v", err)
		}
	})
}

func TestQuantizeInputEdges(t *testing.T) {
	q := &Quantized{InputScale: 0.5}
	got := q.QuantizeInput([]float32{0.25, -0.25, 0.74, 1000, float32(math.Inf(-1)), float32(math.NaN())})
	want := []int8{1, -1, 1, 127, -127, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("QuantizeInput = %v, want %v", got, want)
		}
	}
}
