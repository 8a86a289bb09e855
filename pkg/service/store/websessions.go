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

// WebSessionStore keeps the dashboard's sign-ins (pkg/service/dashboard).
type WebSessionStore interface {
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
}
