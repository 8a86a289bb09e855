package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/postgres"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// BenchmarkClose10k times the close of a 10,000-record run on SQLite and
// (with SVC_TEST_POSTGRES_DSN) PostgreSQL, the records stored directly,
// untimed; ms/close is the whole request. Run it with -cpuprofile to see
// where a close goes (docs/BENCHMARKS.md).
func BenchmarkClose10k(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "svc.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		benchClose(b, st, 10000)
	})
	b.Run("postgres", func(b *testing.B) {
		st, err := postgres.Open(context.Background(), pgtest.New(b, "bench_close_").DSN)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		benchClose(b, st, 10000)
	})
}

func benchClose(b *testing.B, st store.Store, n int) {
	ctx := context.Background()
	e := newStressEnv(b, []store.Store{st})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		var run api.Run
		code, body, err := e.post(e.urls[0], "/api/v1/runs", api.OpenRunRequest{WorkflowID: "bench"}, nil)
		if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
			b.Fatalf("open: %d %s %v", code, body, err)
		}
		recs := chain(run.RunID, n)
		if _, err := issue.Chain(vpec.Genesis(run.RunID), recs); err != nil {
			b.Fatal(err)
		}
		// Stored by 8 writers at once (the store's group commit), in any
		// order: the run holds them by sequence.
		jobs := make(chan vpec.Record)
		errs := make(chan error, 8)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for rec := range jobs {
					body, err := canonical.Marshal(rec)
					if err == nil {
						err = appendRaw(ctx, st, run.OrgID, store.Record{RunID: run.RunID, RecordID: rec.RecordID, Sequence: rec.Sequence, ChainHash: rec.ChainHash, Body: body})
					}
					if err != nil {
						select {
						case errs <- err:
						default:
						}
					}
				}
			})
		}
		for _, rec := range recs {
			jobs <- rec
		}
		close(jobs)
		wg.Wait()
		select {
		case err := <-errs:
			b.Fatal(err)
		default:
		}
		b.StartTimer()
		req, _ := http.NewRequest("POST", e.urls[0]+"/api/v1/runs/"+run.RunID+"/close", nil)
		req.Header.Set("Authorization", "Bearer "+e.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("close: %d", resp.StatusCode)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/close")
}
