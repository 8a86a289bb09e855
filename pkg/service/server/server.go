// Package server is the Governance Proof Service: the HTTP API v1 over a
// store, signing VPECs with the service key and timestamping them with an
// RFC 3161 authority. docs/API.md documents the endpoints.
package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/metrics"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/telemetry"
)

// DefaultMaxBodyBytes bounds request bodies unless Config says otherwise.
const DefaultMaxBodyBytes = 1 << 20

// Config configures a Server.
type Config struct {
	// Storage persists everything, one role a field (StorageOf fills
	// every field from one backend). Required but for its optional roles.
	Storage Storage
	// Signer signs VPECs and profiles. Required.
	Signer *signing.Signer
	// Keys, when set, are the VPEC signing keys with their trust root
	// windows (keyring.go): a close signs with the key valid at its
	// genTime, so a rotation takes effect at its instant without a
	// restart. Nil: Signer signs every VPEC.
	Keys *KeyRing
	// Timestamper obtains RFC 3161 tokens (the built-in authority or
	// external ones). Required.
	Timestamper timestamp.Timestamper
	// TrustRoot is the svc.trust-root/v1 document published at
	// /.well-known/svc/trust-root.json (EnsureTrustRoot); nil answers 404.
	TrustRoot []byte
	// Trust is the bundle published at /.well-known/svc/trust-bundle.pem
	// and used to check review timestamps. Required.
	Trust *signing.Bundle
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// MaxBodyBytes bounds request bodies (default 1 MiB); larger get 413.
	MaxBodyBytes int64
	// Version is reported by /healthz.
	Version string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// SandboxLimit rate-limits each sandbox (pk_sb_) key; the zero value
	// means DefaultSandboxRate and DefaultSandboxBurst, a negative PerSecond means no limit.
	// Production keys are not rate-limited.
	SandboxLimit RateLimit
	// LineageTTL is how long a delegation lineage token stays valid
	// (default 24 h).
	LineageTTL time.Duration
	// RunLimits bound the records of a run (decision D1 in docs/API.md);
	// zero fields take the defaults.
	RunLimits RunLimits
	// Dashboard configures the web dashboard and the /verify page.
	Dashboard DashboardConfig
	// LoadBytes bounds the bytes of the VPECs that requests hold in
	// memory at once: GET /api/v1/vpecs/{id}, its attestation, a close
	// answering with a stored VPEC, and the dashboard's VPEC pages and
	// downloads (one budget, dashboard.Budget); past it a request gets
	// 503 service_busy with Retry-After. Default Dashboard.VerifyBytes,
	// else dashboard.DefaultVerifyBytes.
	LoadBytes int64
	// Metrics receives the server's metrics, served at GET /metrics
	// (MetricsPath) unless MetricsElsewhere; nil makes a private one.
	Metrics *metrics.Metrics
	// MetricsElsewhere leaves /metrics off this handler (svc serve
	// --metrics-addr serves Metrics.Handler on its own listener).
	MetricsElsewhere bool
	// Tracing makes the spans of each request and of the store, TSA,
	// signing and proof verification work inside it; nil makes none.
	Tracing trace.TracerProvider
	// uninstrumented leaves out metrics, spans and the store and TSA
	// wrappers (a benchmark's baseline; export_test.go).
	uninstrumented bool
	// WriteStall is how long a client may take to accept each 256 KiB of
	// a large response (a VPEC, an attestation, /verify) before it is cut
	// (default httpbody.DefaultStall, 30 s): large bodies are written
	// with progress deadlines, so a slow client that keeps reading gets
	// them whole whatever the HTTP server's write timeout.
	WriteStall time.Duration
	// Log is the transparency log every sealed VPEC is appended to
	// (translog.go, docs/TRANSPARENCY.md); nil: none.
	Log *TransparencyLog
}

// Server serves the API. Create it with New.
type Server struct {
	cfg      Config
	log      *slog.Logger
	metrics  *metrics.Metrics
	integr   integration
	behind   logBehind
	tracer   trace.Tracer
	mux      *http.ServeMux
	patterns []string
	sandbox  *limiter
	keys     keyCache
	// runs caches runs by id for the record path; the sealed flag is
	// re-checked by AppendRecord, so a stale flag is harmless.
	runs boundedMap[store.Run]
	// tips caches the chain hash of the last record stored per run, so the
	// next record's chain check needs no read.
	tips boundedMap[chainTip]
	// profiles caches published profiles by id (they are immutable) for
	// the checks of Bounded Inference records.
	profileCache boundedMap[*profile.Profile]
	// scopes caches each run's organisation and environment (immutable)
	// for the environment check of run-scoped routes.
	scopes boundedMap[runScope]
	// loads is the LoadBytes budget, shared with the dashboard.
	loads *dashboard.Budget
	// closes are the closes in progress in this process, one per run.
	closes closeFlights
	// ring is Config.Keys, or a ring of Config.Signer alone.
	ring *KeyRing
	// rootDoc is the trust root document ReloadTrustRoot read, served
	// instead of Config.TrustRoot once set.
	rootDoc atomic.Pointer[[]byte]
	// attests are the attestation seals made by this process, one per VPEC.
	attests attestations
}

