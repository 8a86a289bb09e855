package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/postgres"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// closeRaceTrials races concurrent closes of one run, through every server
// of e: three with key A, two with key B, two without a key. Exactly one
// close seals the run; every close sent with its key gets 200 and the same
// bytes, which are the stored VPEC and verify VALID; every other close gets
// 409 run_sealed. Nothing ever issues a second VPEC for the run.
func closeRaceTrials(t *testing.T, e *stressEnv, trials int) {
	for trial := range trials {
		var run api.Run
		code, body, err := e.post(e.urls[0], "/api/v1/runs", api.OpenRunRequest{WorkflowID: "race"}, nil)
		if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
			t.Fatalf("open: %d %s %v", code, body, err)
		}
		for _, rec := range chain(run.RunID, 3) {
			if code, body, err := e.post(e.urls[0], "/api/v1/runs/"+run.RunID+"/records", rec, nil); err != nil || code != 201 {
				t.Fatalf("record: %d %s %v", code, body, err)
			}
		}
		keys := []string{"A", "A", "A", "B", "B", "", ""}
		codes := make([]int, len(keys))
		bodies := make([][]byte, len(keys))
		var wg sync.WaitGroup
		for i, k := range keys {
			wg.Go(func() {
				var hdr map[string]string
				if k != "" {
					hdr = map[string]string{"Idempotency-Key": fmt.Sprintf("%s-%d", k, trial)}
				}
				var err error
				codes[i], bodies[i], err = e.post(e.urls[i%len(e.urls)], "/api/v1/runs/"+run.RunID+"/close", nil, hdr)
				if err != nil {
					t.Errorf("close %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		var winner string
		var doc []byte
		for i, k := range keys {
			switch codes[i] {
			case 200:
				if winner != "" && (k != winner || k == "") {
					t.Fatalf("trial %d: closes with keys %q and %q both got 200", trial, winner, k)
				}
				if doc != nil && !bytes.Equal(doc, bodies[i]) {
					t.Fatalf("trial %d: two closes with key %q got different VPECs", trial, k)
				}
				winner, doc = k, bodies[i]
				if k == "" {
					winner = "(none)"
				}
			case 409:
			default:
				t.Fatalf("trial %d: close with key %q: %d %s", trial, k, codes[i], bodies[i])
			}
		}
		if doc == nil {
			t.Fatalf("trial %d: no close got 200: %v", trial, codes)
		}
		if winner != "(none)" {
			for i, k := range keys {
				if k == winner && codes[i] != 200 {
					t.Fatalf("trial %d: a close with the winning key %q got %d %s", trial, k, codes[i], bodies[i])
				}
			}
		}
		var got api.Run
		code, body, err = e.get(e.urls[0], "/api/v1/runs/"+run.RunID)
		if err != nil || code != 200 || json.Unmarshal(body, &got) != nil || got.VPECID == "" {
			t.Fatalf("get run: %d %s %v", code, body, err)
		}
		code, stored, err := e.get(e.urls[len(e.urls)-1], "/api/v1/vpecs/"+got.VPECID)
		if err != nil || code != 200 || !bytes.Equal(stored, doc) {
			t.Fatalf("trial %d: the stored VPEC %s is not the one returned (%d %v)", trial, got.VPECID, code, err)
		}
		if r, err := verify.Verify(doc, verify.Options{Trust: e.trust}); err != nil || r.Verdict != "VALID" || r.Records != 3 {
			t.Fatalf("trial %d: %s, %d records", trial, r.Verdict, r.Records)
		}
	}
}

func TestCloseRaceSQLite(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	closeRaceTrials(t, newStressEnv(t, []store.Store{st}), 15)
}

func TestCloseRacePostgresTwoServers(t *testing.T) {
	sdsn := pgtest.New(t, "h1a_seal_").DSN
	var stores []store.Store
	for range 2 {
		st, err := postgres.Open(context.Background(), sdsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	closeRaceTrials(t, newStressEnv(t, stores), 15)
}
