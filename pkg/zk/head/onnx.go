package head

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-gov/svc/internal/pbwire"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// ErrModel reports an ONNX file that is not a supported MLP head: not
// parseable, an operator other than Gemm, MatMul, Add and Relu, a graph
// that is not a chain of dense layers, or weights of the wrong shape.
var ErrModel = errors.New("head: not a supported ONNX MLP head")

// Limits on the heads this package accepts: the specification's ceiling
// on parameters, and bounds that keep every integer accumulator exact.
const (
	// MaxParams is the largest number of weights and biases of a head.
	MaxParams = 263_000
	// MaxWidth is the largest layer width (input, hidden or output).
	MaxWidth = zkverify.MaxHeadWidth
	// MaxLayers is the largest number of dense layers.
	MaxLayers = 8
)

// Dense is one float layer y = W·x + b, W row-major [Out][In].
type Dense struct {
	In, Out int
	W       []float32 // Out*In, row j holds the weights of output j
	B       []float32 // Out
}

// Model is a float MLP head: dense layers with ReLU between them and none
// after the last (its outputs are the logits).
type Model struct {
	// Input and Output are the names of the graph's input and output.
	Input, Output string
	Layers        []Dense
}

// Dims returns the layer widths: input, hidden..., classes.
func (m *Model) Dims() []int {
	d := []int{m.Layers[0].In}
	for _, l := range m.Layers {
		d = append(d, l.Out)
	}
	return d
}

// Eval runs the float model on one input (pure Go, float64 accumulation).
func (m *Model) Eval(x []float32) ([]float64, error) {
	if len(x) != m.Layers[0].In {
		return nil, fmt.Errorf("head: input has %d values, the model takes %d", len(x), m.Layers[0].In)
	}
	a := make([]float64, len(x))
	for i, v := range x {
		a[i] = float64(v)
	}
	for li, l := range m.Layers {
		y := make([]float64, l.Out)
		for j := 0; j < l.Out; j++ {
			s := float64(l.B[j])
			row := l.W[j*l.In : (j+1)*l.In]
			for i, w := range row {
				s += float64(w) * a[i]
			}
			if li < len(m.Layers)-1 && s < 0 {
				s = 0
			}
			y[j] = s
		}
		a = y
	}
	return a, nil
}

type onnxNode struct {
	op      string
	inputs  []string
	outputs []string
	ints    map[string]int64
	floats  map[string]float32
}

type onnxTensor struct {
	dims []int64
	vals []float32
}

