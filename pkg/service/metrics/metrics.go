// Package metrics is the Prometheus instrumentation of svc serve: one
// Metrics value owns its own registry (no global default registry state),
// the HTTP server metrics, the Go and process collectors, and the domain
// metrics a governance operator watches. docs/OBSERVABILITY.md lists every
// metric with its labels.
//
// Labels are bounded: routes are patterns (never raw paths or ids), and no
// label carries an organisation, key, run or VPEC id. Every method is safe
// on a nil *Metrics (it does nothing), so code paths that may run without
// metrics (a test server, a CLI command) need no checks.
package metrics

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every svc metric.
const Namespace = "svc"

// Unmatched is the route label of a request no route matched.
const Unmatched = "unmatched"

// Metrics is the registry and the collectors of one server process.
// Create it with New.
type Metrics struct {
	reg *prometheus.Registry
	now func() time.Time

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	httpInFlight prometheus.Gauge
	httpReqSize  *prometheus.HistogramVec
	httpRespSize *prometheus.HistogramVec

	recordsAppended prometheus.Counter
	recordsRefused  *prometheus.CounterVec
	runsOpened      prometheus.Counter
	runsSealed      prometheus.Counter
	vpecsIssued     *prometheus.CounterVec
	gaps            *prometheus.CounterVec
	closeDuration   prometheus.Histogram

	tsaRequests  *prometheus.CounterVec
	tsaDuration  *prometheus.HistogramVec
	tsaFallbacks prometheus.Counter

	storeDuration *prometheus.HistogramVec
	storeErrors   *prometheus.CounterVec

	rateLimited    prometheus.Counter
	keyCache       *prometheus.CounterVec
	revokedRefused prometheus.Counter

	zkVerifications *prometheus.CounterVec
	zkDuration      prometheus.Histogram
	calibrations    *prometheus.CounterVec
	emails          *prometheus.CounterVec

	logAppended      prometheus.Counter
	logAppendPending prometheus.Gauge
	logAppendFailed  prometheus.Counter
	logIntegration   prometheus.Histogram
	logCheckpointAt  atomic.Int64 // unix nanoseconds of the newest checkpoint, 0 for none
	witnessCosigned  *prometheus.CounterVec
	logCheckpointAge prometheus.GaugeFunc
}

// Options configure New.
type Options struct {
	// Now is the clock for the checkpoint age (default time.Now).
	Now func() time.Time
}

// latency are the buckets of request, store, TSA and close latencies, in
// seconds: 0.5 ms to 30 s.
var latency = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// sizes are the buckets of request and response sizes in bytes: 64 B to 64 MiB.
var sizes = prometheus.ExponentialBuckets(64, 4, 11)

