package setup_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// TestProbe asks a live service's /healthz and /readyz, and answers that
// are not healthy: a refused connection, an error status, a body that is
// not a health answer, a redirect (not followed), a service too slow.
func TestProbe(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := server.LoadMaterial(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: m.Signer, Timestamper: m.TSA, Trust: m.Trust, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	live := httptest.NewServer(srv)
	defer live.Close()
	for _, path := range []string{"/healthz", "/readyz"} {
		h, err := setup.Probe(ctx, live.URL+path, 5*time.Second)
		if err != nil || h.Version != "1.2.3" {
			t.Fatalf("%s: %+v %v", path, h, err)
		}
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/healthz"
	closed.Close()
	handler := func(status int, body string, delay time.Duration) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			if status == http.StatusFound {
				http.Redirect(w, r, live.URL+"/healthz", status)
				return
			}
			w.WriteHeader(status)
			io.WriteString(w, body)
		}))
		t.Cleanup(s.Close)
		return s.URL + "/healthz"
	}
	for _, tc := range []struct {
		name, url string
		status    int
	}{
		{"nothing listening", closedURL, 0},
		{"unavailable", handler(503, `{"status":"unavailable","detail":"database unreachable"}`, 0), 503},
		{"ok status with 500", handler(500, `{"status":"ok"}`, 0), 500},
		{"not a health answer", handler(200, `<html>`, 0), 200},
		{"other status", handler(200, `{"status":"starting"}`, 0), 200},
		{"redirect not followed", handler(http.StatusFound, "", 0), http.StatusFound},
		{"too slow", handler(200, `{"status":"ok"}`, 2*time.Second), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := setup.Probe(ctx, tc.url, 500*time.Millisecond)
			var pe *setup.ProbeError
			if !errors.Is(err, setup.ErrUnhealthy) || !errors.As(err, &pe) || pe.Status != tc.status {
				t.Fatalf("err = %v, want a ProbeError with status %d", err, tc.status)
			}
		})
	}
	for _, bad := range []string{"", "127.0.0.1:8080/healthz", "ftp://x/healthz", "http:///healthz"} {
		if _, err := setup.Probe(ctx, bad, time.Second); err == nil || errors.Is(err, setup.ErrUnhealthy) {
			t.Errorf("Probe(%q): %v, want a usage error", bad, err)
		}
	}
}
