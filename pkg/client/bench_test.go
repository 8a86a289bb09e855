package client_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// BenchmarkRecordOverhead: a Record against a real service on loopback
// (SQLite, every record fsynced by the service) next to its baseline, a
// plain SHA-256 of the same bytes, in the same run.
//
//	go test -run '^$' -bench RecordOverhead -benchtime 2s ./pkg/client
func BenchmarkRecordOverhead(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		data := make([]byte, size.n)
		rand.Read(data)
		b.Run(size.name+"/sha256", func(b *testing.B) {
			b.SetBytes(int64(size.n))
			for b.Loop() {
				sha256.Sum256(data)
			}
		})
		// The client's own cost: the same Record against a stub that
		// answers at once (no database, no fsync)...
		b.Run(size.name+"/record-stub", func(b *testing.B) {
			stub := newStub()
			defer stub.Close()
			p, err := client.NewPipeline(client.Options{APIKey: "pk_live_bench", BaseURL: stub.URL, QueuePath: filepath.Join(b.TempDir(), "q.jsonl")})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			run, err := p.Open(ctx, "")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size.n))
			for b.Loop() {
				res, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, data)
				if err != nil || res.Queued {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
		// ...and the bare HTTP exchange with that stub (a record-sized
		// JSON body), which record-stub includes.
		b.Run(size.name+"/post-stub", func(b *testing.B) {
			stub := newStub()
			defer stub.Close()
			body := []byte(`{"record_id":"rec_0b6c2a8e-8f1d-4c1e-9a57-2f8e4b9d1c3a","sequence":1,"check":"pii_scan","manifest_id":"` + manifest +
				`","check_result":"pass","proof_level":"execution","commitment_algorithm":"sha256","commitment_hash":"` + manifest +
				`","visibility":"opaque","recorded_at":"2026-01-01T00:00:00.000Z","chain_hash":"` + manifest + `"}`)
			hc := &http.Client{}
			for b.Loop() {
				resp, err := hc.Post(stub.URL+"/api/v1/runs/x/records", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
		b.Run(size.name+"/record", func(b *testing.B) {
			e := newEnv(b)
			p := e.pipeline(func(o *client.Options) { o.BaseURL = e.url })
			run, err := p.Open(ctx, "")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size.n))
			for b.Loop() {
				res, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, data)
				if err != nil || res.Queued {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
	}
}

// BenchmarkQueuedRecord: records while the service is down, each appended
// to the queue file and fsynced before Record returns.
func BenchmarkQueuedRecord(b *testing.B) {
	e := newEnv(b)
	p := e.pipeline(func(o *client.Options) { o.BaseURL = closedURL(b); o.RetryInterval = time.Hour })
	run, err := p.Open(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	input := make([]byte, 1<<10)
	rand.Read(input)
	start := time.Now()
	for b.Loop() {
		res, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, input)
		if err != nil || !res.Queued {
			b.Fatalf("%+v %v", res, err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// BenchmarkFlushQueue10k: FlushQueue of 10,000 queued records (and their
// run's open) to a real service on loopback. Building the queue is not
// timed. Use -benchtime 3x.
func BenchmarkFlushQueue10k(b *testing.B) {
	const n = 10000
	e := newEnv(b)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		qpath := filepath.Join(b.TempDir(), fmt.Sprintf("q%d.jsonl", i))
		down := e.pipeline(func(o *client.Options) { o.BaseURL = closedURL(b); o.QueuePath = qpath; o.RetryInterval = time.Hour })
		run, _ := down.Open(ctx, "")
		for j := range n {
			if _, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, fmt.Appendf(nil, "input %d", j)); err != nil {
				b.Fatal(err)
			}
		}
		down.Close()
		up := e.pipeline(func(o *client.Options) { o.BaseURL = e.url; o.QueuePath = qpath })
		start := time.Now()
		b.StartTimer()
		got, err := up.FlushQueue(ctx)
		b.StopTimer()
		total += time.Since(start)
		if err != nil || got != n+1 {
			b.Fatalf("flushed %d: %v", got, err)
		}
		up.Close()
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
}

// newStub answers opens and records at once, echoing the record id.
func newStub() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rec struct {
			RecordID string `json:"record_id"`
		}
		json.NewDecoder(r.Body).Decode(&rec)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		if strings.HasSuffix(r.URL.Path, "/runs") {
			io.WriteString(w, `{"run_id":"x","org_id":"org_acme","policy_snapshot_hash":"sha256:00"}`)
			return
		}
		io.WriteString(w, `{"record_id":"`+rec.RecordID+`","sequence":1,"commitment_hash":"sha256:00","output_commitment":null,"commitment_algorithm":"sha256","proof_level":"execution","recorded_at":"2026-01-01T00:00:00.000Z","chain_hash":"sha256:00","queued":false}`)
	}))
}