// keyCache remembers valid API keys found by hash for keyCacheTTL, sparing
// a database read per request. A key revoked (svc admin key revoke) or
// deleted in the database is refused by every process sharing it once its
// entry expires: within keyCacheTTL.
type keyCache struct {
	mu sync.Mutex
	m  map[string]cachedKey
}

type cachedKey struct {
	key     store.APIKey
	expires time.Time
}

// keyCacheTTL bounds how long a revoked key keeps working in a process
// (the revocation promise of docs/API.md is one second); it costs one
// indexed read per key per keyCacheTTL.
const keyCacheTTL = 500 * time.Millisecond

func (c *keyCache) get(hash []byte, now time.Time) (store.APIKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[string(hash)]
	if !ok || now.After(e.expires) {
		return store.APIKey{}, false
	}
	return e.key, true
}

func (c *keyCache) put(k store.APIKey, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10000 {
		c.m = map[string]cachedKey{}
	}
	c.m[string(k.Hash)] = cachedKey{k, now.Add(keyCacheTTL)}
}

// New checks cfg and builds the server's routes.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Storage.missing() != "":
		return nil, fmt.Errorf("server: Config.Storage.%s is required", cfg.Storage.missing())
	case cfg.Signer == nil:
		return nil, errors.New("server: Config.Signer is required")
	case cfg.Timestamper == nil:
		return nil, errors.New("server: Config.Timestamper is required")
	case cfg.Trust == nil:
		return nil, errors.New("server: Config.Trust is required")
	}
	if err := checkLogConfig(cfg.Log); err != nil {
		return nil, err
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.SandboxLimit == (RateLimit{}) {
		cfg.SandboxLimit = RateLimit{PerSecond: DefaultSandboxRate, Burst: DefaultSandboxBurst}
	}
	if cfg.LineageTTL <= 0 {
		cfg.LineageTTL = 24 * time.Hour
	}
	cfg.RunLimits = cfg.RunLimits.withDefaults()
	log = slog.New(requestLog{log.Handler()})
	if cfg.Metrics == nil && !cfg.uninstrumented {
		cfg.Metrics = metrics.New(metrics.Options{})
	}
	if cfg.Tracing == nil {
		cfg.Tracing = noop.NewTracerProvider()
	}
	tracer := cfg.Tracing.Tracer(telemetry.ScopeName)
	if !cfg.uninstrumented {
		cfg.Storage = storeObserver{cfg.Metrics, tracer}.instrument(cfg.Storage)
		if a, ok := cfg.Timestamper.(*timestamp.Authority); ok {
			cfg.Timestamper = ObservedTimestamper(a, "builtin", cfg.Metrics, cfg.Tracing)
		}
	}
	if cfg.LoadBytes <= 0 {
		cfg.LoadBytes = cfg.Dashboard.VerifyBytes
	}
	s := &Server{cfg: cfg, log: log, mux: http.NewServeMux(), sandbox: newLimiter(cfg.SandboxLimit, cfg.Now), loads: dashboard.NewBudget(cfg.LoadBytes),
		metrics: cfg.Metrics, tracer: tracer}
	s.runs.max, s.tips.max, s.profileCache.max = 50000, 50000, 1000
	s.scopes.max = 50000
	if s.ring = cfg.Keys; s.ring == nil {
		s.ring, _ = NewKeyRing(nil, cfg.Signer) // Signer is not nil: checked above
	}
	s.attests.max = maxAttestations
	s.routes()
	if err := s.mountDashboard(); err != nil {
		return nil, err
	}
	return s, nil
}

// Routes lists every route as a "METHOD /path" pattern, for the API
// document test.
func (s *Server) Routes() []string { return append([]string(nil), s.patterns...) }

func (s *Server) handle(pattern string, h http.HandlerFunc) {
	s.mux.HandleFunc(pattern, h)
	s.patterns = append(s.patterns, pattern)
}

