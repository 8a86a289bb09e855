package store

import (
	"context"
	"time"
)

// WebSession is a dashboard sign-in: an API key exchanged for a session
// cookie. Only the SHA-256 of the cookie's secret token is stored; the
// session ends at ExpiresAt (server-side), when it is deleted (sign-out),
// or when its API key is revoked.
type WebSession struct {
	IDHash    []byte // SHA-256 of the session token
	OrgID     string
	APIKeyID  string
	CreatedAt time.Time
	ExpiresAt time.Time
	// Environment is the environment of the session's API key ("sandbox"
	// or "production"), read from the key by WebSession (not stored with
	// the session): the dashboard shows a session only its environment.
	Environment string
}

// RunFilter selects runs for RunsOfOrg. Zero fields select everything.
type RunFilter struct {
	// WorkflowID keeps the runs of one workflow.
	WorkflowID string
	// State is "open" (records may still be added), "sealed" (closed,
	// with or without a VPEC yet) or "" for both.
	State string
	// Environment keeps the runs of one environment ("sandbox" or
	// "production").
	Environment string
	// Limit bounds the number of runs (most recent first); 0 means 100.
	Limit int
}

// WebStore is what the dashboard (pkg/service/dashboard) needs beyond Store: its
// sessions and organisation-wide listings. Both stores implement it; every
// listing is scoped to one organisation.
type WebStore interface {
	// CreateWebSession stores a session; ErrExists if its hash is taken,
	// ErrNotFound for an unknown organisation.
	CreateWebSession(ctx context.Context, s WebSession) error
	// WebSession returns the session with the token hash idHash, and its
	// key's Environment, if it has not expired at now: ErrNotFound if absent or expired, an error
	// matching ErrRevoked if its API key was revoked since sign-in.
	WebSession(ctx context.Context, idHash []byte, now time.Time) (WebSession, error)
	// DeleteWebSession ends a session (sign-out); deleting an absent one
	// succeeds.
	DeleteWebSession(ctx context.Context, idHash []byte) error
	// DeleteExpiredWebSessions deletes the sessions expired at now and
	// returns how many.
	DeleteExpiredWebSessions(ctx context.Context, now time.Time) (int64, error)

	// RunsOfOrg lists the organisation's runs, most recently opened
	// first (ties by id), filtered by f.
	RunsOfOrg(ctx context.Context, orgID string, f RunFilter) ([]Run, error)
	// VPECsOfOrg lists the organisation's issued VPECs, most recent
	// first (ties by id), at most limit (0 means 100).
	VPECsOfOrg(ctx context.Context, orgID string, limit int) ([]VPEC, error)
	// ManifestsOfOrg lists the organisation's manifests by creation time, then id.
	ManifestsOfOrg(ctx context.Context, orgID string) ([]Manifest, error)
	// CalibrationRequestsOfOrg lists the organisation's calibration
	// requests, oldest first (ties by id).
	CalibrationRequestsOfOrg(ctx context.Context, orgID string) ([]CalibrationRequest, error)
}

// Listing bounds.
const (
	// DefaultListLimit is the number of rows a listing returns when asked for 0.
	DefaultListLimit = 100
	// MaxListLimit bounds every listing.
	MaxListLimit = 1000
)

// ListLimit is n bounded to 1..MaxListLimit, DefaultListLimit for n <= 0.
func ListLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultListLimit
	case n > MaxListLimit:
		return MaxListLimit
	}
	return n
}
