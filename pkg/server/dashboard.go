package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/svc-gov/svc/pkg/api"
	"github.com/svc-gov/svc/pkg/dashboard"
	"github.com/svc-gov/svc/pkg/store"
	"github.com/svc-gov/svc/pkg/vpec"
)

// DashboardConfig configures the web dashboard mounted at /dashboard/ and
// the offline verifier page at /verify (pkg/dashboard, docs/DASHBOARD.md).
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
	// VerifyBytes bounds the VPEC bytes the dashboard verifies or
	// re-encodes at once (default dashboard.DefaultVerifyBytes).
	VerifyBytes int64
}

// mountDashboard mounts the dashboard when the store supports it (both
// stores do; a store without store.WebStore serves the API only).
func (s *Server) mountDashboard() error {
	dc := s.cfg.Dashboard
	web, ok := s.cfg.Store.(store.WebStore)
	if dc.Disabled {
		return nil
	}
	if !ok {
		s.log.Info("dashboard not served: the store does not implement store.WebStore", "store", fmt.Sprintf("%T", s.cfg.Store))
		return nil
	}
	d, err := dashboard.New(dashboard.Config{
		Store: s.cfg.Store, Web: web, Trust: s.cfg.Trust, Signer: s.cfg.Signer, Timestamper: s.cfg.Timestamper,
		AuthKey: func(ctx context.Context, key string) (store.APIKey, error) {
			if _, ok := vpec.EnvironmentOf(key); !ok {
				return store.APIKey{}, errors.New("API keys start with pk_sb_ (sandbox) or pk_live_ (production)")
			}
			return s.apiKey(ctx, HashKey(key))
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
		Version: s.cfg.Version, Now: s.cfg.Now, Logger: s.log,
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	d.Register(func(pattern string, h http.Handler) { s.mux.Handle(pattern, h) })
	return nil
}
