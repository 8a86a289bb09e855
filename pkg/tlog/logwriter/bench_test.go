package logwriter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/tlog"
	"github.com/svc-gov/svc/pkg/tlog/logwriter"
)

// benchLeaves returns n distinct leaves.
func benchLeaves(b *testing.B, prefix string, n int) []tlog.Leaf {
	b.Helper()
	key := tlogtest.OrgKey(b, "org-a")
	out := make([]tlog.Leaf, n)
	for i := range out {
		l, err := tlog.NewLeaf(key, tlogtest.Entry(prefix, i, "org-a", "wf", true))
		if err != nil {
			b.Fatal(err)
		}
		out[i] = l
	}
	return out
}

// BenchmarkDurableWrite is the baseline the append figures are quoted
// against: one durable small-file write as Tessera's POSIX backend does
// it (a 400-byte file written with O_SYNC, renamed into place, its
// directory synced).
func BenchmarkDurableWrite(b *testing.B) {
	dir := b.TempDir()
	data := make([]byte, 400)
	for i := 0; b.Loop(); i++ {
		tmp := filepath.Join(dir, fmt.Sprintf("tmp%d", i))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_SYNC, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
		f.Close()
		if err := os.Rename(tmp, filepath.Join(dir, "file")); err != nil {
			b.Fatal(err)
		}
		d, err := os.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

// BenchmarkAppend measures Append until the durable index returns: one
// caller at a time (the latency a close pays) and 64 concurrent callers
// (the throughput, entries/s).
func BenchmarkAppend(b *testing.B) {
	for _, callers := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			l := tlogtest.OpenLog(b, b.TempDir(), "log", func(c *logwriter.Config) { c.CheckpointInterval = time.Second })
			leaves := benchLeaves(b, "b", b.N+1)
			var next atomic.Int64
			ctx := context.Background()
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						if _, err := l.Append(ctx, leaves[i]); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
		})
	}
}

// BenchmarkTimeToReceipt measures from Append to a receipt (AwaitReceipt)
// at the minimum checkpoint interval and at the default, with 8 callers
// each appending and waiting; it reports the median and 99th percentile.
func BenchmarkTimeToReceipt(b *testing.B) {
	for _, interval := range []time.Duration{logwriter.MinCheckpointInterval, logwriter.DefaultCheckpointInterval} {
		b.Run("interval="+interval.String(), func(b *testing.B) {
			l := tlogtest.OpenLog(b, b.TempDir(), "log", func(c *logwriter.Config) { c.CheckpointInterval = interval })
			leaves := benchLeaves(b, "r", b.N+1)
			var next atomic.Int64
			var mu sync.Mutex
			var took []time.Duration
			ctx := context.Background()
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						start := time.Now()
						a, err := l.Append(ctx, leaves[i])
						if err == nil {
							_, err = l.AwaitReceipt(ctx, a.Index)
						}
						if err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						took = append(took, time.Since(start))
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			slices.Sort(took)
			if len(took) > 0 {
				b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
				b.ReportMetric(float64(took[len(took)*99/100].Milliseconds()), "p99-ms")
			}
		})
	}
}
