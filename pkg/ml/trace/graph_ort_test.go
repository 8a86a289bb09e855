//go:build cgo

package trace_test

import (
	"math"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// TestTorchGraphsRun loads the torch-style test graphs in ONNX Runtime
// with every Traceable node's output exposed as a float output: the graphs
// are valid models and the inferred element types are the runtime's (it
// rejects a float output declared on a value of another type).
func TestTorchGraphsRun(t *testing.T) {
	path, err := inference.LibraryPath("")
	if err != nil {
		t.Skip(err)
	}
	if err := inference.Init(path); err != nil {
		t.Skip(err)
	}
	ids := []int64{3, 5, 7, 1, 0, 0}
	mask := []int64{1, 1, 1, 1, 0, 0}
	for _, tc := range bertVariants {
		t.Run(tc.name, func(t *testing.T) {
			model := torchBERT(tc.opts).marshal()
			g := mustRead(t, model)
			var names []string
			for i, n := range g.Nodes {
				if g.Traceable(i) {
					names = append(names, n.Outputs[0])
				}
			}
			for _, ref := range []bool{true, false} {
				s, err := inference.NewSession(trace.WithOutputs(model, g, names), []string{"input_ids", "attention_mask"}, names, inference.Options{Reference: ref})
				if err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				err = s.Each([][]int64{ids, mask}, func(name string, data []float32) {
					seen[name] = true
					for _, v := range data {
						if math.IsNaN(float64(v)) {
							t.Errorf("%s: NaN", name)
							return
						}
					}
				})
				s.Close()
				if err != nil {
					t.Fatal(err)
				}
				if len(seen) != len(names) {
					t.Fatalf("%d of %d outputs", len(seen), len(names))
				}
			}
			// An int64 value exposed as a float output is rejected: the check
			// above has teeth.
			for i, n := range g.Nodes {
				if n.OpType == "Shape" || n.OpType == "Equal" {
					bad := []string{n.Outputs[0]}
					if s, err := inference.NewSession(trace.WithOutputs(model, g, bad), []string{"input_ids", "attention_mask"}, bad, inference.Options{Reference: true}); err == nil {
						s.Close()
						t.Errorf("node %d %s: a non-float value loaded as a float output", i, n.Name)
					}
					break
				}
			}
		})
	}
}
