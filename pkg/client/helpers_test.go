package client_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// env is a real service on loopback (SQLite in a temp directory) behind a
// gate that can make it look down, hang, or fail chosen requests.
type env struct {
	tb    testing.TB
	st    store.Store
	srv   *server.Server
	mat   *server.Material
	url   string // the real server
	gate  *gate
	gated string // the gate in front of it
	key   string // production key (no rate limit)
	sbKey string // sandbox key of the same organisation
}

func newEnv(tb testing.TB, configure ...func(*server.Config)) *env {
	tb.Helper()
	sv := svctest.New(tb, nil, configure...)
	g := &gate{next: sv.Server, release: make(chan struct{})}
	gs := httptest.NewServer(g)
	tb.Cleanup(func() { g.unhang(); gs.Close() })
	return &env{tb: tb, st: sv.Store, srv: sv.Server, mat: sv.Material, url: sv.URL, gate: g, gated: gs.URL, key: sv.Key, sbKey: sv.SandboxKey}
}

// pipeline opens a Pipeline on the gate with a queue in a temp directory.
func (e *env) pipeline(mod ...func(*client.Options)) *client.Pipeline {
	e.tb.Helper()
	o := client.Options{APIKey: e.key, BaseURL: e.gated, WorkflowID: "claims", QueuePath: filepath.Join(e.tb.TempDir(), "queue.jsonl"),
		Timeout: 2 * time.Second, RetryInterval: 20 * time.Millisecond}
	for _, m := range mod {
		m(&o)
	}
	p, err := client.NewPipeline(o)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() { p.Close() })
	return p
}

// verify checks a VPEC offline against the service's trust bundle.
func (e *env) verify(doc []byte) *verify.Report {
	r, err := verify.Verify(doc, verify.Options{Trust: e.mat.Trust})
	if r == nil { // the options are refused: a bug in the test
		panic(err)
	}
	return r // err agrees with r.Valid (pkg/core/verify TestVerifyFailsClosed)
}

// mustValid requires a VALID, clean VPEC of n records.
func (e *env) mustValid(res *client.VPECResult, n int64) {
	e.tb.Helper()
	if res.Offline {
		e.tb.Fatalf("VPEC is offline: %+v", res.VPEC.Gaps)
	}
	rep := e.verify(res.Raw)
	if !rep.Valid {
		e.tb.Fatalf("VPEC verdict %s: %+v", rep.Verdict, rep.FirstFailure())
	}
	if !res.VPEC.IsClean || !res.VPEC.ChainIntact || res.VPEC.TotalChecksRun != n {
		e.tb.Fatalf("VPEC clean=%v intact=%v records=%d (want %d), gaps %+v", res.VPEC.IsClean, res.VPEC.ChainIntact, res.VPEC.TotalChecksRun, n, res.VPEC.Gaps)
	}
}

// serverRun reads a run straight from the service.
func (e *env) serverRun(runID string) (api.Run, int) {
	e.tb.Helper()
	req, _ := http.NewRequest("GET", e.url+"/api/v1/runs/"+runID, nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	var r api.Run
	json.NewDecoder(resp.Body).Decode(&r)
	return r, resp.StatusCode
}

// Gate modes.
const (
	pass        = iota
	unavailable // 503 from a "proxy"
	hang        // never answers (until the client gives up)
)

// gate sits in front of the real server like a proxy.
type gate struct {
	next    http.Handler
	mode    atomic.Int32
	status  atomic.Int32 // status of unavailable mode (default 503)
	mu      sync.Mutex
	failIf  func(r *http.Request, body []byte) int // per-request status override (0: pass)
	release chan struct{}
	once    sync.Once
	seen    atomic.Int64
}

func (g *gate) set(mode int) { g.mode.Store(int32(mode)) }

func (g *gate) setFail(f func(r *http.Request, body []byte) int) {
	g.mu.Lock()
	g.failIf = f
	g.mu.Unlock()
}

func (g *gate) unhang() { g.once.Do(func() { close(g.release) }) }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.seen.Add(1)
	switch g.mode.Load() {
	case unavailable:
		st := int(g.status.Load())
		if st == 0 {
			st = http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(st)
		io.WriteString(w, "<html><body>upstream unavailable</body></html>")
		return
	case hang:
		select {
		case <-r.Context().Done():
		case <-g.release:
		}
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.mu.Lock()
	f := g.failIf
	g.mu.Unlock()
	if f != nil {
		if st := f(r, body); st != 0 {
			w.WriteHeader(st)
			io.WriteString(w, `{"error":{"code":"forbidden","message":"blocked by the test gate"}}`)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// closedURL is an address where nothing listens: connections are refused.
func closedURL(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// recorder is an http.RoundTripper that keeps every request's method,
// URL, headers and body.
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, url string
	header      http.Header
	body        []byte
}

func (rt *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, recorded{req.Method, req.URL.String(), req.Header.Clone(), body})
	rt.mu.Unlock()
	return rt.base.RoundTrip(req)
}

func (rt *recorder) all() []recorded {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]recorded(nil), rt.reqs...)
}

var manifest = "sha256:" + "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"

// waitUp waits until the pipeline's prober has found the service again:
// a harmless call then goes out (observed by the gate).
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
