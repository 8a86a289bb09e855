package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// scrape GETs base/metrics and parses it with the Prometheus text parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + server.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sample is the sum over the series of metric name whose labels include
// want: counter and gauge values, histogram sample counts.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return 0
	}
	var sum float64
next:
	for _, m := range f.GetMetric() {
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// call sends a JSON request with key and returns the status.
func call(t *testing.T, method, url, key, body string) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestMetricsMove scrapes a real server before and after each event and
// checks the metric of the event moved.
func TestMetricsMove(t *testing.T) {
	ctx := context.Background()
	s := svctest.New(t, nil, func(c *server.Config) { c.SandboxLimit = server.RateLimit{PerSecond: 0.001, Burst: 1} })
	p := s.Pipeline(t)
	manifest := "sha256:" + fmt.Sprintf("%064x", 1)
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		event  func(t *testing.T)
		metric string
		labels map[string]string
	}{
		{"healthz", func(t *testing.T) { call(t, "GET", s.URL+"/healthz", "", "") },
			"svc_http_requests_total", map[string]string{"route": "GET /healthz", "status_class": "2xx"}},
		{"healthz latency", func(t *testing.T) { call(t, "GET", s.URL+"/healthz", "", "") },
			"svc_http_request_duration_seconds", map[string]string{"route": "GET /healthz"}},
		{"response size", func(t *testing.T) { call(t, "GET", s.URL+"/healthz", "", "") },
			"svc_http_response_size_bytes", map[string]string{"route": "GET /healthz"}},
		{"request size", func(t *testing.T) { call(t, "POST", s.URL+"/api/v1/runs/"+run.ID()+"/records", s.Key, "{}") },
			"svc_http_request_size_bytes", map[string]string{"route": "POST /api/v1/runs/{run_id}/records"}},
		{"no route", func(t *testing.T) { call(t, "GET", s.URL+"/no/such/page", "", "") },
			"svc_http_requests_total", map[string]string{"route": "unmatched", "status_class": "4xx"}},
		{"run opened", func(t *testing.T) {
			if _, err := p.Open(ctx, ""); err != nil {
				t.Fatal(err)
			}
		}, "svc_runs_opened_total", nil},
		{"record appended", func(t *testing.T) {
			if _, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}, "svc_records_appended_total", nil},
		{"store latency", func(t *testing.T) {
			if _, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte("y")); err != nil {
				t.Fatal(err)
			}
		}, "svc_store_operation_duration_seconds", map[string]string{"operation": "AppendRecord"}},
		{"record refused", func(t *testing.T) {
			if code := call(t, "POST", s.URL+"/api/v1/runs/"+run.ID()+"/records", s.Key, `{"record_id":1}`); code != 400 {
				t.Fatalf("bad record: %d", code)
			}
		}, "svc_records_refused_total", map[string]string{"reason": api.CodeBadRequest}},
		{"key cache miss", func(t *testing.T) {
			k, _, err := server.CreateAPIKey(ctx, s.Store, "acme", vpec.Production, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			call(t, "GET", s.URL+"/api/v1/runs/run_none", k, "")
		}, "svc_key_cache_total", map[string]string{"result": "miss"}},
		{"key cache hit", func(t *testing.T) {
			call(t, "GET", s.URL+"/api/v1/runs/run_none", s.Key, "")
			call(t, "GET", s.URL+"/api/v1/runs/run_none", s.Key, "")
		}, "svc_key_cache_total", map[string]string{"result": "hit"}},
		{"revoked key", func(t *testing.T) {
			k, id, err := server.CreateAPIKey(ctx, s.Store, "acme", vpec.Production, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Store.RevokeAPIKey(ctx, id.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			if code := call(t, "GET", s.URL+"/api/v1/runs/run_none", k, ""); code != 401 {
				t.Fatalf("revoked key: %d", code)
			}
		}, "svc_revoked_key_refusals_total", nil},
		{"rate limited", func(t *testing.T) {
			call(t, "GET", s.URL+"/api/v1/runs/run_none", s.SandboxKey, "")
			if code := call(t, "GET", s.URL+"/api/v1/runs/run_none", s.SandboxKey, ""); code != 429 {
				t.Fatalf("second sandbox request: %d", code)
			}
		}, "svc_rate_limited_total", nil},
		{"calibration request", func(t *testing.T) {
			if code := call(t, "POST", s.URL+"/api/v1/registry/calibration-requests", s.Key, `{"onnx_model_hash":"sha256:`+fmt.Sprintf("%064x", 7)+`"}`); code != 201 {
				t.Fatalf("calibration request: %d", code)
			}
		}, "svc_calibration_requests_total", map[string]string{"status": server.CalQueued}},
	}
	closeEvents := []struct {
		metric string
		labels map[string]string
	}{
		{"svc_runs_sealed_total", nil},
		{"svc_vpecs_issued_total", map[string]string{"environment": "production", "proof_level": "execution"}},
		{"svc_close_duration_seconds", nil},
		{"svc_tsa_requests_total", map[string]string{"tsa": "builtin", "result": "ok"}},
		{"svc_tsa_duration_seconds", map[string]string{"tsa": "builtin"}},
		{"svc_store_operation_duration_seconds", map[string]string{"operation": "SealRecords"}},
	}
	for _, c := range closeEvents {
		cases = append(cases, struct {
			name   string
			event  func(t *testing.T)
			metric string
			labels map[string]string
		}{"close: " + c.metric, func(t *testing.T) {
			r, err := p.Open(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte("z")); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}, c.metric, c.labels})
	}
	cases = append(cases, struct {
		name   string
		event  func(t *testing.T)
		metric string
		labels map[string]string
	}{"gap", func(t *testing.T) {
		r, err := p.Open(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}, "svc_gaps_total", map[string]string{"type": "empty_run", "severity": "High"}})
	// Last: the store fails under the server.
	cases = append(cases, struct {
		name   string
		event  func(t *testing.T)
		metric string
		labels map[string]string
	}{"store error", func(t *testing.T) {
		s.Store.Close()
		if code := call(t, "POST", s.URL+"/api/v1/runs/"+run.ID()+"/close", s.Key, ""); code != 500 {
			t.Fatalf("close on a closed store: %d", code)
		}
	}, "svc_store_errors_total", nil})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := sample(scrape(t, s.URL), c.metric, c.labels)
			c.event(t)
			after := sample(scrape(t, s.URL), c.metric, c.labels)
			if after <= before {
				t.Errorf("%s%v did not move: %v before, %v after", c.metric, c.labels, before, after)
			}
		})
	}
}