// LoadONNX reads an MLP head from an ONNX ModelProto: the graph a
// torch.onnx export of nn.Sequential(Linear, ReLU, ..., Linear) gives.
// Each layer is Gemm(x, W, b) (alpha = beta = 1, transA = 0, transB 0 or 1)
// or MatMul(x, W[in, out]) followed by Add with a bias of [out]; layers are
// separated by Relu; the last layer's output is the graph's one output. The
// weights must be float32 initializers inside the file (float_data or
// raw_data). Anything else returns an error wrapping [ErrModel] naming the
// problem.
func LoadONNX(data []byte) (*Model, error) {
	var nodes []onnxNode
	tensors := map[string]*onnxTensor{}
	var inputs, outputs []string
	err := pbwire.Fields(data, func(num protowire.Number, v []byte) error {
		if num != 7 {
			return nil
		}
		return pbwire.Fields(v, func(num protowire.Number, v []byte) error {
			switch num {
			case 1:
				n, err := readNode(v)
				nodes = append(nodes, n)
				return err
			case 5:
				name, t, err := readTensor(v)
				if err != nil {
					return err
				}
				tensors[name] = t
			case 11, 12:
				name, err := valueInfoName(v)
				if err != nil {
					return err
				}
				if num == 11 {
					inputs = append(inputs, name)
				} else {
					outputs = append(outputs, name)
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrModel, err)
	}
	var feeds []string
	for _, in := range inputs {
		if _, ok := tensors[in]; !ok {
			feeds = append(feeds, in)
		}
	}
	if len(feeds) != 1 || len(outputs) != 1 {
		return nil, fmt.Errorf("%w: want one input and one output, have %d and %d", ErrModel, len(feeds), len(outputs))
	}
	m := &Model{Input: feeds[0], Output: outputs[0]}
	cur := feeds[0]
	relu := true // a layer may start the graph or follow a Relu
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if len(n.outputs) != 1 {
			return nil, fmt.Errorf("%w: node %d (%s) has %d outputs", ErrModel, i, n.op, len(n.outputs))
		}
		switch n.op {
		case "Relu":
			if relu || len(n.inputs) != 1 || n.inputs[0] != cur {
				return nil, fmt.Errorf("%w: node %d: Relu must follow a dense layer", ErrModel, i)
			}
			relu, cur = true, n.outputs[0]
			continue
		case "Gemm", "MatMul":
		default:
			return nil, fmt.Errorf("%w: node %d: operator %q (supported: Gemm, MatMul, Add, Relu)", ErrModel, i, n.op)
		}
		if !relu {
			return nil, fmt.Errorf("%w: node %d: two dense layers without a Relu between them", ErrModel, i)
		}
		if len(n.inputs) < 2 || n.inputs[0] != cur {
			return nil, fmt.Errorf("%w: node %d: %s does not take the previous layer's output", ErrModel, i, n.op)
		}
		w := tensors[n.inputs[1]]
		if w == nil || len(w.dims) != 2 {
			return nil, fmt.Errorf("%w: node %d: weight %q is not a 2-D float initializer", ErrModel, i, n.inputs[1])
		}
		var d Dense
		var biasName string
		out := n.outputs[0]
		if n.op == "Gemm" {
			for k, v := range n.ints {
				if (k == "transA" && v != 0) || (k == "transB" && v != 0 && v != 1) {
					return nil, fmt.Errorf("%w: node %d: Gemm %s=%d", ErrModel, i, k, v)
				}
			}
			for k, v := range n.floats {
				if (k == "alpha" || k == "beta") && v != 1 {
					return nil, fmt.Errorf("%w: node %d: Gemm %s=%g (want 1)", ErrModel, i, k, v)
				}
			}
			d, err = dense(w, n.ints["transB"] == 1)
			if len(n.inputs) >= 3 {
				biasName = n.inputs[2]
			}
		} else {
			d, err = dense(w, false)
			if i+1 < len(nodes) && nodes[i+1].op == "Add" && len(nodes[i+1].inputs) == 2 && len(nodes[i+1].outputs) == 1 {
				add := nodes[i+1]
				switch out {
				case add.inputs[0]:
					biasName = add.inputs[1]
				case add.inputs[1]:
					biasName = add.inputs[0]
				}
				if biasName != "" {
					out = add.outputs[0]
					i++
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: node %d: %v", ErrModel, i, err)
		}
		d.B = make([]float32, d.Out)
		if biasName != "" {
			b := tensors[biasName]
			if b == nil || len(b.vals) != d.Out || (len(b.dims) != 1 && !(len(b.dims) == 2 && b.dims[0] == 1)) {
				return nil, fmt.Errorf("%w: node %d: bias %q is not a float initializer of [%d]", ErrModel, i, biasName, d.Out)
			}
			copy(d.B, b.vals)
		}
		if len(m.Layers) > 0 && m.Layers[len(m.Layers)-1].Out != d.In {
			return nil, fmt.Errorf("%w: node %d: layer takes %d values, the previous gives %d", ErrModel, i, d.In, m.Layers[len(m.Layers)-1].Out)
		}
		m.Layers = append(m.Layers, d)
		relu, cur = false, out
	}
	if len(m.Layers) == 0 || relu || cur != m.Output {
		return nil, fmt.Errorf("%w: the graph must end with a dense layer whose output is the graph output %q", ErrModel, m.Output)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// check enforces the limits and finite weights.
func (m *Model) check() error {
	if len(m.Layers) == 0 || len(m.Layers) > MaxLayers {
		return fmt.Errorf("%w: %d dense layers (1 to %d supported)", ErrModel, len(m.Layers), MaxLayers)
	}
	params := 0
	for li, l := range m.Layers {
		if l.In < 1 || l.Out < 1 || l.In > MaxWidth || l.Out > MaxWidth {
			return fmt.Errorf("%w: layer %d is %dx%d (widths 1 to %d supported)", ErrModel, li, l.In, l.Out, MaxWidth)
		}
		if len(l.W) != l.In*l.Out || len(l.B) != l.Out {
			return fmt.Errorf("%w: layer %d has %d weights and %d biases for %dx%d", ErrModel, li, len(l.W), len(l.B), l.In, l.Out)
		}
		params += len(l.W) + len(l.B)
		for _, v := range append(l.W[:len(l.W):len(l.W)], l.B...) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("%w: layer %d has a non-finite weight", ErrModel, li)
			}
		}
	}
	if params > MaxParams {
		return fmt.Errorf("%w: %d parameters (at most %d)", ErrModel, params, MaxParams)
	}
	if m.Layers[len(m.Layers)-1].Out < 2 {
		return fmt.Errorf("%w: the last layer has %d output; a classifier needs at least 2", ErrModel, m.Layers[len(m.Layers)-1].Out)
	}
	return nil
}

// dense builds a layer from a 2-D weight: [out, in] when transposed
// (Gemm transB=1, torch's Linear.weight), else [in, out].
func dense(w *onnxTensor, transposed bool) (Dense, error) {
	r, c := int(w.dims[0]), int(w.dims[1])
	if r < 1 || c < 1 || r > MaxWidth || c > MaxWidth || len(w.vals) != r*c {
		return Dense{}, fmt.Errorf("weight of shape %v with %d values", w.dims, len(w.vals))
	}
	if transposed {
		return Dense{In: c, Out: r, W: append([]float32(nil), w.vals...)}, nil
	}
	d := Dense{In: r, Out: c, W: make([]float32, r*c)}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d.W[j*r+i] = w.vals[i*c+j]
		}
	}
	return d, nil
}

func readNode(b []byte) (onnxNode, error) {
	n := onnxNode{ints: map[string]int64{}, floats: map[string]float32{}}
	err := pbwire.Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			n.inputs = append(n.inputs, string(v))
		case 2:
			n.outputs = append(n.outputs, string(v))
		case 4:
			n.op = string(v)
		case 7:
			if d := string(v); d != "" && d != "ai.onnx" {
				return fmt.Errorf("operator domain %q", d)
			}
		case 5:
			var name string
			var i int64
			var f float32
			var hasI, hasF bool
			err := pbwire.Walk(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					name = string(v)
				case num == 2 && typ == protowire.Fixed32Type:
					f, hasF = math.Float32frombits(uint32(x)), true
				case num == 3 && typ == protowire.VarintType:
					i, hasI = int64(x), true
				}
				return nil
			})
			if err != nil {
				return err
			}
			if hasI {
				n.ints[name] = i
			}
			if hasF {
				n.floats[name] = f
			}
		}
		return nil
	})
	return n, err
}

