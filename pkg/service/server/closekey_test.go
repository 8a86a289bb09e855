package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
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

// flakyTSA fails while down is set.
type flakyTSA struct {
	next timestamp.Timestamper
	down atomic.Bool
}

func (f *flakyTSA) Timestamp(ctx context.Context, d []byte) ([]byte, error) {
	if f.down.Load() {
		return nil, errors.New("TSA unreachable")
	}
	return f.next.Timestamp(ctx, d)
}

// TestCloseIdempotency (D8): the same Idempotency-Key returns the same
// VPEC bytes; another key, or none, gets 409 run_sealed naming the
// vpec_id; a malformed key is a 400; a close whose timestamp authority
// failed leaves the run sealed (no record gets in) and a retry with the
// key completes it, one VPEC holding exactly the records acknowledged.
func TestCloseIdempotency(t *testing.T) {
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
	tsa := &flakyTSA{next: mat.TSA}
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: tsa, Trust: mat.Trust})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e := &stressEnv{urls: []string{hs.URL}, trust: mat.Trust}
	if _, err := server.CreateOrg(ctx, st, "o", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e.key, _, err = server.CreateAPIKey(ctx, st, "o", vpec.Production, time.Now()); err != nil {
		t.Fatal(err)
	}
	open := func() (api.Run, []vpec.Record) {
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
		return run, recs
	}
	closeWith := func(runID, key string) (int, []byte) {
		t.Helper()
		hdr := map[string]string{}
		if key != "" {
			hdr["Idempotency-Key"] = key
		}
		code, body, err := e.post(hs.URL, "/api/v1/runs/"+runID+"/close", nil, hdr)
		if err != nil {
			t.Fatal(err)
		}
		return code, body
	}

	run, _ := open()
	for _, bad := range []string{"has space", strings.Repeat("k", 129), "ünïcode"} {
		if code, body := closeWith(run.RunID, bad); code != 400 || !strings.Contains(string(body), "Idempotency-Key") {
			t.Errorf("close with key %q: %d %s, want 400 naming Idempotency-Key", bad, code, body)
		}
	}
	code, doc := closeWith(run.RunID, "k-1")
	if code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	var v vpec.VPEC
	json.Unmarshal(doc, &v)
	if code, again := closeWith(run.RunID, "k-1"); code != 200 || !bytes.Equal(again, doc) {
		t.Errorf("close again with the same key: %d, same bytes %v", code, bytes.Equal(again, doc))
	}
	for _, other := range []string{"k-2", ""} {
		if code, body := closeWith(run.RunID, other); code != 409 || !strings.Contains(string(body), v.VPECID) || !strings.Contains(string(body), api.CodeRunSealed) {
			t.Errorf("close with key %q: %d %s, want 409 run_sealed naming %s", other, code, body, v.VPECID)
		}
	}

	// The timestamp authority fails: 502, the run is sealed, nothing more
	// is recorded, and the retry with the key completes the close.
	run, recs := open()
	tsa.down.Store(true)
	if code, body := closeWith(run.RunID, "k-3"); code != 502 {
		t.Fatalf("close with the TSA down: %d %s, want 502", code, body)
	}
	if code, body, _ := e.post(hs.URL, "/api/v1/runs/"+run.RunID+"/records", recs[2], nil); code != 409 {
		t.Errorf("record after the failed close: %d %s, want 409 run_sealed", code, body)
	}
	if code, body := closeWith(run.RunID, "k-other"); code != 409 {
		t.Errorf("close of the half-closed run with another key: %d %s, want 409", code, body)
	}
	tsa.down.Store(false)
	code, doc = closeWith(run.RunID, "k-3")
	if code != 200 {
		t.Fatalf("close retried with its key: %d %s", code, doc)
	}
	if rep, err := verify.Verify(doc, verify.Options{Trust: mat.Trust}); err != nil || rep.Verdict != "VALID" || json.Unmarshal(doc, &v) != nil || len(v.Records) != 2 {
		t.Errorf("VPEC: %s, %d records; want VALID with the 2 acknowledged", rep.Verdict, len(v.Records))
	}
	if code, again := closeWith(run.RunID, "k-3"); code != 200 || !bytes.Equal(again, doc) {
		t.Errorf("close again: %d, same bytes %v", code, bytes.Equal(again, doc))
	}
}
