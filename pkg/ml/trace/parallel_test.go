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

// TestParallelStatsIdentical: computing the statistics of the traced
// tensors on several goroutines, and two tensors at a time, gives
// bit-identical traces (every mean, RMS, output, the Merkle root) and value
// statistics to computing them on one, one tensor at a time, on both styles, both modes, for 1 to 4 workers (GOMAXPROCS
// permitting).
func TestParallelStatsIdentical(t *testing.T) {
	defer trace.SetParallelMin(0)()
	in := []byte("please call jane doe at 555 0100, her ssn is 078-05-1120")
	for _, style := range modelgen.Styles() {
		m, _ := ortest.Model(t, modelgen.Config{Style: style})
		enc := m.Encode(in)
		for _, mode := range []string{trace.Production, trace.Full} {
			var want *trace.Trace
			var wantDetail map[string]trace.ValueStats
			for _, workers := range []int{1, 2, 3, 4} {
				tr, err := trace.NewTracerWith(m, mode, inference.Options{Threads: 1}, trace.TracerOptions{StatsWorkers: workers})
				if err != nil {
					t.Fatal(err)
				}
				got, err := tr.TraceEncoded(enc, in)
				if err != nil {
					t.Fatal(err)
				}
				viaDetail, detail, err := tr.TraceDetail(enc, in)
				tr.Close()
				if err != nil {
					t.Fatal(err)
				}
				// TraceDetail takes each tensor's statistics alone (Stats),
				// TraceEncoded two tensors at a time (statsPair): the same bits.
				if viaDetail.MerkleRoot != got.MerkleRoot {
					t.Fatalf("%s %s, %d workers: root %s, with value statistics %s", style, mode, workers, got.MerkleRoot, viaDetail.MerkleRoot)
				}
				if want == nil {
					want, wantDetail = got, detail
					continue
				}
				if got.MerkleRoot != want.MerkleRoot || len(got.Operators) != len(want.Operators) || len(got.Output) != len(want.Output) {
					t.Fatalf("%s %s, %d workers: root %s, %d operators; one worker: %s, %d", style, mode, workers, got.MerkleRoot, len(got.Operators), want.MerkleRoot, len(want.Operators))
				}
				for i, o := range got.Operators {
					w := want.Operators[i]
					if math.Float64bits(o.Mean) != math.Float64bits(w.Mean) || math.Float64bits(o.RMS) != math.Float64bits(w.RMS) || o.Node != w.Node {
						t.Fatalf("%s %s, %d workers: operator %d %+v, one worker %+v", style, mode, workers, i, o, w)
					}
				}
				for i, v := range got.Output {
					if math.Float64bits(v) != math.Float64bits(want.Output[i]) {
						t.Fatalf("%s %s, %d workers: output %v, one worker %v", style, mode, workers, got.Output, want.Output)
					}
				}
				if len(detail) != len(wantDetail) || len(detail) < len(got.Operators) {
					t.Fatalf("%s %s, %d workers: %d value statistics, one worker %d, %d operators", style, mode, workers, len(detail), len(wantDetail), len(got.Operators))
				}
				for name, d := range detail {
					if d != wantDetail[name] {
						t.Fatalf("%s %s, %d workers: %s: %+v, one worker %+v", style, mode, workers, name, d, wantDetail[name])
					}
				}
			}
		}
	}
}

// TestTraceRunError: an inference that fails (here inputs of different
// lengths) fails the trace, in both modes and with value statistics, rather
// than returning a trace of nothing.
func TestTraceRunError(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{Style: modelgen.StyleTorch})
	in := []byte("jane doe")
	enc := m.Encode(in)
	enc.AttentionMask = enc.AttentionMask[:len(enc.AttentionMask)-1]
	for _, mode := range []string{trace.Production, trace.Full} {
		tr, err := trace.NewTracer(m, mode, inference.Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tr.TraceEncoded(enc, in); err == nil {
			t.Errorf("%s: a failed inference gave a trace of %d operators and no error", mode, len(got.Operators))
		}
		if _, _, err := tr.TraceDetail(enc, in); err == nil {
			t.Errorf("%s: a failed inference gave value statistics and no error", mode)
		}
		tr.Close()
	}
}
