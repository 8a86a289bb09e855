//go:build cgo

package trace_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// BenchmarkTracingOverhead measures the latency of untraced inference (the
// baseline) and of tracing the same model and input: production and full
// mode with the statistics taken in Go on one goroutine, on two, and
// inside the graph, and the inference alone with the traced values
// exposed (what ONNX Runtime's side costs), residual mode both ways, and
// production, residual and full mode through Tracer.Start (-async: timed until the output is available, see
// asyncRound). All run in one loop, in a shuffled order each round, so
// that machine noise hits all alike; it reports each one's median latency
// and the median over rounds of its added latency in percent against the
// same round's untraced run, and likewise of its CPU time (-cpu: the
// process's, all threads, until the trace is complete) and, for the async
// variants, of the time until the trace is complete (-complete).
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
				// Asynchronous (Tracer.Start): timed until the output is
				// available; see asyncRound.
				{trace.Production, false, 0, false, "ms/production-async"},
				{trace.Full, false, 0, false, "ms/full-async"},
				{trace.Residual, false, 0, false, "ms/residual"},
				{trace.Residual, false, 0, true, "ms/residual-runonly"},
				{trace.Residual, false, 0, false, "ms/residual-async"},
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
			// cpu[i][n]: the process's CPU time (all threads: ONNX
			// Runtime's, the caller's, Start's goroutine) from variant i's
			// start in round n until its trace is complete; done[i][n]: the
			// wall time until the trace is complete (async variants).
			cpu := make([][]time.Duration, len(variants))
			done := make([][]time.Duration, len(variants))
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
					cpu0 := cpuTime()
					start := time.Now()
					var err error
					if isAsync(variants[i].metric) {
						var total time.Duration
						total, err = asyncRound(t, m, text, start, &rounds[i])
						done[i] = append(done[i], total)
					} else if variants[i].runOnly {
						err = t.RunOutputs(text)
					} else {
						_, err = t.Trace(text)
					}
					if !isAsync(variants[i].metric) {
						rounds[i] = append(rounds[i], time.Since(start))
					}
					cpu[i] = append(cpu[i], cpuTime()-cpu0)
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
					for n := range b.N {
						ratio[n] = float64(cpu[i][n]) / float64(cpu[0][n])
					}
					b.ReportMetric(100*(median(ratio)-1), "%"+strings.TrimPrefix(v.metric, "ms/")+"-cpu")
				}
				if isAsync(v.metric) {
					for n := range b.N {
						ratio[n] = float64(done[i][n]) / float64(rounds[0][n])
					}
					b.ReportMetric(100*(median(ratio)-1), "%"+strings.TrimPrefix(v.metric, "ms/")+"-complete")
				}
			}
		})
	}
}

// isAsync says whether a BenchmarkTracingOverhead variant traces with
// Tracer.Start (its metric name ends in -async).
func isAsync(metric string) bool { return strings.HasSuffix(metric, "-async") }

// asyncRound is one round of an asynchronous variant: it tokenizes text,
// calls Start and reads the probabilities (what a host application waits
// for before it acts on the output), and appends the time from start to
// then to *latency: the latency the benchmark compares with the untraced
// run. Then, untimed for that figure, it waits for the trace to complete
// and returns the time from start to then, so that the statistics of one
// variant never run during another's measurement (on a busy server they
// would overlap the next inference and compete for its cores: the CPU
// metric, not the latency, says what they cost).
func asyncRound(t *trace.Tracer, m *trace.Model, text []byte, start time.Time, latency *[]time.Duration) (time.Duration, error) {
	p, err := t.Start(m.Encode(text), text)
	if err != nil {
		return 0, err
	}
	if len(p.Probabilities()) == 0 {
		return 0, fmt.Errorf("no probabilities")
	}
	*latency = append(*latency, time.Since(start))
	_, err = p.Wait()
	return time.Since(start), err
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
