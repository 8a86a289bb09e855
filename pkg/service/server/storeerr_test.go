package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

var errDisk = errors.New("disk read failed")

// failingReads is a store whose record and profile reads fail while on.
type failingReads struct {
	store.Store
	on atomic.Bool
}

func (f *failingReads) Records(ctx context.Context, runID string) ([]store.Record, error) {
	if f.on.Load() {
		return nil, errDisk
	}
	return f.Store.Records(ctx, runID)
}

func (f *failingReads) EachRecord(ctx context.Context, runID string, fn func(store.Record) error) error {
	if f.on.Load() {
		return errDisk
	}
	return f.Store.EachRecord(ctx, runID, fn)
}

func (f *failingReads) EachRecordBody(ctx context.Context, runID string, fn func(int64, []byte) error) error {
	if f.on.Load() {
		return errDisk
	}
	return f.Store.EachRecordBody(ctx, runID, fn)
}

func (f *failingReads) ProfileByModelHash(ctx context.Context, h string) (store.Profile, error) {
	if f.on.Load() {
		return store.Profile{}, errDisk
	}
	return f.Store.ProfileByModelHash(ctx, h)
}

// TestStoreErrorsAreNotFacts: a failing read never becomes a signed or
// answered fact. GET /runs/{id} and /delegations answer from the run's
// metadata (the last sequence, never 0 for a run with records); a close
// whose reads fail is a 500 and signs nothing, and completes once the
// store answers again.
func TestStoreErrorsAreNotFacts(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fs := &failingReads{Store: st}
	e := newStressEnv(t, []store.Store{fs})
	var run api.Run
	code, body, err := e.post(e.urls[0], "/api/v1/runs", api.OpenRunRequest{WorkflowID: "w"}, nil)
	if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("open: %d %s %v", code, body, err)
	}
	recs := chain(run.RunID, 3)
	for _, r := range recs {
		if code, body, err := e.post(e.urls[0], "/api/v1/runs/"+run.RunID+"/records", r, nil); err != nil || code != 201 {
			t.Fatalf("record: %d %s %v", code, body, err)
		}
	}
	fs.on.Store(true)
	req := func(method, path string, body any) (int, []byte) {
		t.Helper()
		if method == "GET" {
			hr, _ := http.NewRequest("GET", e.urls[0]+path, nil)
			hr.Header.Set("Authorization", "Bearer "+e.key)
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, b
		}
		code, b, err := e.post(e.urls[0], path, body, nil)
		if err != nil {
			t.Fatal(err)
		}
		return code, b
	}
	code, body = req("GET", "/api/v1/runs/"+run.RunID, nil)
	var got api.Run
	if code < 500 && (code != 200 || json.Unmarshal(body, &got) != nil || got.LastSequence != 3 || got.LastChainHash != recs[2].ChainHash || got.RecordCount != 3) {
		t.Errorf("GET run with failing record reads: %d %s; want 5xx or the true chain position (3)", code, body)
	}
	code, body = req("POST", "/api/v1/runs/"+run.RunID+"/delegations", api.DelegationRequest{Delegation: map[string]any{"to": "agent-2"}})
	var del api.DelegationResult
	if code < 500 && (code != 201 || json.Unmarshal(body, &del) != nil || del.LastSequence != 3) {
		t.Errorf("delegation with failing record reads: %d %s; want 5xx or a token at sequence 3", code, body)
	}
	if code == 201 {
		code, body = req("POST", "/api/v1/runs/resume", api.ResumeRequest{LineageToken: del.LineageToken})
		if code < 500 && (code != 200 || json.Unmarshal(body, &got) != nil || got.LastSequence != 3) {
			t.Errorf("resume with failing record reads: %d %s; want 5xx or the run at sequence 3", code, body)
		}
	}
	code, body = req("POST", "/api/v1/runs/"+run.RunID+"/close", nil)
	if code != 500 {
		t.Errorf("close with failing record reads: %d %s; want 500", code, body)
	}
	if r, err := st.Run(ctx, run.OrgID, run.RunID); err != nil || r.VPECID != "" {
		t.Errorf("after the failed close: %+v, %v; want no VPEC", r, err)
	}
	fs.on.Store(false)
	code, body = req("POST", "/api/v1/runs/"+run.RunID+"/close", nil)
	if code != 200 {
		t.Fatalf("close once the store answers: %d %s", code, body)
	}
	var v vpec.VPEC
	if rep, err := verify.Verify(body, verify.Options{Trust: e.trust}); err != nil || rep.Verdict != "VALID" || json.Unmarshal(body, &v) != nil || len(v.Records) != 3 {
		t.Errorf("VPEC: %s, %d records", rep.Verdict, len(v.Records))
	}
}
