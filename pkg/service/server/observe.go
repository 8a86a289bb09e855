package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/metrics"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/telemetry"
)

// MetricsPath is where the main listener serves the Prometheus metrics,
// unauthenticated (they hold counts, never organisation data), unless
// Config.MetricsElsewhere.
const MetricsPath = "/metrics"

// RequestIDHeader carries a request's id: the client's when well-formed
// (ValidRequestID), a fresh one otherwise; every answer carries it and
// every log line of the request names it (request_id).
const RequestIDHeader = "X-Request-Id"

// MaxRequestIDLen bounds a request id accepted from a client.
const MaxRequestIDLen = 128

// ValidRequestID reports whether a client's X-Request-Id is kept: 1 to
// MaxRequestIDLen characters of A-Z a-z 0-9 and "-", "_", ".", ":", "=" (a
// UUID, a ULID, a hex trace id, a load balancer's id), so that it is safe
// in a log line and a header.
func ValidRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':' || c == '=') {
			return false
		}
	}
	return true
}

// newRequestID is 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type requestIDKey struct{}

// RequestID is the id of the request ctx serves, "" outside one.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestLog is a slog.Handler adding request_id to every record logged
// with a request's context (the server logs with the *Context methods).
type requestLog struct{ slog.Handler }

func (h requestLog) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestLog) WithAttrs(as []slog.Attr) slog.Handler {
	return requestLog{h.Handler.WithAttrs(as)}
}

func (h requestLog) WithGroup(name string) slog.Handler { return requestLog{h.Handler.WithGroup(name)} }

// countingBody counts the request body bytes read.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// Route patterns whose outcomes are domain events.
const (
	routeOpenRun = "POST /api/v1/runs"
	routeRecord  = "POST /api/v1/runs/{run_id}/records"
)

// ServeHTTP serves a request with its id (X-Request-Id), its span
// (continuing the caller's W3C trace context) and its metrics, then
// dispatches it (serve).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get(RequestIDHeader)
	if !ValidRequestID(id) {
		id = newRequestID()
	}
	w.Header().Set(RequestIDHeader, id)
	ctx := context.WithValue(r.Context(), requestIDKey{}, id)
	ctx = telemetry.Propagator().Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx, span := s.tracer.Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method)))
	defer span.End()
	var body *countingBody
	if r.Body != nil && r.Body != http.NoBody {
		body = &countingBody{ReadCloser: r.Body}
		r.Body = body
	}
	done := s.metrics.InFlight()
	rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		done()
		route := rw.route
		if route == "" {
			route = metrics.Unmatched
		}
		var in int64
		if body != nil {
			in = body.n
		}
		s.metrics.Request(route, rw.status, time.Since(start), in, rw.n)
		s.countOutcome(route, rw)
		span.SetName(route)
		span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", rw.status))
		if rw.status >= 500 {
			span.SetStatus(codes.Error, rw.code)
		}
	}()
	s.serve(rw, r.WithContext(ctx))
}

// countOutcome counts the domain events an answer is: a record stored or
// refused (by its error code), a run opened, a rate-limited request.
func (s *Server) countOutcome(route string, rw *statusWriter) {
	if rw.code == api.CodeRateLimited {
		s.metrics.RateLimited()
	}
	switch {
	case route == routeRecord && rw.status == http.StatusCreated:
		s.metrics.RecordAppended()
	case route == routeRecord && rw.status >= 400:
		reason := rw.code
		if reason == "" {
			reason = metrics.StatusClass(rw.status)
		}
		s.metrics.RecordRefused(reason)
	case route == routeOpenRun && rw.status == http.StatusCreated:
		s.metrics.RunOpened()
	}
}

// serveMetrics serves GET /metrics.
func (s *Server) serveMetrics() http.Handler { return s.metrics.Handler() }

// span starts a span named name inside ctx's; end it with the returned
// function, passing the operation's error.
func (s *Server) span(ctx context.Context, name string) (context.Context, func(error)) {
	ctx, sp := s.tracer.Start(ctx, name)
	return ctx, func(err error) {
		if err != nil {
			sp.RecordError(err)
			sp.SetStatus(codes.Error, "")
		}
		sp.End()
	}
}

// storeObserver observes store operations: latency and errors by
// operation, and a span each.
type storeObserver struct {
	m *metrics.Metrics
	t trace.Tracer
}

func (o storeObserver) start(ctx context.Context, op string) (context.Context, func(error)) {
	begin := time.Now()
	ctx, sp := o.t.Start(ctx, "store."+op)
	return ctx, func(err error) {
		failed := storeFailure(err)
		o.m.StoreOp(op, time.Since(begin), failed)
		if failed {
			sp.RecordError(err)
			sp.SetStatus(codes.Error, "")
		}
		sp.End()
	}
}

// storeFailure reports whether err is a store failure rather than an
// answer (not found, sealed, conflict, ... are answers).
func storeFailure(err error) bool {
	if err == nil {
		return false
	}
	for _, answer := range []error{store.ErrNotFound, store.ErrExists, store.ErrSealed, store.ErrConflict,
		store.ErrRevoked, store.ErrRunFull, store.ErrNotSealed, context.Canceled} {
		if errors.Is(err, answer) {
			return false
		}
	}
	return !errors.As(err, new(*store.LimitError))
}

// ObservedTimestamper wraps an RFC 3161 authority with the TSA metrics
// (svc_tsa_requests_total{tsa}, svc_tsa_duration_seconds{tsa}) and a span
// per request; tsa is "builtin" or "external". svc serve wraps each
// authority it is given (setup.Timestamper).
func ObservedTimestamper(t timestamp.Timestamper, tsa string, m *metrics.Metrics, tp trace.TracerProvider) timestamp.Timestamper {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return &observedTSA{next: t, tsa: tsa, m: m, t: tp.Tracer(telemetry.ScopeName)}
}

type observedTSA struct {
	next timestamp.Timestamper
	tsa  string
	m    *metrics.Metrics
	t    trace.Tracer
}

func (o *observedTSA) Timestamp(ctx context.Context, digest []byte) ([]byte, error) {
	begin := time.Now()
	ctx, sp := o.t.Start(ctx, "tsa.timestamp", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("svc.tsa", o.tsa)))
	defer sp.End()
	tok, err := o.next.Timestamp(ctx, digest)
	o.m.Timestamp(o.tsa, time.Since(begin), err)
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "")
	}
	return tok, err
}

// zkResult is the result label of a proof verification: valid or invalid.
func zkResult(err error) string {
	if err != nil {
		return "invalid"
	}
	return "valid"
}

// metricGaps are the type and severity of each gap.
func metricGaps(gs []vpec.Gap) []metrics.Gap {
	out := make([]metrics.Gap, len(gs))
	for i, g := range gs {
		out[i] = metrics.Gap{Type: g.GapType, Severity: string(g.Severity)}
	}
	return out
}
