//go:build cgo

package trace_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/modelgen"
	"github.com/svc-gov/svc/pkg/trace"
)

// BenchmarkTracingOverhead measures, in one interleaved loop so that
// machine noise hits all five alike (production and full mode with the
// statistics taken in Go and inside the graph), the latency of untraced inference
// (the baseline), production-mode tracing and full tracing of the same
// model and input, and reports each and the added latency in percent.
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
			modes := []string{"", trace.Production, trace.Full, trace.Production, trace.Full}
			tracers := make([]*trace.Tracer, len(modes))
			for i, mode := range modes {
				var err error
				// The last two compute the statistics inside the graph.
				if tracers[i], err = trace.NewTracerWith(m, mode, inference.Options{Threads: 1}, trace.TracerOptions{InGraph: i >= 3}); err != nil {
					b.Fatal(err)
				}
				defer tracers[i].Close()
				tracers[i].Trace(text) // warm up: the first run allocates the outputs
			}
			total := make([]time.Duration, len(modes))
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				for i, t := range tracers {
					start := time.Now()
					if _, err := t.Trace(text); err != nil {
						b.Fatal(err)
					}
					total[i] += time.Since(start)
				}
			}
			per := func(i int) float64 { return float64(total[i].Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(per(0), "ms/untraced")
			b.ReportMetric(per(1), "ms/production")
			b.ReportMetric(per(2), "ms/full")
			b.ReportMetric(100*(per(1)/per(0)-1), "%prod-overhead")
			b.ReportMetric(100*(per(2)/per(0)-1), "%full-overhead")
			b.ReportMetric(100*(per(3)/per(0)-1), "%prod-ingraph-overhead")
			b.ReportMetric(100*(per(4)/per(0)-1), "%full-ingraph-overhead")
		})
	}
}
