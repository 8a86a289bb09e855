// Package svctest starts a real svc service for tests: SQLite in a
// temporary directory, fresh key material and built-in timestamp
// authority, an HTTP server on 127.0.0.1, one organisation "acme" with a
// production and a sandbox API key.
package svctest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// Service is a running service and what a test needs to talk to it.
type Service struct {
	// Store is the service's database in every role (svctest opened it):
	// tests publish through it and read what the service stored.
	Store    store.Store
	Material *server.Material
	// Server is the service's HTTP handler, before New's wrap: a test
	// puts its own front (a proxy that fails requests) before it.
	Server *server.Server
	// URL is the server's base URL; Key a production API key of "acme",
	// SandboxKey a sandbox one.
	URL, Key, SandboxKey string
}

// New starts a service that the test's cleanup stops. wrap, when not
// nil, wraps its HTTP handler (to count or observe requests). Sandbox rate
// limits are off; each configure then changes the server's configuration
// (a wrapped timestamp authority, a rate limit).
func New(tb testing.TB, wrap func(http.Handler) http.Handler, configure ...func(*server.Config)) *Service {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		tb.Fatal(err)
	}
	cfg := server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust, SandboxLimit: server.RateLimit{PerSecond: -1}}
	for _, c := range configure {
		c(&cfg)
	}
	if cfg.Log != nil && cfg.Log.Store == nil {
		cfg.Log.Store = st // WithLog's log records indexes in this store
	}
	srv, err := server.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var h http.Handler = srv
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	tb.Cleanup(hs.Close)
	s := &Service{Store: st, Material: mat, Server: srv, URL: hs.URL}
	if _, err := server.CreateOrg(ctx, st, "acme", server.TierStandard, time.Now()); err != nil {
		tb.Fatal(err)
	}
	if s.Key, _, err = server.CreateAPIKey(ctx, st, "acme", vpec.Production, time.Now()); err != nil {
		tb.Fatal(err)
	}
	if s.SandboxKey, _, err = server.CreateAPIKey(ctx, st, "acme", vpec.Sandbox, time.Now()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Pipeline returns a client pipeline (workflow "moderation") on the
// service, with its queue in a temporary directory, closed at cleanup.
func (s *Service) Pipeline(tb testing.TB) *client.Pipeline {
	tb.Helper()
	p, err := client.NewPipeline(client.Options{APIKey: s.Key, BaseURL: s.URL, WorkflowID: "moderation", QueuePath: filepath.Join(tb.TempDir(), "q.jsonl")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}
