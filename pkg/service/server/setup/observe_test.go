package setup_test

import (
	"context"
	"crypto/sha256"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/service/metrics"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
)

// closedURL is an http URL on loopback where nothing listens.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String() + "/tsa"
	l.Close()
	return u
}

// metricsText GETs url and returns the exposition.
func metricsText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return string(b)
}

// TestObservedTimestamperAndMetricsAddr: an external authority that
// fails and the built-in fallback are counted per authority, the fallback
// as such; ServeMetrics serves them on their own listener until ctx ends.
func TestObservedTimestamperAndMetricsAddr(t *testing.T) {
	m, err := server.LoadMaterial(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	reg := metrics.New(metrics.Options{})
	ts := setup.ObservedTimestamper([]string{closedURL(t)}, true, m.TSA, quiet, reg, nil)
	digest := sha256.Sum256([]byte("x"))
	if _, err := ts.Timestamp(context.Background(), digest[:]); err != nil {
		t.Fatalf("fallback timestamp: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := setup.ServeMetrics(ctx, "127.0.0.1:0", reg.Handler())
	if err != nil {
		t.Fatal(err)
	}
	text := metricsText(t, "http://"+addr.String()+server.MetricsPath)
	for _, want := range []string{
		`svc_tsa_requests_total{result="error",tsa="external"} 1`,
		`svc_tsa_requests_total{result="ok",tsa="builtin"} 1`,
		`svc_tsa_fallbacks_total 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("metrics server ended with %v", err)
	}
	if _, err := http.Get("http://" + addr.String() + server.MetricsPath); err == nil {
		t.Fatal("metrics listener still answers after ctx ended")
	}
}
