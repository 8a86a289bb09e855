//go:build cgo

package trace_test

import (
	"math"
	"testing"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// TestInGraphStats: statistics computed inside the graph (float64
// ReduceMean nodes appended to the model) are the trace's statistics:
// the same operators, and mean and RMS equal to the Go reduction of the
// returned tensors to float64 rounding, on both styles, both modes and
// both executions.
func TestInGraphStats(t *testing.T) {
	inputs := [][]byte{[]byte("a"), []byte("please call jane doe at 555 0100, her ssn is 078-05-1120")}
	for _, style := range modelgen.Styles() {
		m, _ := ortest.Model(t, modelgen.Config{Style: style})
		for _, mode := range []string{trace.Production, trace.Full} {
			for _, exec := range []inference.Options{{}, {Reference: true}} {
				goStats, err := trace.NewTracer(m, mode, exec)
				if err != nil {
					t.Fatal(err)
				}
				inGraph, err := trace.NewTracerWith(m, mode, exec, trace.TracerOptions{InGraph: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, in := range inputs {
					a, err := goStats.Trace(in)
					if err != nil {
						t.Fatal(err)
					}
					b, err := inGraph.Trace(in)
					if err != nil {
						t.Fatal(err)
					}
					if len(a.Operators) != len(b.Operators) || len(a.Output) != len(b.Output) {
						t.Fatalf("%s %s: %d/%d operators, %d/%d outputs", style, mode, len(a.Operators), len(b.Operators), len(a.Output), len(b.Output))
					}
					for i, o := range a.Operators {
						p := b.Operators[i]
						tol := 1e-12 * math.Max(o.RMS, 1e-30)
						if o.Node != p.Node || math.Abs(o.Mean-p.Mean) > tol || math.Abs(o.RMS-p.RMS) > tol {
							t.Fatalf("%s %s reference=%v: operator %d: Go %+v, in-graph %+v", style, mode, exec.Reference, i, o, p)
						}
					}
					for i := range a.Output {
						if a.Output[i] != b.Output[i] {
							t.Fatalf("%s %s: output %v vs %v", style, mode, a.Output, b.Output)
						}
					}
				}
				goStats.Close()
				inGraph.Close()
			}
		}
	}
}
