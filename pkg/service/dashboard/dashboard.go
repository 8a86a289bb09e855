// Package dashboard is the web interface of svc serve: server-rendered
// pages (html/template, no JavaScript) for the people around a governance
// program who do not live in a terminal. Sign in with an API key
// (exchanged for a server-side session), then the registry page (every
// model the organisation's manifests and VPECs name, with its profile
// status and a calibration request form), profile pages (bounds as an SVG
// chart), runs and VPEC pages (the verifier's report, downloads), and the
// offline verifier page at /verify. docs/DASHBOARD.md documents it.
package dashboard

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svc-gov/svc/internal/httpbody"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/service/store"
)

// Prefix is the path every dashboard page lives under; VerifyPath is the
// offline verifier page.
const (
	Prefix     = "/dashboard/"
	VerifyPath = "/verify"
)

// DefaultSessionTTL is how long a sign-in lasts unless Config says otherwise.
const DefaultSessionTTL = 8 * time.Hour

// DefaultScanBytes is Config.ScanBytes unless Config says otherwise.
const DefaultScanBytes = 32 << 20

//go:embed templates/*.html templates/style.css
var templateFS embed.FS

//go:embed verifypage
var verifyFS embed.FS

// LogStatus is the transparency log's state as the dashboard shows it.
type LogStatus struct {
	// Size is the size of the log's latest checkpoint, verified against
	// the log key (0 before the first).
	Size uint64
	// Witnessing is true when a witness policy requires cosignatures.
	Witnessing bool
	// WitnessedSize is the size of the newest checkpoint the witnesses
	// cosigned as the policy requires (0 when none is, or without a
	// policy).
	WitnessedSize uint64
}

// Config configures the dashboard. Storage (but its Circuits), Trust,
// Signer, Timestamper, AuthKey and RequestCalibration are required.
type Config struct {
	// Storage is the service's store, the roles the dashboard uses.
	Storage Storage
	// Trust is the service's trust bundle: VPEC pages verify against it
	// and offer it for download.
	Trust *signing.Bundle
	// TrustRoot, when set, is the service's trust root
	// (svc.trust-root/v1): VPEC pages then verify against it as svc verify
	// --trust-root does (key purposes and windows, and the log key and
	// witnesses a receipt is checked against). Nil: Trust alone.
	TrustRoot *trustroot.Root
	// CurrentRoot, when set, returns the service's trust root in use now
	// (the server's, reloaded on SIGHUP) and wins over TrustRoot; it may
	// return nil (then Trust alone).
	CurrentRoot func() *trustroot.Root
	// Receipts, when set, returns the stored transparency log receipt of
	// a stored VPEC (svc.tlog.receipt/v1; nil and no error when it has
	// none yet): the VPEC page's transparency check verifies it, as svc
	// verify --receipt. The server gives the log's receipt for the VPEC's
	// log index; nil: every VPEC page reports the transparency check as
	// not applicable (no receipt given).
	Receipts func(ctx context.Context, v store.VPEC) ([]byte, error)
	// Signer and Timestamper sign and time-stamp the in-toto attestation
	// download (as GET /api/v1/vpecs/{id}/attestation does).
	Signer      *signing.Signer
	Timestamper timestamp.Timestamper
	// AuthKey checks an API key given at sign-in exactly as the API's
	// Authorization header is checked, returning the stored key; its
	// error is shown to the user.
	AuthKey func(ctx context.Context, key string) (store.APIKey, error)
	// RequestCalibration files a calibration request for the key's
	// organisation exactly as POST /api/v1/registry/calibration-requests.
	RequestCalibration func(ctx context.Context, key store.APIKey, in api.CalibrationRequestInput) (api.CalibrationRequestView, error)
	// LogStatus, if set, gives the transparency log's latest checkpoint
	// and witnessing: the runs page and each VPEC page show the VPEC's log
	// index, the size of the checkpoint covering it and whether that
	// checkpoint is witnessed as the witness policy requires. nil: the
	// service has no log (every VPEC is "not logged").
	LogStatus func(ctx context.Context) (LogStatus, error)
	// SessionTTL is how long a sign-in lasts (default DefaultSessionTTL).
	SessionTTL time.Duration
	// SecureCookies marks the session cookie Secure even on a plain HTTP
	// request (set it behind a TLS-terminating proxy); requests that
	// arrive over TLS always get Secure cookies.
	SecureCookies bool
	// ScanBytes bounds the bytes one view of the registry or runs page
	// reads from the store (default DefaultScanBytes): the pages read the
	// most recent VPECs whose runs' record bytes fit in it and the records
	// of open runs until it is spent, skip the rest and say so, so that a
	// few VPECs near the 256 MiB document limit cannot make one page
	// view load gigabytes.
	ScanBytes int64
	// VerifyBytes bounds the bytes of the VPECs that VPEC pages and
	// downloads verify or re-encode at the same time (default
	// DefaultVerifyBytes); past it a request is answered 503 with
	// Retry-After (one request is always served when none runs).
	VerifyBytes int64
	// Budget, when set, is the byte budget VPEC pages and downloads take
	// from instead of one of VerifyBytes of their own (svc serve shares
	// one with the API's VPEC downloads and attestations).
	Budget *Budget
	// Limit, when set, rate-limits the pages of sandbox sessions: it is
	// called with the session's API key id and reports whether the
	// request may go on, or how long to wait (answered 429 with
	// Retry-After). svc serve passes its sandbox rate limiter, so a
	// sandbox key's API calls and dashboard pages share one bucket.
	Limit func(keyID string) (ok bool, wait time.Duration)
	// Attestation, when set, returns the attestation seal of an issued
	// VPEC (svc serve makes one per VPEC and shares it with
	// GET /api/v1/vpecs/{id}/attestation); without it every attestation
	// download is sealed anew with Signer and Timestamper.
	Attestation func(ctx context.Context, v store.VPEC) (*sigstore.AttestationSeal, error)
	// WriteStall is how long a client may take to accept each chunk of a
	// large response before it is cut (default httpbody.DefaultStall).
	WriteStall time.Duration
	// VerifyPage overrides the page served at /verify (default: the
	// embedded verifypage/verify.html, or a page saying how to build it).
	VerifyPage []byte
	// Version is shown in the page footer.
	Version string
	// Now is the clock (default time.Now); Logger receives errors.
	Now    func() time.Time
	Logger *slog.Logger
}

