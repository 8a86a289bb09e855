package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// hangingTSA, while hang is set, reports each request on arrived and
// answers only when the request's context is done, with its error; the
// error is also sent on abandoned. Otherwise it asks next.
type hangingTSA struct {
	next      timestamp.Timestamper
	hang      atomic.Bool
	arrived   chan struct{}
	abandoned chan error
}

func (h *hangingTSA) Timestamp(ctx context.Context, d []byte) ([]byte, error) {
	if !h.hang.Load() {
		return h.next.Timestamp(ctx, d)
	}
	h.arrived <- struct{}{}
	<-ctx.Done()
	h.abandoned <- ctx.Err()
	return nil, fmt.Errorf("hanging TSA: %w", ctx.Err())
}

// statusRecorder keeps the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// TestCloseClientDisconnects: a session open, then a close, whose client
// hangs up while the timestamp authority is being asked abandons the
// authority (the request context reaches it) and answers as a cancelled
// request (499, not a 502 blaming the authority); the close leaves the run as the two-phase close promises:
// sealed (no record gets in) without a VPEC, and a close retried with the
// same Idempotency-Key completes it with exactly the acknowledged records.
func TestCloseClientDisconnects(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	tsa := &hangingTSA{next: mat.TSA, arrived: make(chan struct{}, 1), abandoned: make(chan error, 1)}
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: tsa, Trust: mat.Trust})
	if err != nil {
		t.Fatal(err)
	}
	hung := make(chan int, 1) // the status a request that met the hanging TSA wrote, once it returned
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		srv.ServeHTTP(rec, r)
		if tsa.hang.Load() {
			hung <- rec.status
		}
	}))
	t.Cleanup(hs.Close)
	e := &stressEnv{urls: []string{hs.URL}, trust: mat.Trust}
	if _, err := server.CreateOrg(ctx, st, "o", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e.key, _, err = server.CreateAPIKey(ctx, st, "o", vpec.Production, time.Now()); err != nil {
		t.Fatal(err)
	}
	var run api.Run
	code, body, err := e.post(hs.URL, "/api/v1/runs", api.OpenRunRequest{WorkflowID: "w"}, nil)
	if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("open: %d %s %v", code, body, err)
	}
	recs := chain(run.RunID, 3)
	for _, r := range recs[:2] {
		if code, body, _ := e.post(hs.URL, "/api/v1/runs/"+run.RunID+"/records", r, nil); code != 201 {
			t.Fatalf("record: %d %s", code, body)
		}
	}

	// hangUp sends a request, hangs up once it reached the authority and
	// checks what the authority and the service made of it.
	hangUp := func(path string, body []byte, hdr map[string]string) {
		t.Helper()
		tsa.hang.Store(true)
		defer tsa.hang.Store(false)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		req, err := http.NewRequestWithContext(cctx, http.MethodPost, hs.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		sent := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			sent <- err
		}()
		<-tsa.arrived
		cancel()
		if err := <-sent; !errors.Is(err, context.Canceled) {
			t.Fatalf("POST %s cancelled: %v, want context.Canceled", path, err)
		}
		if err := <-tsa.abandoned; !errors.Is(err, context.Canceled) {
			t.Fatalf("POST %s: the authority saw %v, want the request's context cancelled", path, err)
		}
		if status := <-hung; status != 499 {
			t.Errorf("POST %s cancelled: answered %d, want 499 (a cancelled request, not a failed authority)", path, status)
		}
	}

	// A session open whose client hangs up: 499 too (the session is
	// stored only after its open timestamp).
	hangUp("/api/v1/runs/"+run.RunID+"/sessions", []byte(`{"kind":"check","check":"c","manifest_id":"m"}`), nil)

	// The client hangs up while the authority is asked for the VPEC's token.
	hangUp("/api/v1/runs/"+run.RunID+"/close", nil, map[string]string{"Idempotency-Key": "k-1"})

	// Sealed without a VPEC: no record gets in, no other close completes it.
	if code, body, _ := e.post(hs.URL, "/api/v1/runs/"+run.RunID+"/records", recs[2], nil); code != 409 {
		t.Errorf("record after the cancelled close: %d %s, want 409", code, body)
	}
	if code, body, _ := e.post(hs.URL, "/api/v1/runs/"+run.RunID+"/close", nil, map[string]string{"Idempotency-Key": "k-other"}); code != 409 {
		t.Errorf("close with another key: %d %s, want 409", code, body)
	}
	// The retry with the key completes the close.
	code, doc, err := e.post(hs.URL, "/api/v1/runs/"+run.RunID+"/close", nil, map[string]string{"Idempotency-Key": "k-1"})
	if err != nil || code != 200 {
		t.Fatalf("close retried with its key: %d %s %v", code, doc, err)
	}
	var v vpec.VPEC
	if rep, err := verify.Verify(doc, verify.Options{Trust: mat.Trust}); err != nil || rep.Verdict != "VALID" || json.Unmarshal(doc, &v) != nil || len(v.Records) != 2 {
		t.Errorf("VPEC: %v, %d records; want VALID with the 2 acknowledged", err, len(v.Records))
	}
	if code, again, _ := e.post(hs.URL, "/api/v1/runs/"+run.RunID+"/close", nil, map[string]string{"Idempotency-Key": "k-1"}); code != 200 || !bytes.Equal(again, doc) {
		t.Errorf("close again: %d, same bytes %v", code, bytes.Equal(again, doc))
	}
}
