//go:build cgo

package inference_test

import (
	"errors"
	"os"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
)

// TestRealInference loads the pinned ONNX Runtime and runs a model written
// by pkg/ml/onnxmodel: Y = LayerNormalization(X·W + B) with known weights.
// make test installs the runtime first (scripts/install-ort.sh); without it
// the test fails unless SVC_SKIP_ORT=1 says the machine cannot have it.
func TestRealInference(t *testing.T) {
	path, err := inference.LibraryPath("")
	if err != nil {
		if os.Getenv("SVC_SKIP_ORT") == "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if err := inference.Init(path); err != nil {
		if errors.Is(err, inference.ErrNoRuntime) && os.Getenv("SVC_SKIP_ORT") == "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if v := inference.Version(); v != inference.RuntimeVersion {
		t.Fatalf("loaded ONNX Runtime %q, pinned %q", v, inference.RuntimeVersion)
	}
	axis := int64(-1)
	eps := float32(1e-5)
	m := &onnxmodel.Model{
		Name: "tiny",
		Nodes: []onnxmodel.Node{
			{Name: "linear", OpType: "MatMul", Inputs: []string{"X", "W"}, Outputs: []string{"XW"}},
			{Name: "bias", OpType: "Add", Inputs: []string{"XW", "B"}, Outputs: []string{"H"}},
			{Name: "norm", OpType: "LayerNormalization", Inputs: []string{"H", "gamma", "beta"}, Outputs: []string{"Y"},
				Attrs: []onnxmodel.Attr{{Name: "axis", Int: &axis}, {Name: "epsilon", Float: &eps}}},
		},
		Inputs:  []onnxmodel.ValueInfo{{Name: "X", ElemType: onnxmodel.Float, Shape: []int64{1, 2}}},
		Outputs: []onnxmodel.ValueInfo{{Name: "Y", ElemType: onnxmodel.Float, Shape: []int64{1, 2}}},
		Initializers: []onnxmodel.Tensor{
			{Name: "W", Dims: []int64{2, 2}, Floats: []float32{1, 2, 3, 4}},
			{Name: "B", Dims: []int64{2}, Floats: []float32{0.5, -0.5}},
			{Name: "gamma", Dims: []int64{2}, Floats: []float32{1, 1}},
			{Name: "beta", Dims: []int64{2}, Floats: []float32{0, 0}},
		},
	}
	out, err := inference.RunFloat(m.Marshal(), "X", []int64{1, 2}, []float32{1, 1}, "Y", []int64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	// X·W + B = [4.5, 5.5]; normalised over the last axis: [-1, 1] (to epsilon).
	if len(out) != 2 || out[0] > -0.999 || out[0] < -1.001 || out[1] < 0.999 || out[1] > 1.001 {
		t.Fatalf("Y = %v, want about [-1 1]", out)
	}
}
