package cli_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// svc serve --metrics-addr moves /metrics to its own listener, and
// --otel-endpoint exports the spans of requests to an OTLP/HTTP receiver
// (flushed at a graceful stop).
func TestServeMetricsAddrAndOTel(t *testing.T) {
	var exports atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == "POST" && r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			exports.Add(1)
		}
	}))
	defer recv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := l.Addr().String()
	l.Close()

	data := t.TempDir()
	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command("svc", "serve", "--data-dir", data, "--addr", "127.0.0.1:0", "--addr-file", addrFile,
		"--log-format", "json", "--metrics-addr", metricsAddr, "--otel-endpoint", recv.URL)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var base string
	for range 400 {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			base = "http://" + strings.TrimSpace(string(b))
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if base == "" {
		t.Fatal("svc serve did not start")
	}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(base + "/healthz"); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	if code, _ := get(base + "/metrics"); code != 404 {
		t.Errorf("/metrics on --addr with --metrics-addr: %d, want 404", code)
	}
	code, body := get("http://" + metricsAddr + "/metrics")
	if code != 200 || !strings.Contains(body, `svc_http_requests_total{route="GET /healthz",status_class="2xx"} 1`) {
		t.Errorf("/metrics on --metrics-addr: %d\n%.2000s", code, body)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("svc serve: %v\n%s", err, out.String())
	}
	if exports.Load() == 0 {
		t.Errorf("no spans exported to --otel-endpoint\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"msg":"serving metrics"`) {
		t.Errorf("no 'serving metrics' line:\n%s", out.String())
	}
}
