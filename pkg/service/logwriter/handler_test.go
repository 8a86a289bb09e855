package logwriter_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/tlogtest"
)

// TestHandler: the log is served read-only in the tlog-tiles layout:
// the checkpoint uncached, tiles and entry bundles immutable, and nothing
// else (not the private .state directory, not another path, no write).
func TestHandler(t *testing.T) {
	l := tlogtest.OpenLog(t, t.TempDir(), "log", nil)
	_, idx := appendN(t, l, "h", 3)
	await(t, l, idx[2])
	cp, err := l.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	size := strings.SplitN(string(cp), "\n", 3)[1]
	srv := httptest.NewServer(http.StripPrefix("/log", l.Handler()))
	defer srv.Close()
	for _, c := range []struct {
		method, path string
		status       int
		ctype, cache string
		body         string
	}{
		{"GET", "/log/checkpoint", 200, "text/plain; charset=utf-8", "no-cache", string(cp)},
		{"HEAD", "/log/checkpoint", 200, "text/plain; charset=utf-8", "no-cache", ""},
		{"GET", "/log/tile/0/000.p/" + size, 200, "application/octet-stream", "public, max-age=31536000, immutable", ""},
		{"GET", "/log/tile/entries/000.p/" + size, 200, "application/octet-stream", "public, max-age=31536000, immutable", ""},
		{"GET", "/log/tile/0/000", 404, "", "", ""},
		{"GET", "/log/.state/treeState", 404, "", "", ""},
		{"GET", "/log/tile/../.state/treeState", 404, "", "", ""},
		{"GET", "/log/tile/entries/.p", 404, "", "", ""},
		{"GET", "/log/tile/0/000.p", 404, "", "", ""},
		{"GET", "/log/tile/0/0000", 404, "", "", ""},
		{"GET", "/log/tile/64/000", 404, "", "", ""},
		{"GET", "/log/", 404, "", "", ""},
		{"POST", "/log/checkpoint", 405, "", "", ""},
		{"PUT", "/log/tile/0/000.p/" + size, 405, "", "", ""},
	} {
		req, err := http.NewRequest(c.method, srv.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = c.path // keep ".." as sent
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
			continue
		}
		if c.status != 200 {
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != c.ctype {
			t.Errorf("%s %s: Content-Type %q, want %q", c.method, c.path, got, c.ctype)
		}
		if got := resp.Header.Get("Cache-Control"); got != c.cache {
			t.Errorf("%s %s: Cache-Control %q, want %q", c.method, c.path, got, c.cache)
		}
		if c.body != "" && string(body) != c.body {
			t.Errorf("%s %s: body %q, want %q", c.method, c.path, body, c.body)
		}
		if c.method == "GET" && len(body) == 0 {
			t.Errorf("%s %s: empty body", c.method, c.path)
		}
	}
}
