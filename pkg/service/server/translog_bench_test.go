package server_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// benchService is a server on loopback with or without a log, and a
// production key.
type benchService struct {
	url, key string
	log      *logwriter.Log
	srv      *server.Server
}

// benchLog is the transparency log a benchService runs with.
type benchLog string

const (
	logOff   benchLog = "off"   // no transparency log
	logPOSIX benchLog = "posix" // Tessera's POSIX backend in the data directory (the default)
	logMySQL benchLog = "mysql" // Tessera's MySQL backend on MariaDB ($SVC_TEST_MARIADB_DSN), as --tlog-mysql
)

// newBenchService starts a benchService with svc serve's defaults: a
// checkpoint every second, background appends batched for a quarter of it.
func newBenchService(b *testing.B, backend benchLog) *benchService {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		b.Fatal(err)
	}
	cfg := server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust, SandboxLimit: server.RateLimit{PerSecond: -1}}
	s := &benchService{}
	if backend != logOff {
		_, priv, _ := ed25519.GenerateKey(nil)
		lc := logwriter.Config{Dir: filepath.Join(dir, "log"), Origin: "svc.test/log", Signer: priv, CheckpointInterval: logwriter.DefaultCheckpointInterval}
		if backend == logMySQL {
			db, _ := tlogtest.MariaDB(b)
			lc.Dir, lc.DB = "", db
		}
		l, err := logwriter.Open(ctx, lc)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = l.Close(ctx) })
		cfg.Log = &server.TransparencyLog{Log: l, Secret: make([]byte, 32), Store: st, ReceiptRetryAfter: lc.CheckpointInterval, BatchWindow: lc.CheckpointInterval / 4}
		s.log = l
	}
	srv, err := server.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	s.srv = srv
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	if _, err := server.CreateOrg(ctx, st, "bench", server.TierStandard, time.Now()); err != nil {
		b.Fatal(err)
	}
	if s.key, _, err = server.CreateAPIKey(ctx, st, "bench", vpec.Production, time.Now()); err != nil {
		b.Fatal(err)
	}
	s.url = hs.URL
	return s
}

func (s *benchService) call(b *testing.B, method, path string, body any) ([]byte, http.Header) {
	var r io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, s.url+path, r)
	req.Header.Set("Authorization", "Bearer "+s.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Error(err)
		return nil, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		b.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return data, resp.Header
}

// openWithRecords opens a run and records n records into it.
func (s *benchService) openWithRecords(b *testing.B, n int) string {
	data, _ := s.call(b, "POST", "/api/v1/runs", api.OpenRunRequest{WorkflowID: "bench"})
	var run api.Run
	_ = json.Unmarshal(data, &run)
	for _, rec := range chain(run.RunID, n) {
		s.call(b, "POST", "/api/v1/runs/"+run.RunID+"/records", rec)
	}
	return run.RunID
}

// BenchmarkClose measures a close of a 10-record run with the
// transparency log off, on its POSIX backend and on its MySQL backend
// (MariaDB at $SVC_TEST_MARIADB_DSN; skipped without it), each with the
// default close (answered once the VPEC is stored, the leaf appended in
// the background) and with ?wait=log-index (answered once the leaf is in
// the log), all with svc serve's defaults (a checkpoint a second), in the
// same run: sequential (ns/op is the close's latency; the records are not
// timed) and from 8 clients at once (runs/s, records included, until the
// last close answered; drain-ms is the time the background appends then
// took to finish). With the log on, the sequential case
// also reports the time from each close's answer to its receipt
// (p50/p99), asked for at once and waited for alongside the next closes,
// as the Go client does. docs/BENCHMARKS.md has the numbers.
func BenchmarkClose(b *testing.B) {
	type variant struct {
		backend benchLog
		wait    bool
	}
	for _, v := range []variant{{logOff, false}, {logPOSIX, false}, {logPOSIX, true}, {logMySQL, false}, {logMySQL, true}} {
		name := "log=" + string(v.backend)
		query := ""
		if v.wait {
			name += "+wait"
			query = "?wait=log-index"
		}
		withLog := v.backend != logOff
		b.Run(name+"/latency", func(b *testing.B) {
			s := newBenchService(b, v.backend)
			var mu sync.Mutex
			var toReceipt []time.Duration
			var receipts sync.WaitGroup
			for range b.N {
				b.StopTimer()
				id := s.openWithRecords(b, 10)
				b.StartTimer()
				body, hdr := s.call(b, "POST", "/api/v1/runs/"+id+"/close"+query, nil)
				b.StopTimer()
				if withLog {
					if got := hdr.Get(api.HeaderLogIndex); (got != "") != v.wait {
						b.Fatalf("close%s answered %s %q", query, api.HeaderLogIndex, got)
					}
					var doc struct {
						VPECID string `json:"vpec_id"`
					}
					_ = json.Unmarshal(body, &doc)
					start := time.Now()
					receipts.Go(func() {
						s.call(b, "GET", "/api/v1/vpecs/"+doc.VPECID+"/receipt?wait=30s", nil)
						mu.Lock()
						toReceipt = append(toReceipt, time.Since(start))
						mu.Unlock()
					})
				}
				b.StartTimer()
			}
			b.StopTimer()
			receipts.Wait()
			if len(toReceipt) > 0 {
				slices.Sort(toReceipt)
				b.ReportMetric(float64(toReceipt[len(toReceipt)/2].Microseconds())/1000, "receipt-p50-ms")
				b.ReportMetric(float64(toReceipt[len(toReceipt)*99/100].Microseconds())/1000, "receipt-p99-ms")
			}
		})
		b.Run(name+"/throughput", func(b *testing.B) {
			s := newBenchService(b, v.backend)
			b.SetParallelism(4) // 4 clients per GOMAXPROCS: 8 on 2 cores
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := s.openWithRecords(b, 10)
					s.call(b, "POST", "/api/v1/runs/"+id+"/close"+query, nil)
				}
			})
			elapsed := time.Since(start)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "runs/s")
			// The appends still queued when the last close answered: the
			// time to finish them (at most about one batch window and one
			// batch when the log keeps up).
			if err := s.srv.WaitLogged(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((time.Since(start)-elapsed).Microseconds())/1000, "drain-ms")
		})
	}
}