// maxTensorValues bounds the values of one initializer.
const maxTensorValues = MaxParams

func readTensor(b []byte) (string, *onnxTensor, error) {
	t := &onnxTensor{}
	var name string
	var raw []byte
	var dtype uint64
	var external bool
	var floats []float32
	err := pbwire.Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			return pbwire.Repeated(typ, v, x, protowire.VarintType, func(x uint64) { t.dims = append(t.dims, int64(x)) })
		case 2:
			dtype = x
		case 8:
			name = string(v)
		case 9:
			raw = v
		case 14:
			external = x == 1
		case 4:
			return pbwire.Repeated(typ, v, x, protowire.Fixed32Type, func(x uint64) {
				if len(floats) <= maxTensorValues {
					floats = append(floats, math.Float32frombits(uint32(x)))
				}
			})
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if external {
		return "", nil, fmt.Errorf("initializer %q: external data is not supported", name)
	}
	if dtype != 1 { // FLOAT
		return name, &onnxTensor{dims: t.dims}, nil // not usable as a weight; reported where used
	}
	count := int64(1)
	for _, d := range t.dims {
		if d < 0 || d > maxTensorValues {
			return "", nil, fmt.Errorf("initializer %q: dims %v", name, t.dims)
		}
		count *= d
		if count > maxTensorValues {
			return "", nil, fmt.Errorf("initializer %q: more than %d values", name, maxTensorValues)
		}
	}
	switch {
	case raw != nil:
		if int64(len(raw)) != 4*count {
			return "", nil, fmt.Errorf("initializer %q: %d raw bytes for %d floats", name, len(raw), count)
		}
		t.vals = make([]float32, count)
		for i := range t.vals {
			t.vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	default:
		if int64(len(floats)) != count {
			return "", nil, fmt.Errorf("initializer %q: %d float_data values for %d elements", name, len(floats), count)
		}
		t.vals = floats
	}
	return name, t, nil
}

func valueInfoName(b []byte) (string, error) {
	var name string
	err := pbwire.Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num == 1 && typ == protowire.BytesType {
			name = string(v)
		}
		return nil
	})
	return name, err
}