func (s *Server) routes() {
	s.handle("GET /healthz", s.healthz)
	if !s.cfg.MetricsElsewhere && s.metrics != nil {
		s.handle("GET "+MetricsPath, s.serveMetrics().ServeHTTP)
	}
	s.handle("GET /readyz", s.readyz)
	s.handle("GET "+api.TrustBundlePath, s.trustBundle)
	s.handle("GET "+api.TrustRootPath, s.trustRoot)
	s.handle("POST /api/v1/runs", s.auth(s.openRun))
	s.handle("GET /api/v1/runs/{run_id}", s.auth(s.getRun))
	s.handle("POST /api/v1/runs/{run_id}/records", s.auth(s.record))
	s.handle("POST /api/v1/runs/{run_id}/records:batch", s.auth(s.recordBatch))
	// Closing is exempt from the sandbox rate limit: a rate-limited close
	// would leave the client with only an offline VPEC.
	s.handle("POST /api/v1/runs/{run_id}/close", s.authWith(false, s.closeRun))
	s.handle("POST /api/v1/runs/{run_id}/delegations", s.auth(s.delegate))
	s.handle("POST /api/v1/runs/resume", s.auth(s.resume))
	s.handle("POST /api/v1/runs/{run_id}/sessions", s.auth(s.openSession))
	s.handle("POST /api/v1/runs/{run_id}/sessions/{session_id}/close", s.auth(s.closeSession))
	s.handle("POST /api/v1/reviewers", s.auth(s.registerReviewer))
	s.handle("GET /api/v1/vpecs/{vpec_id}", s.auth(s.getVPEC))
	s.handle("GET /api/v1/vpecs/{vpec_id}/attestation", s.auth(s.getAttestation))
	s.handle("POST /api/v1/manifests", s.auth(s.registerManifest))
	s.handle("GET /api/v1/manifests/{manifest_id}", s.auth(s.getManifest))
	s.handle("GET /api/v1/registry/profiles", s.auth(s.profiles))
	s.handle("GET /api/v1/registry/lookup", s.auth(s.lookup))
	s.handle("GET /api/v1/registry/circuits", s.auth(s.circuits))
	s.handle("POST /api/v1/registry/calibration-requests", s.auth(s.requestCalibration))
	s.handle("GET /api/v1/registry/calibration-requests/{request_id}", s.auth(s.getCalibrationRequest))
	s.logRoutes()
}

// serve logs each request and dispatches it. Every response carries
// X-Content-Type-Options: nosniff. A response whose body could not be
// written whole (the client went away, or took no chunk within
// WriteStall) is logged as "response cut" at warning level, with the
// status that was sent and the bytes that were, never as a "request" line.
func (s *Server) serve(rw *statusWriter, r *http.Request) {
	start := s.cfg.Now()
	ctx := r.Context()
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	defer func() {
		if v := recover(); v != nil {
			s.log.ErrorContext(ctx, "panic serving request", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
			if !rw.wrote {
				writeError(rw, http.StatusInternalServerError, api.CodeInternal, "internal error", "")
			}
		}
		ms := float64(s.cfg.Now().Sub(start).Microseconds()) / 1000
		if rw.err != nil {
			s.log.WarnContext(ctx, "response cut", "method", r.Method, "path", r.URL.Path, "status_sent", rw.status, "bytes_sent", rw.n,
				"content_length", rw.Header().Get("Content-Length"), "error", rw.err.Error(), "duration_ms", ms)
			return
		}
		s.log.InfoContext(ctx, "request", "method", r.Method, "path", r.URL.Path, "status", rw.status, "duration_ms", ms)
	}()
	// A path not in canonical form (//api/v1/..., /./, /../) is not an
	// endpoint: the router would answer a redirect with an HTML body, and
	// a redirected POST is not something an API client should follow.
	if p := r.URL.Path; p != canonicalPath(p) {
		writeError(rw, http.StatusNotFound, api.CodeNoEndpoint, fmt.Sprintf("no endpoint %s %q: the path is not in canonical form (did you mean %s?); see docs/API.md", r.Method, p, canonicalPath(p)), "")
		return
	}
	_, pattern := s.mux.Handler(r)
	if pattern == "" {
		noEndpoint(rw, r)
		return
	}
	rw.route = pattern
	s.mux.ServeHTTP(rw, r)
}

// noEndpoint answers 404 no_endpoint.
func noEndpoint(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, api.CodeNoEndpoint, fmt.Sprintf("no endpoint %s %s; see docs/API.md", r.Method, r.URL.Path), "")
}