// TestMetricsProcess: the Go and process collectors, and the request in
// flight (the scrape itself).
func TestMetricsProcess(t *testing.T) {
	s := svctest.New(t, nil)
	fams := scrape(t, s.URL)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	if v := sample(fams, "svc_http_requests_in_flight", nil); v < 1 {
		t.Errorf("svc_http_requests_in_flight = %v during a scrape, want >= 1", v)
	}
}

// TestMetricsRouteCardinality: 500 distinct run ids give one series,
// labelled with the route pattern; no label carries an id (a label that
// did would give one series an id: 500).
func TestMetricsRouteCardinality(t *testing.T) {
	s := svctest.New(t, nil)
	const ids = 500
	for i := range ids {
		call(t, "GET", fmt.Sprintf("%s/api/v1/runs/run_%08d", s.URL, i), s.Key, "")
	}
	resp, err := http.Get(s.URL + server.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(raw, []byte("run_0")) {
		t.Fatal("a run id is in the metrics")
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var series int
	for _, m := range fams["svc_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" && strings.Contains(l.GetValue(), "/api/v1/runs/") {
				series++
				if l.GetValue() != "GET /api/v1/runs/{run_id}" {
					t.Errorf("route label %q", l.GetValue())
				}
			}
		}
	}
	if series != 1 {
		t.Errorf("%d series for %d run ids, want 1", series, ids)
	}
	if n := sample(fams, "svc_http_requests_total", map[string]string{"route": "GET /api/v1/runs/{run_id}"}); n != ids {
		t.Errorf("counted %v requests, want %d", n, ids)
	}
}

// TestMetricsElsewhere: with MetricsElsewhere the API listener has no
// /metrics.
func TestMetricsElsewhere(t *testing.T) {
	s := svctest.New(t, nil, func(c *server.Config) { c.MetricsElsewhere = true })
	if code := call(t, "GET", s.URL+server.MetricsPath, "", ""); code != 404 {
		t.Fatalf("GET /metrics with MetricsElsewhere: %d, want 404", code)
	}
}