// New returns Metrics with a fresh registry holding the Go and process
// collectors and every svc metric.
func New(o Options) *Metrics {
	if o.Now == nil {
		o.Now = time.Now
	}
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg, now: o.Now}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
		reg.MustRegister(c)
		return c
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
		reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets})
		reg.MustRegister(h)
		return h
	}
	histogramVec := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
		reg.MustRegister(h)
		return h
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.httpRequests = counterVec("http_requests_total", "HTTP requests answered, by route pattern and status class.", "route", "status_class")
	m.httpDuration = histogramVec("http_request_duration_seconds", "HTTP request latency, by route pattern and status class.", latency, "route", "status_class")
	m.httpInFlight = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "http_requests_in_flight", Help: "HTTP requests being served."})
	reg.MustRegister(m.httpInFlight)
	m.httpReqSize = histogramVec("http_request_size_bytes", "HTTP request body sizes read, by route pattern.", sizes, "route")
	m.httpRespSize = histogramVec("http_response_size_bytes", "HTTP response body sizes written, by route pattern.", sizes, "route")

	m.recordsAppended = counter("records_appended_total", "Records stored (a retried duplicate is not counted).")
	m.recordsRefused = counterVec("records_refused_total", "Records refused, by the error code of the answer (docs/API.md).", "reason")
	m.runsOpened = counter("runs_opened_total", "Runs opened.")
	m.runsSealed = counter("runs_sealed_total", "Runs sealed with a VPEC issued.")
	m.vpecsIssued = counterVec("vpecs_issued_total", "VPECs issued, by environment and proof-level floor.", "environment", "proof_level")
	m.gaps = counterVec("gaps_total", "Gaps in issued VPECs, by gap type and severity.", "type", "severity")
	m.closeDuration = histogram("close_duration_seconds", "Time to seal a run and issue its VPEC.", latency)

	m.tsaRequests = counterVec("tsa_requests_total", "RFC 3161 timestamp requests, by authority (builtin, external) and result (ok, error).", "tsa", "result")
	m.tsaDuration = histogramVec("tsa_duration_seconds", "RFC 3161 timestamp latency, by authority.", latency, "tsa")
	m.tsaFallbacks = counter("tsa_fallbacks_total", "Timestamps made by the built-in authority because every external one failed (--tsa-fallback-builtin).")

	m.storeDuration = histogramVec("store_operation_duration_seconds", "Store operation latency, by operation (the store method).", latency, "operation")
	m.storeErrors = counterVec("store_errors_total", "Store operations that failed with an error other than not-found/sealed/conflict, by operation.", "operation")

	m.rateLimited = counter("rate_limited_total", "Requests refused by the sandbox rate limit (429).")
	m.keyCache = counterVec("key_cache_total", "API key look-ups, by result: hit (the in-process cache) or miss (a store read).", "result")
	m.revokedRefused = counter("revoked_key_refusals_total", "Requests refused because their API key is revoked.")

	m.zkVerifications = counterVec("zk_verifications_total", "zk_proof verifications of incoming records, by result (valid, invalid, error).", "result")
	m.zkDuration = histogram("zk_verification_duration_seconds", "zk_proof verification time.", latency)
	m.calibrations = counterVec("calibration_requests_total", "Calibration requests filed or moved, by the status they got.", "status")
	m.emails = counterVec("emails_total", "E-mails sent, by result (sent, failed).", "result")

	m.logAppended = counter("log_entries_appended_total", "Entries appended to the transparency log by this process.")
	m.logAppendPending = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "log_appends_pending",
		Help: "VPECs stored and answered whose transparency log append this process has not finished."})
	reg.MustRegister(m.logAppendPending)
	m.logAppendFailed = counter("log_append_failures_total", "Appends of stored VPECs to the transparency log that failed (the VPEC is appended again later).")
	m.logIntegration = histogram("log_integration_duration_seconds", "Time from appending a log entry to a checkpoint covering it.", latency)
	m.witnessCosigned = counterVec("witness_cosignatures_total", "Checkpoints sent to witnesses, by result (cosigned, stale, unreachable, conflict, rejected, failed).", "result")
	m.logCheckpointAge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "log_checkpoint_age_seconds",
		Help: "Seconds since the newest transparency log checkpoint this process saw (0 before any)."}, m.checkpointAge)
	reg.MustRegister(m.logCheckpointAge)
	return m
}

// Registry is the registry holding every metric, for a test or an
// embedding program that adds its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// StatusClass is the status class label of an HTTP status: "2xx" ... "5xx".
func StatusClass(status int) string {
	switch {
	case status >= 100 && status < 600:
		return strconv.Itoa(status/100) + "xx"
	default:
		return "other"
	}
}

// InFlight counts a request in flight; call the function it returns when
// it is answered.
func (m *Metrics) InFlight() func() {
	if m == nil {
		return func() {}
	}
	m.httpInFlight.Inc()
	return m.httpInFlight.Dec
}

// Request observes an answered request of route (a pattern, or Unmatched).
func (m *Metrics) Request(route string, status int, d time.Duration, reqBytes, respBytes int64) {
	if m == nil {
		return
	}
	class := StatusClass(status)
	m.httpRequests.WithLabelValues(route, class).Inc()
	m.httpDuration.WithLabelValues(route, class).Observe(d.Seconds())
	m.httpReqSize.WithLabelValues(route).Observe(float64(reqBytes))
	m.httpRespSize.WithLabelValues(route).Observe(float64(respBytes))
}

// RecordAppended counts a stored record.
func (m *Metrics) RecordAppended() {
	if m != nil {
		m.recordsAppended.Inc()
	}
}

// RecordRefused counts a refused record by its answer's error code.
func (m *Metrics) RecordRefused(reason string) {
	if m != nil {
		m.recordsRefused.WithLabelValues(reason).Inc()
	}
}

// RunOpened counts an opened run.
func (m *Metrics) RunOpened() {
	if m != nil {
		m.runsOpened.Inc()
	}
}

// Gap is what the metrics keep of a gap: its type and severity.
type Gap struct{ Type, Severity string }

// RunSealed counts a run sealed with its VPEC issued: the VPEC's
// environment and proof-level floor, its gaps, and how long the close took.
func (m *Metrics) RunSealed(environment, proofLevel string, gaps []Gap, d time.Duration) {
	if m == nil {
		return
	}
	m.runsSealed.Inc()
	m.vpecsIssued.WithLabelValues(environment, proofLevel).Inc()
	for _, g := range gaps {
		m.gaps.WithLabelValues(g.Type, g.Severity).Inc()
	}
	m.closeDuration.Observe(d.Seconds())
}

