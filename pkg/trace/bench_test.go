//go:build cgo

package trace_test

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/modelgen"
	"github.com/svc-gov/svc/pkg/trace"
)

// BenchmarkTracingOverhead measures the latency of untraced inference (the
// baseline) and of tracing the same model and input: production and full
// mode with the statistics taken in Go on one goroutine, on two, and
// inside the graph, and the inference alone with the traced values
// exposed (what ONNX Runtime's side costs), and residual mode both ways.
// All run in one loop, in a shuffled order each round, so that machine
// noise hits all alike; it
// reports each one's median latency and the median over rounds of its
// added latency in percent against the same round's untraced run.
// SVC_BENCH_LARGE=1 adds a DistilBERT-size model (6 layers, hidden 768, 12
// heads) on a 128-token input (an 89 MB model, generated on the fly).
func BenchmarkTracingOverhead(b *testing.B) {
	short := "my name is jane roe and my ssn is 078-05-1120, please call me back tomorrow"
	configs := []struct {
		name string
		cfg  modelgen.Config
		text string
	}{
		{"tiny-L2-H64-S32", modelgen.Config{}, short},
		{"torch-L2-H64", modelgen.Config{Style: modelgen.StyleTorch}, short},
		{"torch-L4-H256", modelgen.Config{Style: modelgen.StyleTorch, Layers: 4, Hidden: 256, Heads: 4, SeqLen: 128}, short},
		{"L4-H256-S128", modelgen.Config{Layers: 4, Hidden: 256, Heads: 4, SeqLen: 128}, short},
	}
	if os.Getenv("SVC_BENCH_LARGE") == "1" {
		configs = append(configs, struct {
			name string
			cfg  modelgen.Config
			text string
		}{"torch-L6-H768-T128", modelgen.Config{Style: modelgen.StyleTorch, Layers: 6, Hidden: 768, Heads: 12, SeqLen: 128}, strings.Repeat(short+" ", 8)})
	}
	for _, c := range configs {
		b.Run(c.name, func(b *testing.B) {
			m, _ := ortest.Model(b, c.cfg)
			text := []byte(c.text)
			variants := []struct {
				mode    string
				inGraph bool // the statistics computed inside the graph
				workers int  // TracerOptions.StatsWorkers
				runOnly bool // only the inference, nothing computed from the outputs
				metric  string
			}{
				{"", false, 0, false, "ms/untraced"},
				{trace.Production, false, 0, false, "ms/production"},
				{trace.Full, false, 0, false, "ms/full"},
				{trace.Production, false, 2, false, "ms/production-2workers"},
				{trace.Full, false, 2, false, "ms/full-2workers"},
				{trace.Production, true, 0, false, "ms/production-ingraph"},
				{trace.Full, true, 0, false, "ms/full-ingraph"},
				{trace.Production, false, 0, true, "ms/production-runonly"},
				{trace.Full, false, 0, true, "ms/full-runonly"},
				{trace.Residual, false, 0, false, "ms/residual"},
				{trace.Residual, false, 0, true, "ms/residual-runonly"},
			}
			tracers := make([]*trace.Tracer, len(variants))
			for i, v := range variants {
				var err error
				if tracers[i], err = trace.NewTracerWith(m, v.mode, inference.Options{Threads: 1}, trace.TracerOptions{InGraph: v.inGraph, StatsWorkers: v.workers}); err != nil {
					b.Fatal(err)
				}
				defer tracers[i].Close()
				tracers[i].Trace(text) // warm up: the first run allocates the outputs
			}
			// rounds[i][n]: variant i's latency in round n. The overhead
			// reported is the median over rounds of the ratio to the
			// untraced run of the same round, robust to bursts of load
			// from other processes that a ratio of totals is not.
			rounds := make([][]time.Duration, len(variants))
			b.ResetTimer()
			// The order changes every round (a fixed seed): a variant run
			// after full mode finds the caches evicted, and a fixed order
			// would charge that to the same variant every time.
			rng := rand.New(rand.NewPCG(1, 1))
			for n := 0; n < b.N; n++ {
				for _, i := range rng.Perm(len(tracers)) {
					t := tracers[i]
					start := time.Now()
					var err error
					if variants[i].runOnly {
						err = t.RunOutputs(text)
					} else {
						_, err = t.Trace(text)
					}
					rounds[i] = append(rounds[i], time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			for i, v := range variants {
				ms := make([]float64, b.N)
				ratio := make([]float64, b.N)
				for n := range b.N {
					ms[n] = float64(rounds[i][n].Microseconds()) / 1000
					ratio[n] = float64(rounds[i][n]) / float64(rounds[0][n])
				}
				b.ReportMetric(median(ms), v.metric)
				if i > 0 {
					b.ReportMetric(100*(median(ratio)-1), "%"+strings.TrimPrefix(v.metric, "ms/")+"-overhead")
				}
			}
		})
	}
}

// median returns the median of v (sorting it).
func median(v []float64) float64 {
	slices.Sort(v)
	if len(v) == 0 {
		return math.NaN()
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