// canonicalPath is p cleaned as the router cleans it: rooted, no empty,
// "." or ".." elements, a trailing slash kept.
func canonicalPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// statusWriter keeps what ServeHTTP logs of a response: its status, the
// body bytes written, and the first write error (a cut response).
type statusWriter struct {
	http.ResponseWriter
	// route is the matched route pattern, code the API error code
	// answered (writeError), for the metrics.
	route, code string
	status      int
	wrote       bool
	n           int64
	err         error
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status = code
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (write
// deadlines, flushes).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// --- responses -----------------------------------------------------------------

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := document.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, "encode response", "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, code, msg, field string) {
	if sw, ok := w.(*statusWriter); ok {
		sw.code = code
	}
	b, _ := json.Marshal(api.ErrorBody{Error: api.Error{Code: code, Message: msg, Field: field}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// httpError is an error with the response it maps to.
type httpError struct {
	status int
	code   string
	msg    string
	field  string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(field, format string, a ...any) *httpError {
	return &httpError{http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf(format, a...), field}
}

// fail writes err: an *httpError as itself, store sentinels as their
// status, anything else as a logged 500.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	switch {
	case errors.As(err, &he):
		writeError(w, he.status, he.code, he.msg, he.field)
	case errors.As(err, new(*busyError)):
		w.Header().Set("Retry-After", strconv.Itoa(busyRetryAfter))
		writeError(w, http.StatusServiceUnavailable, api.CodeServiceBusy, err.Error(), "")
	case sentinelError(err) != nil:
		he := sentinelError(err)
		writeError(w, he.status, he.code, he.msg, he.field)
	case errors.Is(err, context.Canceled):
		writeError(w, 499, api.CodeInternal, "request cancelled", "")
	default:
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "error", err.Error())
		writeError(w, http.StatusInternalServerError, api.CodeInternal, "internal error; the service log has the details", "")
	}
}

// sentinelError is the response to a store sentinel (ErrNotFound,
// ErrSealed, ErrConflict) err matches, nil for any other error.
func sentinelError(err error) *httpError {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &httpError{http.StatusNotFound, api.CodeNotFound, "not found", ""}
	case errors.Is(err, store.ErrSealed):
		return &httpError{http.StatusConflict, api.CodeRunSealed, "the run is sealed: it was closed and its VPEC issued; open a new run", ""}
	case errors.Is(err, store.ErrConflict):
		return &httpError{http.StatusConflict, api.CodeSequenceConflict, "a different record already holds this record_id or sequence", ""}
	}
	return nil
}

// decode reads a JSON body strictly into v: application/json, at most
// MaxBodyBytes, no duplicate, unknown or mistyped fields. It returns the
// parsed tree for canonical encoding.
func (s *Server) decode(r *http.Request, v any) (*canonical.Value, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	return parseBody(body, v)
}

// readBody reads a JSON request body: application/json, at most
// MaxBodyBytes.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	if err := checkMediaType(r.Header.Values("Content-Type")); err != nil {
		return nil, err
	}
	if err := checkContentEncoding(r.Header.Values("Content-Encoding")); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, badRequest("", "read body: %v", err)
	}
	if int64(len(body)) > s.cfg.MaxBodyBytes {
		return nil, &httpError{http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge, fmt.Sprintf("body larger than %d bytes", s.cfg.MaxBodyBytes), ""}
	}
	return body, nil
}

// parseBody parses a request body strictly into v (no duplicate, unknown
// or mistyped fields, then v's documented limits) and returns the tree.
func parseBody(body []byte, v any) (*canonical.Value, error) {
	tree, err := document.Parse(body, v)
	if err != nil {
		return nil, schemaError(err)
	}
	if l, ok := v.(limited); ok {
		if err := l.CheckLimits(); err != nil {
			return nil, limitError(err)
		}
	}
	return tree, nil
}

// checkMediaType accepts exactly one Content-Type header whose media type
// is application/json, with optional parameters (RFC 9110 8.3.1: the type
// is case-insensitive); anything else, a missing header included, is 415.
func checkMediaType(values []string) error {
	refuse := func(got string) error {
		return &httpError{http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia, "send the body with Content-Type: application/json (got " + got + ")", "Content-Type"}
	}
	switch len(values) {
	case 0:
		return refuse("no Content-Type")
	case 1:
	default:
		return refuse(fmt.Sprintf("%d Content-Type headers", len(values)))
	}
	mt, params, err := mime.ParseMediaType(values[0])
	if err != nil || mt != "application/json" {
		return refuse(quoteHeader(values[0]))
	}
	// JSON is UTF-8 (RFC 8259 8.1): a body declared in another charset
	// would be read as something else than its sender meant.
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &httpError{http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia,
			"send the body as UTF-8 JSON: charset " + quoteHeader(cs) + " is not accepted (use Content-Type: application/json, or application/json; charset=utf-8)", "Content-Type"}
	}
	return nil
}

