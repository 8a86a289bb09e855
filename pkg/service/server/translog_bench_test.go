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
	"strconv"
	"testing"
	"time"

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
}

func newBenchService(b *testing.B, withLog bool) *benchService {
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
	if withLog {
		_, priv, _ := ed25519.GenerateKey(nil)
		l, err := logwriter.Open(ctx, logwriter.Config{Dir: filepath.Join(dir, "log"), Origin: "svc.test/log", Signer: priv, CheckpointInterval: logwriter.MinCheckpointInterval})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = l.Close(ctx) })
		cfg.Log = &server.TransparencyLog{Log: l, Secret: make([]byte, 32), Store: st}
		s.log = l
	}
	srv, err := server.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
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
// transparency log off and on, in the same run: sequential (ns/op is the
// close's latency; the records are not timed) and from 8 clients at once
// (runs/s, records included), and with the log on the time from the
// close's answer to its receipt (p50/p99, checkpoints every 100 ms).
// docs/BENCHMARKS.md has the numbers.
func BenchmarkClose(b *testing.B) {
	for _, withLog := range []bool{false, true} {
		name := "log=off"
		if withLog {
			name = "log=on"
		}
		b.Run(name+"/latency", func(b *testing.B) {
			s := newBenchService(b, withLog)
			var toReceipt []time.Duration
			for range b.N {
				b.StopTimer()
				id := s.openWithRecords(b, 10)
				b.StartTimer()
				_, hdr := s.call(b, "POST", "/api/v1/runs/"+id+"/close", nil)
				b.StopTimer()
				if withLog {
					idx, err := strconv.ParseUint(hdr.Get(api.HeaderLogIndex), 10, 64)
					if err != nil {
						b.Fatalf("close without %s: %v", api.HeaderLogIndex, err)
					}
					start := time.Now()
					if _, err := s.log.AwaitReceipt(context.Background(), idx); err != nil {
						b.Fatal(err)
					}
					toReceipt = append(toReceipt, time.Since(start))
				}
				b.StartTimer()
			}
			if len(toReceipt) > 0 {
				slices.Sort(toReceipt)
				b.ReportMetric(float64(toReceipt[len(toReceipt)/2].Microseconds())/1000, "receipt-p50-ms")
				b.ReportMetric(float64(toReceipt[len(toReceipt)*99/100].Microseconds())/1000, "receipt-p99-ms")
			}
		})
		b.Run(name+"/throughput", func(b *testing.B) {
			s := newBenchService(b, withLog)
			b.SetParallelism(4) // 4 clients per GOMAXPROCS: 8 on 2 cores
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := s.openWithRecords(b, 10)
					s.call(b, "POST", "/api/v1/runs/"+id+"/close", nil)
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
		})
	}
}
