package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/loadgen"
	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// roundRobin is a load balancer: each request goes to the next backend in
// turn, and to the one after when a backend cannot be reached (a record or
// a close sent twice is answered as a duplicate, so a retry is safe).
type roundRobin struct {
	backends []string
	next     atomic.Uint64
	served   []atomic.Int64 // requests answered, per backend
	hc       *http.Client
}

func newRoundRobin(backends ...string) *roundRobin {
	return &roundRobin{backends: backends, served: make([]atomic.Int64, len(backends)),
		hc: &http.Client{Timeout: 30 * time.Second}}
}

func (lb *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	start := lb.next.Add(1)
	var lastErr error
	for i := range lb.backends {
		n := int((start + uint64(i)) % uint64(len(lb.backends)))
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, lb.backends[n]+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := lb.hc.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		defer resp.Body.Close()
		lb.served[n].Add(1)
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
		return
	}
	http.Error(w, "no backend: "+lastErr.Error(), http.StatusBadGateway)
}

// TestServersBehindLoadBalancer runs docs/OPERATIONS.md's recipe for
// several servers: the second server gets the first one's key material
// (svc admin backup --keys-only, svc admin restore, the docs' block as
// written), both serve one PostgreSQL database behind a round-robin
// balancer, and through the balancer: runs whose records alternate between
// the servers close to valid VPECs; a revoked key is refused from then on,
// by both; a server stopped with SIGTERM in the middle of a run loses
// nothing: the run carries on through the other and its VPEC holds every
// acknowledged record, without a gap.
func TestServersBehindLoadBalancer(t *testing.T) {
	if os.Getenv("SVC_TEST_POSTGRES_DSN") == "" {
		t.Skip("SVC_TEST_POSTGRES_DSN not set: start one with scripts/postgres.sh start (make unit does)")
	}
	blocks := operationsBlocks(t, "TestServersBehindLoadBalancer")
	if len(blocks) != 1 {
		t.Fatalf("docs/OPERATIONS.md has %d blocks for TestServersBehindLoadBalancer, want 1", len(blocks))
	}
	dsn := pgtest.New(t, "svc_lb_").DSN
	data1 := t.TempDir()
	data2 := filepath.Join(t.TempDir(), "svc-2")
	store1 := []string{"--database", dsn, "--data-dir", data1}
	org := "lb-" + names.NewID("")[:8]
	key := newOrgKey(t, org, store1...)
	// One transparency log for every server: Tessera's MySQL backend.
	_, logDSN := tlogtest.MariaDB(t)
	url1, _ := startServe(t, data1, "--database", dsn, "--tlog-mysql", logDSN)
	tmp := t.TempDir()
	runOperationsBlock(t, blocks[0], strings.NewReplacer("/var/lib/svc-2", data2, "/var/lib/svc", data1, "/tmp/", tmp+"/"), nil)
	url2, proc2 := startServe(t, data2, "--database", dsn, "--tlog-mysql", logDSN)
	trust, err := signing.ParseBundle([]byte(svcOut(t, "serve", "trust-bundle", "--data-dir", data1)))
	if err != nil {
		t.Fatal(err)
	}
	lb := newRoundRobin(url1, url2)
	front := httptest.NewServer(lb)
	defer front.Close()
	hc := &http.Client{Timeout: 30 * time.Second}
	c := &apiClient{t: t, url: front.URL, key: key.APIKey, hc: hc}

	closeRun := func(runID string, records int) {
		t.Helper()
		doc, _, err := loadgen.Close(context.Background(), hc, front.URL, key.APIKey, runID)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := verify.Verify(doc, verify.Options{Trust: trust})
		if err != nil || !rep.Valid || !rep.IsClean || rep.Records != records {
			t.Fatalf("VPEC of %s through the balancer: %v %s, %d records (want %d, clean)", runID, err, rep.Verdict, rep.Records, records)
		}
	}

	// Runs whose records alternate between the servers.
	for i := range 3 {
		runID := c.openRun("lb-" + string(rune('a'+i)))
		prev := vpec.Genesis(runID)
		for seq := int64(1); seq <= 10; seq++ {
			var code int
			if prev, code = c.record(runID, seq, prev); code != 201 {
				t.Fatalf("record %d through the balancer: %d", seq, code)
			}
		}
		closeRun(runID, 10)
	}
	if a, b := lb.served[0].Load(), lb.served[1].Load(); a == 0 || b == 0 {
		t.Fatalf("the balancer sent %d requests to the first server and %d to the second", a, b)
	}

	// Revocation reaches both servers: once refused through the balancer,
	// refused by each from then on.
	var second struct {
		APIKey string `json:"api_key"`
		KeyID  string `json:"key_id"`
	}
	if err := json.Unmarshal([]byte(svcOut(t, append([]string{"admin", "key", "create", "--org", org, "--live", "--output", "json"}, store1...)...)), &second); err != nil {
		t.Fatal(err)
	}
	k2 := &apiClient{t: t, url: front.URL, key: second.APIKey, hc: hc}
	for range 4 { // both servers cache the key
		if code := k2.do("GET", "/api/v1/runs/"+names.NewID("run_"), nil, nil); code != 404 {
			t.Fatalf("the second key before its revocation: %d", code)
		}
	}
	revoked := time.Now()
	svcOut(t, append([]string{"admin", "key", "revoke", second.KeyID}, store1...)...)
	polls := 0
	for ; polls < lbMaxPolls; polls++ {
		if k2.do("GET", "/api/v1/runs/"+names.NewID("run_"), nil, nil) == 401 {
			break
		}
		time.Sleep(lbPollEvery)
	}
	if polls == lbMaxPolls {
		t.Fatalf("the revoked key still works through the balancer after %d polls", polls)
	}
	t.Logf("a revoked key was refused through the balancer %s after the revoke command returned (%d polls)", time.Since(revoked).Round(time.Millisecond), polls)
	time.Sleep(600 * time.Millisecond) // past server.RevocationDelay: every cache entry has expired
	for _, u := range []string{url1, url2} {
		direct := &apiClient{t: t, url: u, key: second.APIKey, hc: hc}
		if code := direct.do("GET", "/api/v1/runs/"+names.NewID("run_"), nil, nil); code != 401 {
			t.Fatalf("the revoked key at %s: %d", u, code)
		}
	}

	// A server stopped with SIGTERM in the middle of a run.
	runID := c.openRun("lb-stop")
	var acked atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	errc := make(chan error, 1)
	go func() {
		defer wg.Done()
		prev := vpec.Genesis(runID)
		for seq := int64(1); ctx.Err() == nil; seq++ {
			recs := []vpec.Record{loadgen.Record(runID, seq)}
			next, _ := issue.Chain(prev, recs)
			b, _ := json.Marshal(recs[0])
			req, _ := http.NewRequest("POST", front.URL+"/api/v1/runs/"+runID+"/records", bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+key.APIKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				errc <- err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 201 && resp.StatusCode != 200 {
				errc <- errors.New("record " + resp.Status)
				return
			}
			acked.Store(seq)
			prev = next
		}
	}()
	for acked.Load() < 20 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := proc2.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	proc2.Wait()
	atStop := acked.Load()
	for acked.Load() < atStop+20 {
		select {
		case err := <-errc:
			t.Fatalf("the run through the balancer after one server stopped: %v", err)
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatalf("the run through the balancer: %v", err)
	default:
	}
	var run api.Run
	if code := c.do("GET", "/api/v1/runs/"+runID, nil, &run); code != 200 {
		t.Fatalf("run after the stop: %d", code)
	}
	if run.LastSequence < acked.Load() {
		t.Fatalf("the run holds %d records; %d were acknowledged", run.LastSequence, acked.Load())
	}
	closeRun(runID, int(run.LastSequence))
	t.Logf("one server stopped with SIGTERM after %d records of a run; the run went on through the other to %d records and closed clean", atStop, run.LastSequence)
}

// lbMaxPolls bounds the wait for a revocation to reach every server behind
// the balancer: polls lbPollEvery apart, well past server.RevocationDelay
// (500 ms) of wall time.
const (
	lbMaxPolls  = 150
	lbPollEvery = 10 * time.Millisecond
)