// Timestamp observes one request to an RFC 3161 authority (tsa: builtin
// or external).
func (m *Metrics) Timestamp(tsa string, d time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.tsaRequests.WithLabelValues(tsa, result).Inc()
	m.tsaDuration.WithLabelValues(tsa).Observe(d.Seconds())
}

// TimestampFallback counts a timestamp made by the fallback authority.
func (m *Metrics) TimestampFallback() {
	if m != nil {
		m.tsaFallbacks.Inc()
	}
}

// StoreOp observes one store operation; failed says whether it failed
// with an error worth counting (an outage, not a not-found answer).
func (m *Metrics) StoreOp(op string, d time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.storeDuration.WithLabelValues(op).Observe(d.Seconds())
	if failed {
		m.storeErrors.WithLabelValues(op).Inc()
	}
}

// RateLimited counts a request refused by the rate limit.
func (m *Metrics) RateLimited() {
	if m != nil {
		m.rateLimited.Inc()
	}
}

// KeyCache counts an API key look-up answered by the cache (hit) or not.
func (m *Metrics) KeyCache(hit bool) {
	if m == nil {
		return
	}
	if hit {
		m.keyCache.WithLabelValues("hit").Inc()
	} else {
		m.keyCache.WithLabelValues("miss").Inc()
	}
}

// RevokedKeyRefused counts a request refused for a revoked key.
func (m *Metrics) RevokedKeyRefused() {
	if m != nil {
		m.revokedRefused.Inc()
	}
}

// ZKVerification observes one zk_proof verification (result: valid,
// invalid or error).
func (m *Metrics) ZKVerification(result string, d time.Duration) {
	if m == nil {
		return
	}
	m.zkVerifications.WithLabelValues(result).Inc()
	m.zkDuration.Observe(d.Seconds())
}

// CalibrationRequest counts a calibration request that got status.
func (m *Metrics) CalibrationRequest(status string) {
	if m != nil {
		m.calibrations.WithLabelValues(status).Inc()
	}
}

// Email counts an e-mail sent (err nil) or failed.
func (m *Metrics) Email(err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.emails.WithLabelValues("failed").Inc()
	} else {
		m.emails.WithLabelValues("sent").Inc()
	}
}

// The transparency log's hooks. The code that appends to the log
// (pkg/service/logwriter through the server's close path) calls them:
// LogAppended per entry appended, LogIntegrated with the time from append
// to a checkpoint covering it, LogCheckpoint with each new checkpoint's
// time, and Witness from logwriter.Config.OnWitness with
// logwriter.WitnessResult(ev) as the result.

// LogAppended counts n entries appended to the transparency log.
func (m *Metrics) LogAppended(n int) {
	if m != nil && n > 0 {
		m.logAppended.Add(float64(n))
	}
}

// LogAppendPending moves the number of stored VPECs whose append is in
// progress by delta.
func (m *Metrics) LogAppendPending(delta int) {
	if m != nil {
		m.logAppendPending.Add(float64(delta))
	}
}

// LogAppendFailed counts one append of a stored VPEC that failed.
func (m *Metrics) LogAppendFailed() {
	if m != nil {
		m.logAppendFailed.Inc()
	}
}

// LogIntegrated observes the time from appending an entry to a
// checkpoint covering it.
func (m *Metrics) LogIntegrated(d time.Duration) {
	if m != nil {
		m.logIntegration.Observe(d.Seconds())
	}
}

// LogCheckpoint records the time of the newest checkpoint;
// svc_log_checkpoint_age_seconds is the time since.
func (m *Metrics) LogCheckpoint(at time.Time) {
	if m == nil {
		return
	}
	n := at.UnixNano()
	for {
		old := m.logCheckpointAt.Load()
		if old >= n || m.logCheckpointAt.CompareAndSwap(old, n) {
			return
		}
	}
}

func (m *Metrics) checkpointAge() float64 {
	at := m.logCheckpointAt.Load()
	if at == 0 {
		return 0
	}
	return max(0, m.now().Sub(time.Unix(0, at)).Seconds())
}

// Witness counts one checkpoint sent to a witness, by result: "cosigned",
// "stale" (the witness had cosigned a larger checkpoint already), or a
// failure class.
func (m *Metrics) Witness(result string) {
	if m != nil {
		m.witnessCosigned.WithLabelValues(result).Inc()
	}
}
