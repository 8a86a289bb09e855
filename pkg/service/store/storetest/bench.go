package storetest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// BenchAppendRecord measures AppendRecord of ~600-byte records one after
// another to one run, each a durable transaction, on a fresh, empty store.
// It reports records/s.
func BenchAppendRecord(b *testing.B, s store.Store) {
	ctx := context.Background()
	if err := s.CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: T0}); err != nil {
		b.Fatal(err)
	}
	if err := s.CreateRun(ctx, store.Run{ID: "run_1", OrgID: "org_a", OpenedAt: T0}); err != nil {
		b.Fatal(err)
	}
	recs := make([]store.Record, b.N)
	for i := range recs {
		recs[i] = MakeRecord("run_1", int64(i), fmt.Sprintf("rec-%08d", i), 600)
	}
	b.SetBytes(int64(len(recs[0].Body)))
	b.ResetTimer()
	for i := range recs {
		if _, err := s.AppendRecord(ctx, "org_a", recs[i], store.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchAppendRecordParallel measures AppendRecord under concurrency, as an
// HTTP server sees it: parallelism×GOMAXPROCS goroutines (b.SetParallelism)
// each append ~600-byte records one after another to a run of its own. s
// must be a fresh, empty store. It reports records/s and the p50, p99 and
// maximum latency of one AppendRecord in milliseconds.
func BenchAppendRecordParallel(b *testing.B, s store.Store, parallelism int) {
	ctx := context.Background()
	org := store.Org{ID: "org_bench", Name: "bench", Tier: "standard", CreatedAt: T0}
	if err := s.CreateOrg(ctx, org); err != nil {
		b.Fatal(err)
	}
	goroutines := parallelism * runtime.GOMAXPROCS(0)
	for i := range goroutines {
		if err := s.CreateRun(ctx, newRun(org.ID, "pk_bench", fmt.Sprintf("run_bench_%d", i))); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int32
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(parallelism)
	b.SetBytes(int64(len(MakeRecord("run_bench_0", 0, "rec-00000000", 600).Body)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := int(next.Add(1)) - 1
		if g >= goroutines {
			b.Errorf("goroutine %d of %d: more goroutines than runs", g, goroutines)
			return
		}
		run := fmt.Sprintf("run_bench_%d", g)
		var mine []time.Duration
		for seq := int64(0); pb.Next(); seq++ {
			rec := MakeRecord(run, seq, fmt.Sprintf("rec-%08d", seq), 600)
			start := time.Now()
			if _, err := s.AppendRecord(ctx, org.ID, rec, store.Limits{}); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "records/s")
	if len(lat) > 0 {
		slices.Sort(lat)
		ms := func(q float64) float64 {
			return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
		}
		b.ReportMetric(ms(0.50), "p50-ms")
		b.ReportMetric(ms(0.99), "p99-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	}
}
