package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// hostile is a real service on loopback (SQLite, the built-in TSA behind a
// counter) with one organisation holding a production key (live, live2)
// and a sandbox key (sb), for the hostile-client tests.
type hostile struct {
	t           *testing.T
	st          store.Store
	mat         *server.Material
	srv         *server.Server
	ts          *httptest.Server
	url         string
	live, live2 string
	sb          string
	tsa         *countingTSA
	logs        *syncBuffer
}

// countingTSA counts timestamp requests and, while gate is set, holds each
// one until gate is closed.
type countingTSA struct {
	next timestamp.Timestamper
	n    atomic.Int64
	mu   sync.Mutex
	gate chan struct{}
}

func (c *countingTSA) Timestamp(ctx context.Context, d []byte) ([]byte, error) {
	c.n.Add(1)
	c.mu.Lock()
	g := c.gate
	c.mu.Unlock()
	if g != nil {
		select {
		case <-g:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.next.Timestamp(ctx, d)
}

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newHostile starts the service; configure, if given, adjusts its Config,
// and start, if given, its httptest server before it starts.
func newHostile(t *testing.T, configure func(*server.Config), start func(*httptest.Server)) *hostile {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{t: t, st: st, mat: mat, tsa: &countingTSA{next: mat.TSA}, logs: &syncBuffer{}}
	cfg := server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: h.tsa, Trust: mat.Trust, SandboxLimit: server.RateLimit{PerSecond: -1},
		Logger: slog.New(slog.NewTextHandler(h.logs, nil))}
	if configure != nil {
		configure(&cfg)
	}
	if h.srv, err = server.New(cfg); err != nil {
		t.Fatal(err)
	}
	h.ts = httptest.NewUnstartedServer(h.srv)
	if start != nil {
		start(h.ts)
	}
	h.ts.Start()
	t.Cleanup(h.ts.Close)
	h.url = h.ts.URL
	now := time.Now()
	if cfg.Now != nil {
		now = cfg.Now()
	}
	if _, err := server.CreateOrg(ctx, st, "acme", server.TierStandard, now); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		dst *string
		env vpec.Environment
	}{{&h.live, vpec.Production}, {&h.live2, vpec.Production}, {&h.sb, vpec.Sandbox}} {
		if *k.dst, _, err = server.CreateAPIKey(ctx, st, "acme", k.env, now); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// do sends a request (body: nil, a string sent as is, or JSON) with extra
// headers and returns the response with its body read.
func (h *hostile) do(method, path, key string, body any, hdr map[string]string) (*http.Response, []byte) {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, data
}

// errCode is the error code of an error body ("" if none).
func errCode(b []byte) string {
	var eb api.ErrorBody
	json.Unmarshal(b, &eb)
	return eb.Error.Code
}

// open opens a run with key.
func (h *hostile) open(key string) api.Run {
	h.t.Helper()
	var run api.Run
	resp, body := h.do("POST", "/api/v1/runs", key, api.OpenRunRequest{WorkflowID: "hostile"}, nil)
	if resp.StatusCode != 201 || json.Unmarshal(body, &run) != nil {
		h.t.Fatalf("open: %s %s", resp.Status, body)
	}
	return run
}

// closed opens a run with key, records n records through the API and
// closes it; it returns the run and its VPEC.
func (h *hostile) closed(key string, n int) (api.Run, []byte, string) {
	h.t.Helper()
	run := h.open(key)
	for _, rec := range chain(run.RunID, n) {
		if resp, body := h.do("POST", "/api/v1/runs/"+run.RunID+"/records", key, rec, nil); resp.StatusCode != 201 {
			h.t.Fatalf("record: %s %s", resp.Status, body)
		}
	}
	resp, doc := h.do("POST", "/api/v1/runs/"+run.RunID+"/close", key, nil, nil)
	if resp.StatusCode != 200 {
		h.t.Fatalf("close: %s %s", resp.Status, doc)
	}
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil {
		h.t.Fatal(err)
	}
	return run, doc, v.VPECID
}

// bigRun opens a run with key and stores about mb megabytes of chained
// records of about 15 KB straight into the store (past the API's rate and
// body limits: a fixture), returning the run id.
func (h *hostile) bigRun(key string, mb int) string {
	h.t.Helper()
	ctx := context.Background()
	run := h.open(key)
	pad := strings.Repeat("x", 15000)
	prev := vpec.Genesis(run.RunID)
	for i := range mb << 20 / 15400 {
		recs := chain(run.RunID, 1)
		recs[0].Sequence = int64(i + 1)
		recs[0].Details = map[string]any{"blob": pad}
		var err error
		if prev, err = issue.Chain(prev, recs); err != nil {
			h.t.Fatal(err)
		}
		b, err := canonical.Marshal(recs[0])
		if err != nil {
			h.t.Fatal(err)
		}
		if err := appendRaw(ctx, h.st, run.OrgID, store.Record{RunID: run.RunID, RecordID: recs[0].RecordID, Sequence: recs[0].Sequence, ChainHash: recs[0].ChainHash, Body: b}); err != nil {
			h.t.Fatal(err)
		}
	}
	return run.RunID
}

// closeRun closes runID with key and returns its VPEC and id.
func (h *hostile) closeRun(key, runID string) ([]byte, string) {
	h.t.Helper()
	resp, doc := h.do("POST", "/api/v1/runs/"+runID+"/close", key, nil, nil)
	if resp.StatusCode != 200 {
		h.t.Fatalf("close %s: %s %.300s", runID, resp.Status, doc)
	}
	var v struct {
		VPECID string `json:"vpec_id"`
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		h.t.Fatal(err)
	}
	return doc, v.VPECID
}

func (h *hostile) String() string { return fmt.Sprintf("service at %s", h.url) }
