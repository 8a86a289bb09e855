//go:build cgo

package trace_test

import (
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/modelgen"
	"github.com/svc-gov/svc/pkg/trace"
)

// BenchmarkTracingOverhead measures, in one interleaved loop so that
// machine noise hits all three alike, the latency of untraced inference
// (the baseline), production-mode tracing and full tracing of the same
// model and input, and reports each and the added latency in percent.
func BenchmarkTracingOverhead(b *testing.B) {
	path, err := inference.LibraryPath("")
	if err != nil {
		b.Skip(err)
	}
	if err := inference.Init(path); err != nil {
		b.Fatal(err)
	}
	configs := []struct {
		name string
		cfg  modelgen.Config
	}{
		{"tiny-L2-H64-S32", modelgen.Config{}},
		{"L4-H256-S128", modelgen.Config{Layers: 4, Hidden: 256, Heads: 4, SeqLen: 128}},
	}
	for _, c := range configs {
		b.Run(c.name, func(b *testing.B) {
			model, vocab, err := modelgen.Generate(c.cfg)
			if err != nil {
				b.Fatal(err)
			}
			seq := c.cfg.WithDefaults().SeqLen
			text := "my name is jane roe and my ssn is 078-05-1120, please call me back tomorrow"
			ids := modelgen.Tokenize(vocab, text, seq)
			modes := []string{"", trace.Production, trace.Full}
			tracers := make([]*trace.Tracer, len(modes))
			for i, m := range modes {
				if tracers[i], err = trace.NewTracer(model, modelgen.InputName, m, 1); err != nil {
					b.Fatal(err)
				}
				defer tracers[i].Close()
				tracers[i].Trace(ids, []byte(text)) // warm up
			}
			total := make([]time.Duration, len(modes))
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				for i, t := range tracers {
					start := time.Now()
					if _, err := t.Trace(ids, []byte(text)); err != nil {
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
		})
	}
}
