package store

import (
	"context"
	"time"
)

// Session is a check or review session opened before its record: it holds
// the RFC 3161 check-open token, and once closed the check-close token.
type Session struct {
	ID                 string
	OrgID              string
	RunID              string
	Kind               string // "check" or "review"
	Check              string
	ManifestID         string
	ReviewerKeyID      string // reviews only
	MinDurationSeconds int64
	OpenedAt           time.Time
	OpenTST            []byte    // DER TimeStampResp over the check-open imprint
	ClosedAt           time.Time // zero while open
	CommitmentHash     string    // set at close: the input the session closed on
	CloseTST           []byte    // set at close
	RecordID           string    // set by ClaimSession: the one record the session backs
}

// SessionStore is the check and review sessions role. Session writes
// serialise with the seal of their run, as appends do.
type SessionStore interface {
	// CreateSession stores an open session (whatever s's ClosedAt,
	// CommitmentHash and CloseTST say) of an open run of the
	// organisation; ErrNotFound for an unknown run, ErrSealed for a sealed
	// one, ErrExists for a taken id.
	CreateSession(ctx context.Context, s Session) error
	// Session returns a session of the organisation; ErrNotFound otherwise.
	Session(ctx context.Context, orgID, id string) (Session, error)
	// CloseSession records the close of a session, in one transaction: the
	// first close stores closedAt, commitmentHash and closeTST; closing again
	// with the same commitment hash changes nothing and succeeds (idempotent
	// retry); with another commitment hash it gives ErrConflict. An unknown
	// session gives ErrNotFound; a session of a sealed run gives ErrSealed,
	// even for a retry.
	CloseSession(ctx context.Context, orgID, id string, closedAt time.Time, commitmentHash string, closeTST []byte) error
	// ClaimSession binds a session of the organisation to the one record it
	// backs, atomically across processes: the first claim stores recordID;
	// a claim by the same record id again succeeds (a retry); a claim by
	// another record id gives ErrConflict. An unknown session gives
	// ErrNotFound.
	ClaimSession(ctx context.Context, orgID, id, recordID string) error
}
