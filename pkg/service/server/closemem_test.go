package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// TestCloseMemory measures the close of a large run (SVC_BENCH_CLOSE_MB
// megabytes of records of about 15 KB, stored directly): the process's
// peak RSS (VmHWM, reset just before the close) and the close's wall
// time. Skipped without the variable. docs/BENCHMARKS.md has the numbers.
func TestCloseMemory(t *testing.T) {
	mb, _ := strconv.Atoi(os.Getenv("SVC_BENCH_CLOSE_MB"))
	if mb <= 0 {
		t.Skip("SVC_BENCH_CLOSE_MB not set")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newStressEnv(t, []store.Store{st})
	var run api.Run
	code, body, err := e.post(e.urls[0], "/api/v1/runs", api.OpenRunRequest{WorkflowID: "big"}, nil)
	if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("open: %d %s %v", code, body, err)
	}
	pad := strings.Repeat("x", 15000)
	n := mb << 20 / 15400
	prev := vpec.Genesis(run.RunID)
	var total int64
	jobs := make(chan store.Record, 64)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for r := range jobs {
				if err := appendRaw(ctx, st, run.OrgID, r); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		rec := chain(run.RunID, 1)[0]
		rec.Sequence = int64(i + 1)
		rec.Details = map[string]any{"blob": pad}
		recs := []vpec.Record{rec}
		if prev, err = issue.Chain(prev, recs); err != nil {
			t.Fatal(err)
		}
		b, err := canonical.Marshal(recs[0])
		if err != nil {
			t.Fatal(err)
		}
		total += int64(len(b))
		jobs <- store.Record{RunID: run.RunID, RecordID: rec.RecordID, Sequence: rec.Sequence, ChainHash: recs[0].ChainHash, Body: b}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset the peak RSS: %v", err)
	}
	before := vmHWM(t)
	var heapPeak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			heapPeak = max(heapPeak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	req, _ := http.NewRequest("POST", e.urls[0]+"/api/v1/runs/"+run.RunID+"/close", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	nb, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != 200 {
		t.Fatalf("close: %d", resp.StatusCode)
	}
	peak := vmHWM(t)
	close(stop)
	<-sampled
	t.Logf("close of %d records, %.1f MB of records: VPEC %.1f MB in %v; peak RSS %.0f MB (%.0f MB before the close), %.1fx the VPEC; peak Go heap in use %.0f MB (%.1fx)",
		n, float64(total)/1e6, float64(nb)/1e6, took.Round(time.Millisecond), float64(peak)/1e6, float64(before)/1e6, float64(peak)/float64(nb),
		float64(heapPeak)/1e6, float64(heapPeak)/float64(nb))
}

// vmHWM is the process's peak resident set size in bytes.
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
