package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// BenchmarkIngestObservability measures the cost of the metrics, spans
// (no-op provider, as svc serve runs without --otel-endpoint) and store
// wrappers on record ingest: each iteration appends one record through
// pkg/client to a server without them and one to a server with them,
// alternately, so both see the same machine load. It reports the time
// per record of each and their ratio (docs/BENCHMARKS.md).
func BenchmarkIngestObservability(b *testing.B) {
	ctx := context.Background()
	manifest := "sha256:" + fmt.Sprintf("%064x", 1)
	type side struct {
		p       *client.Pipeline
		run     *client.Run
		records int
		took    time.Duration
	}
	open := func(s *side) {
		var err error
		if s.run, err = s.p.Open(ctx, ""); err != nil {
			b.Fatal(err)
		}
		s.records = 0
	}
	off := &side{p: svctest.New(b, nil, server.Uninstrumented).Pipeline(b)}
	on := &side{p: svctest.New(b, nil).Pipeline(b)}
	input := []byte("claim 4411")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range []*side{off, on} {
			if s.run == nil || s.records == 1000 {
				b.StopTimer()
				open(s)
				b.StartTimer()
			}
			start := time.Now()
			if _, err := s.run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, input); err != nil {
				b.Fatal(err)
			}
			s.took += time.Since(start)
			s.records++
		}
	}
	b.ReportMetric(float64(off.took.Nanoseconds())/float64(b.N), "ns/record-off")
	b.ReportMetric(float64(on.took.Nanoseconds())/float64(b.N), "ns/record-on")
	b.ReportMetric(float64(on.took)/float64(off.took), "on/off")
}
