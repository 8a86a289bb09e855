//go:build cgo

package trace_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// TestSessionAll: Session.All passes every output at once, in the
// session's order, on preallocated outputs, with the same data Each passed
// one at a time on the first run at that length (outputs ONNX Runtime
// allocated); an error from its function is returned as is.
func TestSessionAll(t *testing.T) {
	path, err := inference.LibraryPath("")
	if err != nil {
		t.Skip(err)
	}
	if err := inference.Init(path); err != nil {
		t.Skip(err)
	}
	model := torchBERT(bertVariants[0].opts).marshal()
	g := mustRead(t, model)
	var names []string
	for i, n := range g.Nodes {
		if g.Traceable(i) {
			names = append(names, n.Outputs[0])
		}
	}
	s, err := inference.NewSession(trace.WithOutputs(model, g, names), []string{"input_ids", "attention_mask"}, names, inference.Options{Reference: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := [][]int64{{3, 5, 7, 1, 0, 0}, {1, 1, 1, 1, 0, 0}}
	each := map[string][]float32{}
	if err := s.Each(in, func(name string, data []float32) { each[name] = slices.Clone(data) }); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		err := s.All(in, func(outs []inference.Output) error {
			if len(outs) != len(names) {
				t.Fatalf("run %d: %d outputs, want %d", run, len(outs), len(names))
			}
			for i, o := range outs {
				if o.Name != names[i] || o.F64 != nil || !slices.Equal(o.F32, each[o.Name]) {
					t.Fatalf("run %d: output %d %s (%d values) differs from Each's %s", run, i, o.Name, len(o.F32), names[i])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("stop")
	if err := s.All(in, func([]inference.Output) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("All returned %v, want the function's error", err)
	}
}
