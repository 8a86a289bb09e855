package metrics_test

import (
	"errors"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/svc-gov/svc/pkg/service/metrics"
)

func gather(t *testing.T, m *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func value(f *dto.MetricFamily, label string) float64 {
	var v float64
	for _, m := range f.GetMetric() {
		if label != "" {
			ok := false
			for _, l := range m.GetLabel() {
				ok = ok || l.GetValue() == label
			}
			if !ok {
				continue
			}
		}
		switch {
		case m.Counter != nil:
			v += m.GetCounter().GetValue()
		case m.Gauge != nil:
			v += m.GetGauge().GetValue()
		case m.Histogram != nil:
			v += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return v
}

// TestHooks: the hooks the transparency log and the e-mail sender call
// move their metrics; the checkpoint age follows the clock.
func TestHooks(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m := metrics.New(metrics.Options{Now: func() time.Time { return now }})
	if v := value(gather(t, m)["svc_log_checkpoint_age_seconds"], ""); v != 0 {
		t.Errorf("checkpoint age before any checkpoint: %v", v)
	}
	m.LogAppended(3)
	m.LogAppendPending(2)
	m.LogAppendPending(-1)
	m.LogAppendFailed()
	m.LogIntegrated(2 * time.Second)
	m.LogCheckpoint(now.Add(-90 * time.Second))
	m.LogCheckpoint(now.Add(-200 * time.Second)) // older: ignored
	m.Witness("cosigned")
	m.Witness("unreachable")
	m.Email(nil)
	m.Email(errors.New("smtp down"))
	m.TimestampFallback()
	for _, c := range []struct {
		name, label string
		want        float64
	}{
		{"svc_log_entries_appended_total", "", 3},
		{"svc_log_appends_pending", "", 1},
		{"svc_log_append_failures_total", "", 1},
		{"svc_log_integration_duration_seconds", "", 1},
		{"svc_log_checkpoint_age_seconds", "", 90},
		{"svc_witness_cosignatures_total", "cosigned", 1},
		{"svc_witness_cosignatures_total", "unreachable", 1},
		{"svc_emails_total", "sent", 1},
		{"svc_emails_total", "failed", 1},
		{"svc_tsa_fallbacks_total", "", 1},
	} {
		if got := value(gather(t, m)[c.name], c.label); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.label, got, c.want)
		}
	}
}

// TestStatusClass names the class of each status.
func TestStatusClass(t *testing.T) {
	for status, want := range map[int]string{200: "2xx", 201: "2xx", 304: "3xx", 404: "4xx", 499: "4xx", 503: "5xx", 0: "other", 700: "other"} {
		if got := metrics.StatusClass(status); got != want {
			t.Errorf("StatusClass(%d) = %q, want %q", status, got, want)
		}
	}
}