// Dashboard serves the pages. Create it with New and mount it with Register.
type Dashboard struct {
	cfg    Config
	log    *slog.Logger
	pages  map[string]*template.Template
	css    []byte
	verify []byte
	// VerifyBuilt reports whether /verify serves the real verifier page
	// (false: the fallback saying how to build it).
	verifyBuilt bool
	// verifyTag is the ETag of the /verify page; verifyGz its gzip
	// encoding, made at the first request that accepts it.
	verifyTag  string
	verifyOnce sync.Once
	verifyGz   []byte
	// busy admits VPEC verifications and exports (Config.VerifyBytes or
	// Config.Budget).
	busy *Budget
}

// ErrInput is matched (errors.Is) by the errors of Config.RequestCalibration
// that are the user's to fix (an invalid hash, GPU class or e-mail); the
// form shows their text. Any other error is logged and shown as an
// internal error.
var ErrInput = errors.New("invalid input")

// ErrConfig reports a Config that lacks a required field.
var ErrConfig = errors.New("dashboard: incomplete configuration")

// New checks cfg and parses the templates.
func New(cfg Config) (*Dashboard, error) {
	switch {
	case cfg.Storage.missing() != "":
		return nil, fmt.Errorf("%w: Storage.%s is required", ErrConfig, cfg.Storage.missing())
	case cfg.Trust == nil:
		return nil, fmt.Errorf("%w: Trust is required", ErrConfig)
	case cfg.Signer == nil || cfg.Timestamper == nil:
		return nil, fmt.Errorf("%w: Signer and Timestamper are required", ErrConfig)
	case cfg.AuthKey == nil || cfg.RequestCalibration == nil:
		return nil, fmt.Errorf("%w: AuthKey and RequestCalibration are required", ErrConfig)
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.ScanBytes <= 0 {
		cfg.ScanBytes = DefaultScanBytes
	}
	if cfg.VerifyBytes <= 0 {
		cfg.VerifyBytes = DefaultVerifyBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	d := &Dashboard{cfg: cfg, log: cfg.Logger, pages: map[string]*template.Template{}, busy: cfg.Budget}
	if d.busy == nil {
		d.busy = NewBudget(cfg.VerifyBytes)
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	for _, name := range []string{"signin", "registry", "profile", "runs", "vpec", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		d.pages[name] = t
	}
	css, err := templateFS.ReadFile("templates/style.css")
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	d.css = css
	d.verify, d.verifyBuilt = cfg.VerifyPage, len(cfg.VerifyPage) > 0
	if !d.verifyBuilt {
		if b, err := fs.ReadFile(verifyFS, "verifypage/verify.html"); err == nil {
			d.verify, d.verifyBuilt = b, true
		} else if d.verify, err = fs.ReadFile(verifyFS, "verifypage/fallback.html"); err != nil {
			return nil, fmt.Errorf("dashboard: %w", err)
		}
	}
	sum := sha256.Sum256(d.verify)
	d.verifyTag = `"` + hex.EncodeToString(sum[:16]) + `"`
	return d, nil
}

// EmbeddedVerifyPage reports whether this binary embeds the offline
// verifier page (pkg/service/dashboard/verifypage/verify.html, written by make web
// before go build). Without it /verify serves a page saying how to build
// it: what a plain go build or go install gives.
func EmbeddedVerifyPage() bool {
	_, err := fs.Stat(verifyFS, "verifypage/verify.html")
	return err == nil
}

// VerifyBuilt reports whether /verify serves the offline verifier page
// (false when this binary was built without it: /verify then says how to
// build it).
func (d *Dashboard) VerifyBuilt() bool { return d.verifyBuilt }

// Register mounts every page through handle (a ServeMux's Handle):
// patterns are "METHOD /path".
func (d *Dashboard) Register(handle func(pattern string, h http.Handler)) {
	h := func(p string, f http.HandlerFunc) { handle(p, d.headers(f)) }
	h("GET "+VerifyPath, d.serveVerify)
	h("GET "+Prefix, d.index) // /dashboard/ itself, and an HTML 404 for any unknown page
	h("GET "+Prefix+"style.css", d.serveCSS)
	h("GET "+Prefix+"signin", d.signinPage)
	h("POST "+Prefix+"signin", d.signin)
	h("POST "+Prefix+"signout", d.session(d.signout))
	h("GET "+Prefix+"registry", d.session(d.registry))
	h("POST "+Prefix+"calibration-requests", d.session(d.requestCalibration))
	h("GET "+Prefix+"profiles/{id...}", d.session(d.profilePage))
	h("GET "+Prefix+"runs", d.session(d.runs))
	h("GET "+Prefix+"vpecs/{vpec_id}", d.session(d.vpecPage))
	h("GET "+Prefix+"vpecs/{vpec_id}/{file}", d.session(d.download))
}

// headers sets the security headers of every dashboard response: no
// script may run on dashboard pages (they need none), nothing is cached,
// no page may be framed.
func (d *Dashboard) headers(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if r.URL.Path != VerifyPath {
			h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		}
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: with no-referrer browsers send
		// "Origin: null" on form posts, which the origin check refuses.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		next(w, r)
	}
}

func (d *Dashboard) serveCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	w.Write(d.css)
}

// verifyCSP is the policy of the offline verifier page: its own inline
// script and WebAssembly, and no connection anywhere.
const verifyCSP = "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// VerifyMaxAge is how long a browser may reuse the /verify page before it
// asks again (with If-None-Match: the page is the same for one version of
// the binary, so the answer is a 304 until the service is upgraded).
const VerifyMaxAge = 5 * time.Minute

// serveVerify serves the offline verifier page: cacheable (an ETag of its
// bytes, Cache-Control max-age VerifyMaxAge, 304 to a matching
// If-None-Match) and gzip-compressed for clients that accept it (about a
// quarter of its 11 MB).
func (d *Dashboard) serveVerify(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", verifyCSP)
	if !d.verifyBuilt {
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		w.Write(d.verify)
		return
	}
	body, tag := d.verify, d.verifyTag
	if acceptsGzip(r.Header.Values("Accept-Encoding")) {
		d.verifyOnce.Do(func() {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
			zw.Write(d.verify)
			zw.Close()
			d.verifyGz = buf.Bytes()
		})
		body, tag = d.verifyGz, strings.TrimSuffix(d.verifyTag, `"`)+`-gzip"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Vary", "Accept-Encoding")
	h.Set("ETag", tag)
	h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(VerifyMaxAge.Seconds())))
	if etagMatch(r.Header.Values("If-None-Match"), tag) {
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Length", fmt.Sprint(len(body)))
		return
	}
	if err := httpbody.Write(w, http.StatusOK, "text/html; charset=utf-8", body, d.cfg.WriteStall); err != nil {
		d.log.WarnContext(r.Context(), "dashboard: /verify cut", "error", err.Error())
	}
}

// acceptsGzip reports whether Accept-Encoding values accept gzip: a gzip
// (or x-gzip, or *) coding without q=0.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "x-gzip" && coding != "*" {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			if q > 0 {
				return true
			}
		}
	}
	return false
}

// etagMatch reports whether If-None-Match values name tag (or are *).
func etagMatch(values []string, tag string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == tag || t == "*" {
				return true
			}
		}
	}
	return false
}

func (d *Dashboard) index(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Prefix {
		d.errorPage(w, r, http.StatusNotFound, "No such dashboard page. Start from the registry: "+Prefix+"registry")
		return
	}
	if _, err := d.currentSession(r); err == nil {
		http.Redirect(w, r, Prefix+"registry", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}
