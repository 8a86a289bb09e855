package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/store"
)

// DashboardConfig configures the web dashboard mounted at /dashboard/ and
// the offline verifier page at /verify (pkg/service/dashboard, docs/DASHBOARD.md).
type DashboardConfig struct {
	// Disabled serves neither.
	Disabled bool
	// SessionTTL is how long a sign-in lasts (default 8 h).
	SessionTTL time.Duration
	// SecureCookies marks session cookies Secure on plain HTTP too (behind
	// a TLS-terminating proxy).
	SecureCookies bool
	// VerifyPage overrides the /verify page (default: the one built into
	// the binary by make web).
	VerifyPage []byte
	// ScanBytes bounds the store bytes one registry or runs page view
	// reads (default dashboard.DefaultScanBytes).
	ScanBytes int64
	// VerifyBytes is the default of Config.LoadBytes, the budget the
	// dashboard's VPEC pages and downloads share with the API's VPEC
	// reads (default dashboard.DefaultVerifyBytes).
	VerifyBytes int64
}

// mountDashboard mounts the dashboard when the store keeps its sign-ins
// (Config.Storage.WebSessions; both stores do).
func (s *Server) mountDashboard() error {
	dc := s.cfg.Dashboard
	st := s.cfg.Storage
	if dc.Disabled {
		return nil
	}
	if st.WebSessions == nil {
		s.log.Info("dashboard not served: Config.Storage.WebSessions is not set")
		return nil
	}
	d, err := dashboard.New(dashboard.Config{
		Storage: dashboard.Storage{Sessions: st.WebSessions, Orgs: st.Orgs, Runs: st.Runs, VPECs: st.VPECs,
			Manifests: st.Manifests, Profiles: st.Profiles, Calibrations: st.Calibrations, Circuits: st.Circuits},
		Trust: s.cfg.Trust, Signer: s.cfg.Signer, Timestamper: s.cfg.Timestamper,
		// VPEC pages verify against the trust root in use (windows,
		// purposes), as it is after a SIGHUP reload (keyring.go).
		CurrentRoot: s.ring.Root,
		// Sign-in reads the key from the store, never from the key cache:
		// a key revoked a moment ago creates no session.
		AuthKey: func(ctx context.Context, key string) (store.APIKey, error) {
			if _, ok := api.EnvironmentOf(key); !ok {
				return store.APIKey{}, errors.New("API keys start with pk_sb_ (sandbox) or pk_live_ (production)")
			}
			return s.freshAPIKey(ctx, HashKey(key))
		},
		RequestCalibration: func(ctx context.Context, key store.APIKey, in api.CalibrationRequestInput) (api.CalibrationRequestView, error) {
			v, err := s.createCalibrationRequest(ctx, key, in)
			var he *httpError
			if errors.As(err, &he) && he.status == http.StatusBadRequest {
				return v, fmt.Errorf("%w: %s", dashboard.ErrInput, he.msg)
			}
			return v, err
		},
		SessionTTL: dc.SessionTTL, SecureCookies: dc.SecureCookies, VerifyPage: dc.VerifyPage, ScanBytes: dc.ScanBytes, VerifyBytes: dc.VerifyBytes,
		Budget: s.loads, Limit: s.sandbox.allow, WriteStall: s.cfg.WriteStall,
		Attestation: func(ctx context.Context, v store.VPEC) (*sigstore.AttestationSeal, error) {
			return s.attestationSeal(ctx, v)
		},
		Version: s.cfg.Version, Now: s.cfg.Now, Logger: s.log, LogStatus: s.logStatus(),
		// Receipts are checked against the bundle's log key. The trust root
		// (windows, compromise) is not given yet: it lacks the log key,
		// which svc serve adds to the bundle only (docs/KEYS.md).
		Receipts: s.storedReceipt,
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	d.Register(func(pattern string, h http.Handler) { s.mux.Handle(pattern, h) })
	s.mux.HandleFunc("GET /{$}", root)
	return nil
}

// root answers GET /: a browser (Accept: text/html) is sent to the
// dashboard (303 to /dashboard/); any other client gets the JSON 404
// no_endpoint it got before, so API clients see no change.
func root(w http.ResponseWriter, r *http.Request) {
	if acceptsHTML(r.Header.Values("Accept")) {
		http.Redirect(w, r, dashboard.Prefix, http.StatusSeeOther)
		return
	}
	noEndpoint(w, r)
}

// acceptsHTML reports whether Accept values name text/html (what browsers
// send for a page), not merely */*.
func acceptsHTML(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(mt), "text/html") {
				continue
			}
			refused := false
			for _, p := range strings.Split(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					q, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
					refused = err == nil && q <= 0
				}
			}
			if !refused {
				return true
			}
		}
	}
	return false
}

// storedReceipt is the dashboard's receipt of a stored VPEC: the log's
// receipt for its index, or nil while it has none (no log, not appended
// yet, or no checkpoint covering it yet).
func (s *Server) storedReceipt(ctx context.Context, v store.VPEC) ([]byte, error) {
	if s.cfg.Log == nil || !v.Logged {
		return nil, nil
	}
	rc, err := s.cfg.Log.Log.Receipt(ctx, v.LogIndex)
	if errors.Is(err, logwriter.ErrNotIntegrated) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return rc.JSON, nil
}
