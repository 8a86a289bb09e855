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
	"github.com/svc-gov/svc/internal/witnesstest"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
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

// benchLog opens an empty log of the backend ("posix" or "mysql"; the
// latter needs SVC_TEST_MARIADB_DSN) with the checkpoint interval.
func benchLog(b *testing.B, backend string, interval time.Duration) *logwriter.Log {
	if backend == "mysql" {
		db, _ := tlogtest.MariaDB(b)
		return tlogtest.OpenLog(b, "", "log", func(c *logwriter.Config) {
			c.DB, c.CheckpointInterval = db, max(interval, logwriter.MinCheckpointIntervalMySQL)
		})
	}
	return tlogtest.OpenLog(b, b.TempDir(), "log", func(c *logwriter.Config) { c.CheckpointInterval = interval })
}

// BenchmarkAppend measures Append until the durable index returns, on
// each backend: one caller at a time (the latency a close pays) and 16
// and 256 concurrent callers (the throughput, entries/s).
func BenchmarkAppend(b *testing.B) {
	for _, backend := range []string{"posix", "mysql"} {
		for _, callers := range []int{1, 16, 256} {
			b.Run(fmt.Sprintf("%s/callers=%d", backend, callers), func(b *testing.B) { benchAppend(b, backend, callers) })
		}
	}
}

func benchAppend(b *testing.B, backend string, callers int) {
	l := benchLog(b, backend, time.Second)
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
}

// BenchmarkTimeToReceipt measures from Append to a receipt (AwaitReceipt)
// at the POSIX backend's minimum checkpoint interval and at the default
// (the MySQL backend's minimum), and to a witnessed receipt with a real
// witness (omniwitness) on loopback, with 8 callers each appending and
// waiting; it reports the median and 99th percentile.
func BenchmarkTimeToReceipt(b *testing.B) {
	for _, c := range []struct {
		backend  string
		interval time.Duration
		witness  bool
	}{{"posix", logwriter.MinCheckpointInterval, false}, {"posix", time.Second, false}, {"mysql", time.Second, false},
		{"posix", logwriter.MinCheckpointInterval, true}} {
		name := c.backend + "/interval=" + c.interval.String()
		if c.witness {
			name += "/witnessed"
		}
		b.Run(name, func(b *testing.B) {
			var l *logwriter.Log
			if c.witness {
				w := witnesstest.Start(b, "witness.test/bench", witnesstest.Log{Origin: tlogtest.Origin, VKey: tlogtest.LogKey(b, "log").String()})
				policy := tlogtest.Policy(b, w.PolicyLine("w")+"quorum w\n")
				l = tlogtest.OpenLog(b, b.TempDir(), "log", func(cfg *logwriter.Config) {
					cfg.CheckpointInterval, cfg.WitnessPolicy = c.interval, policy
				})
			} else {
				l = benchLog(b, c.backend, c.interval)
			}
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
							var r *logwriter.Receipt
							if r, err = l.AwaitReceipt(ctx, a.Index); err == nil && c.witness && !r.Witnessed {
								err = r.WitnessErr
							}
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