// checkContentEncoding accepts a body sent as is: no Content-Encoding
// header, or identity. The service does not decompress request bodies, so
// a compressed one is refused by name (415) rather than read as JSON.
func checkContentEncoding(values []string) error {
	for _, v := range values {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return &httpError{http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia,
					"send the body uncompressed: Content-Encoding " + quoteHeader(c) + " is not accepted", "Content-Encoding"}
			}
		}
	}
	return nil
}

// quoteHeader quotes a header value for an error message, cut to 64 bytes.
func quoteHeader(v string) string {
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	return fmt.Sprintf("%q", v)
}

// schemaError is the 400 of a body the strict decoder refused: the field
// of its first problem (document.FieldError.Path) and every problem, "; "
// between them; input that is not JSON at all names no field.
func schemaError(err error) error {
	fes := document.FieldErrors(err)
	if len(fes) == 0 {
		return badRequest("", "%v", err)
	}
	msgs := make([]string, len(fes))
	for i, fe := range fes {
		msgs[i] = fe.Detail()
	}
	return badRequest(fes[0].Path, "%s", strings.Join(msgs, "; "))
}

// --- auth -----------------------------------------------------------------------

type ctxKey int

const keyCtx ctxKey = 0

// caller is the authenticated API key.
func caller(r *http.Request) store.APIKey { return r.Context().Value(keyCtx).(store.APIKey) }

// HashKey returns the SHA-256 of an API key, the only form it is stored in.
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

func (s *Server) auth(next http.HandlerFunc) http.HandlerFunc { return s.authWith(true, next) }

// authWith authenticates the API key; limited says whether sandbox keys
// are rate-limited on this route.
func (s *Server) authWith(limited bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="svc"`)
			writeError(w, http.StatusUnauthorized, api.CodeUnauthorized, "send Authorization: Bearer <API key> (pk_sb_... or pk_live_...)", "")
			return
		}
		if _, ok := api.EnvironmentOf(tok); !ok {
			writeError(w, http.StatusUnauthorized, api.CodeUnauthorized, "API keys start with pk_sb_ (sandbox) or pk_live_ (production)", "")
			return
		}
		k, err := s.apiKey(r.Context(), HashKey(tok))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if limited && k.Environment == string(vpec.Sandbox) {
			if ok, wait := s.sandbox.allow(k.ID); !ok {
				secs := int(wait/time.Second) + 1
				w.Header().Set("Retry-After", fmt.Sprint(secs))
				writeError(w, http.StatusTooManyRequests, api.CodeRateLimited,
					fmt.Sprintf("sandbox keys are limited to %.0f requests/s (burst %d); retry after %d s or use a pk_live_ key", s.cfg.SandboxLimit.PerSecond, s.cfg.SandboxLimit.Burst, secs), "")
				return
			}
		}
		if err := s.scopeRunPath(r, k); err != nil {
			s.fail(w, r, err)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), keyCtx, k)))
	}
}

// --- health and trust -------------------------------------------------------------

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, api.Health{Status: "ok", Version: s.cfg.Version})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.cfg.Storage.Health.Ping(ctx); err != nil {
		// The answer names the reason without paths or driver messages
		// (the endpoint is unauthenticated); the log has the error.
		s.log.WarnContext(r.Context(), "not ready", "error", err.Error())
		detail := "database unreachable"
		switch {
		case errors.Is(err, store.ErrNotWritable):
			detail = "database not writable (read-only data directory or file)"
		case errors.Is(err, store.ErrLowDisk):
			detail = "free disk space below the readiness threshold"
		}
		writeJSON(w, http.StatusServiceUnavailable, api.Health{Status: "unavailable", Detail: detail + "; the service log has the details"})
		return
	}
	writeJSON(w, http.StatusOK, api.Health{Status: "ready", Version: s.cfg.Version})
}

func (s *Server) trustRoot(w http.ResponseWriter, r *http.Request) {
	doc := s.cfg.TrustRoot
	if p := s.rootDoc.Load(); p != nil {
		doc = *p // reloaded (ReloadTrustRoot)
	}
	if doc == nil {
		s.fail(w, r, &httpError{http.StatusNotFound, api.CodeNotFound, "this service publishes no trust root: use " + api.TrustBundlePath, ""})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
}

func (s *Server) trustBundle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Write(s.cfg.Trust.Marshal())
}
