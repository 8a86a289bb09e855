package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/postgres"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// stressEnv is one or more servers (separate listeners, separate store
// handles) on one database, and a production key of one organisation.
type stressEnv struct {
	urls    []string
	servers []*server.Server
	key     string
	trust   *signing.Bundle
}

// newStressEnv starts one server per store; limits, if given, are the
// servers' run limits.
func newStressEnv(t testing.TB, stores []store.Store, limits ...server.RunLimits) *stressEnv {
	t.Helper()
	ctx := context.Background()
	mat, err := server.LoadMaterial(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	e := &stressEnv{trust: mat.Trust}
	for _, st := range stores {
		cfg := server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust}
		if len(limits) > 0 {
			cfg.RunLimits = limits[0]
		}
		srv, err := server.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		e.urls, e.servers = append(e.urls, hs.URL), append(e.servers, srv)
	}
	if _, err := server.CreateOrg(ctx, stores[0], "stress", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e.key, _, err = server.CreateAPIKey(ctx, stores[0], "stress", vpec.Production, time.Now()); err != nil {
		t.Fatal(err)
	}
	return e
}

// post sends a JSON request and returns the status and body; it never
// calls t.Fatal (it runs on the clients' goroutines).
func (e *stressEnv) post(url, path string, body any, hdr map[string]string) (int, []byte, error) {
	return e.do("POST", url, path, body, hdr)
}

// get is post for GET requests.
func (e *stressEnv) get(url, path string) (int, []byte, error) {
	return e.do("GET", url, path, nil, nil)
}

func (e *stressEnv) do(method, url, path string, body any, hdr map[string]string) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// stressTrials returns the number of trials and records per trial:
// small in go test, larger with SVC_SEAL_STRESS=trials[,records].
func stressTrials(short, records int) (int, int) {
	if v := os.Getenv("SVC_SEAL_STRESS"); v != "" {
		var n, m int
		if _, err := fmt.Sscanf(v, "%d,%d", &n, &m); err == nil && n > 0 && m > 0 {
			return n, m
		}
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n, records
		}
	}
	return short, records
}

// sealTrial streams n records of a new run from 8 clients (spread over
// the servers) while the run is closed, and checks every answer against
// the issued VPEC: every record acknowledged 2xx is in it, every record
// refused got 409 run_sealed and is not in it, a retry is a duplicate
// exactly when the record is in it, and the VPEC verifies.
func sealTrial(t *testing.T, e *stressEnv, n int) (acked, refused int) {
	t.Helper()
	const clients = 8
	var run api.Run
	code, body, err := e.post(e.urls[0], "/api/v1/runs", api.OpenRunRequest{WorkflowID: "stress"}, nil)
	if err != nil || code != 201 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("open: %d %s %v", code, body, err)
	}
	recs := chain(run.RunID, n)
	status := make([]int, n)
	var done atomic.Int32
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			url := e.urls[c%len(e.urls)]
			for i := c; i < n; i += clients {
				code, body, err := e.post(url, "/api/v1/runs/"+run.RunID+"/records", recs[i], nil)
				if err != nil {
					t.Errorf("record %d: %v", i+1, err)
				}
				if code != 201 && code != 409 {
					t.Errorf("record %d: %d %s", i+1, code, body)
				}
				status[i] = code
				done.Add(1)
			}
		})
	}
	for deadline := time.Now().Add(20 * time.Second); done.Load() < int32(n/3) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Microsecond)
	}
	key := "stress-" + run.RunID
	code, doc, err := e.post(e.urls[len(e.urls)-1], "/api/v1/runs/"+run.RunID+"/close", nil, map[string]string{"Idempotency-Key": key})
	wg.Wait()
	if err != nil || code != 200 {
		t.Fatalf("close: %d %s %v", code, doc, err)
	}
	if rep, err := verify.Verify(doc, verify.Options{Trust: e.trust}); err != nil || rep.Verdict != "VALID" {
		t.Fatalf("the VPEC does not verify: %s", rep.Verdict)
	}
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, r := range v.Records {
		in[r.RecordID] = true
	}
	for i, r := range recs {
		switch {
		case status[i] == 201 && !in[r.RecordID]:
			t.Errorf("record %d acknowledged 201 but missing from the VPEC", i+1)
		case status[i] == 409 && in[r.RecordID]:
			t.Errorf("record %d refused 409 but in the VPEC", i+1)
		}
		if status[i] == 201 {
			acked++
		} else {
			refused++
		}
	}
	if len(v.Records) != acked {
		t.Errorf("the VPEC holds %d records, %d were acknowledged", len(v.Records), acked)
	}
	// Retries: a duplicate exactly when the record is sealed in the VPEC.
	for _, i := range []int{0, n / 2, n - 1} {
		code, body, err := e.post(e.urls[i%len(e.urls)], "/api/v1/runs/"+run.RunID+"/records", recs[i], nil)
		var res api.RecordResult
		switch {
		case err != nil:
			t.Error(err)
		case in[recs[i].RecordID] && (code != 200 || json.Unmarshal(body, &res) != nil || !res.Duplicate):
			t.Errorf("retry of sealed record %d: %d %s, want 200 duplicate", i+1, code, body)
		case !in[recs[i].RecordID] && code != 409:
			t.Errorf("retry of refused record %d: %d %s, want 409 run_sealed", i+1, code, body)
		}
	}
	// The close again with its key: the same bytes, from any server.
	for _, url := range e.urls {
		if code, again, err := e.post(url, "/api/v1/runs/"+run.RunID+"/close", nil, map[string]string{"Idempotency-Key": key}); err != nil || code != 200 || !bytes.Equal(again, doc) {
			t.Errorf("close retried with its key: %d, same bytes %v, %v", code, bytes.Equal(again, doc), err)
		}
	}
	return acked, refused
}

func runSealStress(t *testing.T, e *stressEnv) {
	trials, n := stressTrials(4, 160)
	var acked, refused int
	start := time.Now()
	for i := 0; i < trials && !t.Failed(); i++ {
		a, r := sealTrial(t, e, n)
		acked, refused = acked+a, refused+r
	}
	t.Logf("%d trials of %d records on %d server(s) in %v: %d acknowledged and sealed, %d refused run_sealed, 0 lost",
		trials, n, len(e.urls), time.Since(start).Round(time.Millisecond), acked, refused)
}

// TestSealAtomicSQLite: issue 10 item 1 on SQLite.
func TestSealAtomicSQLite(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	runSealStress(t, newStressEnv(t, []store.Store{st}))
}

// TestSealAtomicPostgresTwoServers: the same with two servers, each with
// its own connection pool, on one PostgreSQL database
// (SVC_TEST_POSTGRES_DSN; skipped without it).
func TestSealAtomicPostgresTwoServers(t *testing.T) {
	sdsn := pgtest.New(t, "h1a_seal_").DSN
	ctx := context.Background()
	var stores []store.Store
	for range 2 {
		st, err := postgres.Open(ctx, sdsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	runSealStress(t, newStressEnv(t, stores))
}
