// Package store persists the service's state: organisations, API keys,
// runs, records, issued VPECs, manifests, published profiles and circuits,
// calibration requests, check and review sessions, dashboard sign-ins and
// the service's identity.
//
// The state is split by role, one small interface each, so that every
// consumer takes only the role it uses (the dashboard reads runs and VPECs;
// it never appends a record):
//
//	OrgReader, OrgStore            organisations, API keys, reviewer keys
//	RunReader, RunWriter, RunStore runs and their records, the two-phase seal
//	VPECReader                     issued VPECs
//	VPECLog                        issued VPECs' transparency log indexes
//	ManifestReader, ManifestStore  check manifests
//	ProfileReader, ProfileStore    published model profiles
//	CircuitReader, CircuitStore    published circuit entries
//	CalibrationReader, CalibrationStore  calibration requests
//	SessionStore                   check and review sessions
//	WebSessionStore                dashboard sign-ins
//	IdentityStore                  the service's signing identity
//	Pinger                         readiness
//
// Store is all of them and io.Closer: what a backend implements and what
// the code that opens one (setup, tests) holds. Two backends implement it:
// SQLite (embedded, the default) and PostgreSQL (several servers sharing
// one database). Both pass the conformance suite (storetest), one suite
// per role.
//
// Every method is safe for concurrent use, including from several
// processes sharing one database; every write is durable when the method
// returns. An error from a cancelled context does not prove that nothing
// was written (as with a lost response).
package store

import (
	"context"
	"errors"
	"io"
)

// Sentinel errors, matchable with errors.Is.
var (
	// ErrNotFound: no such row (in the caller's organisation).
	ErrNotFound = errors.New("not found")
	// ErrExists: a row with the same unique key already exists.
	ErrExists = errors.New("already exists")
	// ErrSealed: the run is sealed; nothing more can be recorded or closed.
	ErrSealed = errors.New("run is sealed")
	// ErrConflict: a different record already holds this sequence number or record id.
	ErrConflict = errors.New("conflicting record")
	// ErrRevoked: the API key was revoked (APIKeyByHash returns it with the key).
	ErrRevoked = errors.New("API key revoked")
	// ErrNotWritable (from Ping): the database's directory or file cannot
	// be written.
	ErrNotWritable = errors.New("not writable")
	// ErrLowDisk (from Ping): the database's filesystem has less free space
	// than the readiness threshold.
	ErrLowDisk = errors.New("free disk space below the readiness threshold")
	// ErrRunFull: a record would take its run past a Limits bound; the
	// error is also a *LimitError naming the bound.
	ErrRunFull = errors.New("run is full")
	// ErrNotSealed: StoreVPEC on a run whose records are not sealed yet.
	ErrNotSealed = errors.New("run records are not sealed")
)

// Store is every role of one database, and its Close: what a backend
// implements and what the code that opens one holds. Hand each consumer
// the narrowest role it uses, never the Store.
type Store interface {
	Pinger
	io.Closer
	OrgStore
	RunStore
	VPECReader
	VPECLog
	ManifestStore
	ProfileStore
	CircuitStore
	CalibrationStore
	SessionStore
	WebSessionStore
	IdentityStore
}

// Pinger reports readiness.
type Pinger interface {
	// Ping checks the database is reachable and, where the store can tell,
	// writable (readiness); ErrNotWritable and ErrLowDisk name why not.
	Ping(ctx context.Context) error
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
