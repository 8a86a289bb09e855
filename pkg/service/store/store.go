// Package store persists the service's state: organisations, API keys,
// runs, records, issued VPECs, manifests and published profiles. One
// interface, two implementations: SQLite (embedded, the default) and
// PostgreSQL (several servers sharing one database). Both pass the same
// conformance suite (storetest).
package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
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

// Limits bounds a run at append time. A zero field means no bound.
type Limits struct {
	// MaxRecords bounds the number of records of a run.
	MaxRecords int64
	// MaxBytes bounds the run's record bytes plus BytesPerRecord for each
	// of its records: the bodies plus what each record may add to its VPEC
	// beyond its body (separators, gaps).
	MaxBytes       int64
	BytesPerRecord int64
}

// LimitError is the error of an append refused by a Limits bound. It
// matches ErrRunFull with errors.Is.
type LimitError struct {
	Limit string // "max_records" or "max_bytes"
	Max   int64  // the bound
	Have  int64  // what the run holds by that measure, before the refused record
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("run is full: %s is %d and the run holds %d", e.Limit, e.Max, e.Have)
}

// Is makes a *LimitError match ErrRunFull.
func (e *LimitError) Is(target error) bool { return target == ErrRunFull }

// Check returns a *LimitError if a run holding count records of bytes body
// bytes cannot take one more record of n bytes.
func (l Limits) Check(count, bytes, n int64) error {
	if l.MaxRecords > 0 && count+1 > l.MaxRecords {
		return &LimitError{Limit: "max_records", Max: l.MaxRecords, Have: count}
	}
	if l.MaxBytes > 0 && bytes+n+(count+1)*l.BytesPerRecord > l.MaxBytes {
		return &LimitError{Limit: "max_bytes", Max: l.MaxBytes, Have: bytes + count*l.BytesPerRecord}
	}
	return nil
}

// Org is an organisation: the unit every resource is scoped to.
type Org struct {
	ID        string
	Name      string
	Tier      string // "standard" or "enterprise"
	CreatedAt time.Time
}

// APIKey is a stored API key. The key itself is never stored: only its
// SHA-256 hash, looked up by hash and compared in constant time.
type APIKey struct {
	ID          string // public id: prefix + first 12 hex of the hash, e.g. pk_live_9c1e4b7a2f30
	OrgID       string
	Environment string // "sandbox" or "production"
	Hash        []byte // SHA-256 of the full key
	CreatedAt   time.Time
	RevokedAt   time.Time // zero while the key is valid
}

// Run is a stored run.
type Run struct {
	ID                 string
	OrgID              string
	WorkflowID         string
	SurfaceID          string
	PolicyPackID       string
	PolicySnapshotHash string
	ProcessContextHash string
	Environment        string
	APIKeyID           string
	// Sealed is set when the run's record set is sealed (the first phase
	// of a close): from then on no record is added. VPECID is set once the
	// VPEC is stored (the second phase); a sealed run without a VPEC is
	// being closed, or its close failed and a retried close completes it.
	Sealed   bool
	OpenedAt time.Time
	ClosedAt time.Time // zero while open: when the record set was sealed
	VPECID   string    // set when the VPEC is stored
	CloseKey string    // the Idempotency-Key of the close that sealed it ("" for none)

	// Metadata kept by AppendRecord in the append's transaction, so that
	// reading a run never reads its records.
	RecordCount   int64  // number of records
	LastSequence  int64  // highest sequence (0 while empty)
	LastChainHash string // chain hash of the record at LastSequence ("" while empty)
	RecordBytes   int64  // sum of the record bodies' lengths
}

// Record is a stored record: the canonical JSON of the vpec.Record exactly
// as accepted (chain hash included) plus the columns needed to query it.
type Record struct {
	RunID     string
	RecordID  string
	Sequence  int64
	ChainHash string
	Body      []byte // canonical JSON of the vpec.Record
}

// SameAs reports nil when a stored record (its sequence, chain hash and
// body) is exactly r, and an error matching ErrConflict otherwise: the
// test both stores use to tell an idempotent retry from a conflict.
func (r Record) SameAs(seq int64, chain string, body []byte) error {
	if seq != r.Sequence || chain != r.ChainHash || !bytes.Equal(body, r.Body) {
		return fmt.Errorf("a different record with this id is stored at sequence %d: %w", seq, ErrConflict)
	}
	return nil
}

// VPEC is an issued credential.
type VPEC struct {
	ID       string
	RunID    string
	OrgID    string
	IssuedAt time.Time
	Body     []byte // the VPEC JSON as issued
}

// Belongs reports an error when v names another run or organisation than
// the ones it is being stored for (empty fields are taken as matching).
func (v VPEC) Belongs(orgID, runID string) error {
	if v.RunID != "" && v.RunID != runID {
		return fmt.Errorf("the vpec names run %s", v.RunID)
	}
	if v.OrgID != "" && v.OrgID != orgID {
		return fmt.Errorf("the vpec names org %s", v.OrgID)
	}
	return nil
}

// VPECInfo is what a store knows of an issued VPEC without reading its
// body: callers check the environment and budget the size before they
// load it.
type VPECInfo struct {
	ID       string
	RunID    string
	OrgID    string
	IssuedAt time.Time
	// Size is the length of the VPEC's body in bytes.
	Size int64
	// Environment is the environment of the VPEC's run: "sandbox" or
	// "production".
	Environment string
}

// Manifest is a registered check manifest, content-addressed.
type Manifest struct {
	OrgID     string
	ID        string // sha256:<hex> of the canonical manifest
	Name      string
	Body      []byte // canonical JSON
	CreatedAt time.Time
}

// Profile is a published, signed model profile.
type Profile struct {
	ID          string   // profile_id
	ModelHashes []string // onnx_model_hash of every model it covers
	Body        []byte   // the signed profile JSON
	PublishedAt time.Time
}

// ReviewerKey is a human reviewer's Ed25519 public key registered by an
// organisation; witnessed records must be signed by a registered key.
type ReviewerKey struct {
	OrgID     string
	KeyID     string // signing.KeyID of the key
	PublicKey []byte // SPKI DER
	Name      string
	CreatedAt time.Time
}

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

// CalibrationRequest is a request to calibrate a drift profile for a model.
type CalibrationRequest struct {
	ID                  string // cal_req_<uuid>
	OrgID               string
	ModelHash           string // onnx_model_hash
	ModelDescription    string
	HubModelID          string
	GPUClasses          []string
	NotifyEmail         string
	Status              string // queued, in_progress, published, rejected
	EstimatedCompletion string // "7d" or "48h"
	ProfileID           string // set when published
	Note                string // reason when rejected
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// Store is the persistence interface. Every method is safe for concurrent
// use, including from several processes sharing one database; every write
// is durable when the method returns. An error from a cancelled context
// does not prove that nothing was written (as with a lost response).
type Store interface {
	// CreateOrg adds an organisation; ErrExists if the name is taken.
	CreateOrg(ctx context.Context, o Org) error
	// OrgByName and OrgByID find an organisation; ErrNotFound if absent.
	OrgByName(ctx context.Context, name string) (Org, error)
	OrgByID(ctx context.Context, id string) (Org, error)

	// CreateAPIKey stores a key; ErrExists if its id or hash is taken.
	CreateAPIKey(ctx context.Context, k APIKey) error
	// APIKeyByHash finds a key by the SHA-256 of its secret; ErrNotFound if
	// absent. A revoked key is returned with an error matching ErrRevoked
	// (so a caller that only checks the error refuses it).
	APIKeyByHash(ctx context.Context, hash []byte) (APIKey, error)
	// APIKeys lists the keys of the organisation orgID, or of every
	// organisation when orgID is "", revoked ones included, ordered by
	// creation time then id.
	APIKeys(ctx context.Context, orgID string) ([]APIKey, error)
	// RevokeAPIKey revokes the key with the given id at time at and returns
	// it. Revoking a revoked key changes nothing (the first revocation time
	// stays) and succeeds; an unknown id gives ErrNotFound.
	RevokeAPIKey(ctx context.Context, id string, at time.Time) (APIKey, error)

	// CreateRun adds an open run; ErrExists if the id is taken.
	CreateRun(ctx context.Context, r Run) error
	// Run returns a run of the organisation; ErrNotFound if absent or another org's.
	Run(ctx context.Context, orgID, runID string) (Run, error)

	// AppendRecord stores a record in an open run of the organisation, in one
	// transaction that also updates the run's metadata (RecordCount,
	// LastSequence, LastChainHash, RecordBytes). If a record with the same
	// record id and identical body is already stored it returns
	// duplicate=true and changes nothing, even in a sealed run (a retry
	// whose response was lost: the record is in the sealed set); a
	// different record with that id or that sequence gives ErrConflict; a
	// sealed run gives ErrSealed; an unknown run ErrNotFound; a record the
	// run cannot take within lim a *LimitError (ErrRunFull). The append and
	// the seal serialise on the run, across processes.
	AppendRecord(ctx context.Context, orgID string, rec Record, lim Limits) (duplicate bool, err error)
	// RecordBySequence returns one record of a run; ErrNotFound if absent.
	RecordBySequence(ctx context.Context, runID string, seq int64) (Record, error)
	// Records returns every record of a run ordered by sequence.
	Records(ctx context.Context, runID string) ([]Record, error)
	// EachRecord calls fn with every record of a run in sequence order,
	// reading them as it goes (a run's records need not fit in memory
	// twice); it stops at fn's first error and returns it.
	EachRecord(ctx context.Context, runID string, fn func(Record) error) error

	// SealRecords is the first phase of a close: in one transaction it
	// marks an open run of the organisation sealed, with closedAt and the
	// close's idempotency key (may be ""). From its commit on, AppendRecord
	// refuses every record the run does not hold (ErrSealed), in every
	// process: the record set is final. It returns the run as stored after
	// the call, and sealed=true if this call sealed it; a run that was
	// already sealed is returned unchanged with sealed=false and no error.
	// ErrNotFound for an unknown run.
	SealRecords(ctx context.Context, orgID, runID, closeKey string, closedAt time.Time) (run Run, sealed bool, err error)
	// StoreVPEC is the second phase: it stores the VPEC of a run whose
	// records are sealed and sets its VPECID, in one transaction.
	// ErrSealed if the run already has a VPEC (another close completed
	// first), ErrNotSealed if its records are not sealed, ErrNotFound for an
	// unknown run, ErrExists for a taken VPEC id.
	StoreVPEC(ctx context.Context, orgID, runID string, v VPEC) error
	// UnsealRecords undoes SealRecords for a close that issued nothing
	// because the run cannot be sealed as it is (the service refused it):
	// in one transaction, a run sealed with closeKey and without a VPEC is
	// open again (ClosedAt and CloseKey cleared). ErrSealed if the run has
	// a VPEC or was sealed with another key, ErrNotSealed if it is open,
	// ErrNotFound for an unknown run.
	UnsealRecords(ctx context.Context, orgID, runID, closeKey string) error
	// SealRun does both phases in one transaction (closedAt is
	// v.IssuedAt, no idempotency key); ErrSealed if the run was already
	// sealed (by any process).
	SealRun(ctx context.Context, orgID, runID string, v VPEC) error
	// VPEC returns an issued VPEC of the organisation; ErrNotFound otherwise.
	VPEC(ctx context.Context, orgID, vpecID string) (VPEC, error)
	// VPECInfo returns what VPEC would return but the body, with the
	// body's size and the run's environment, without reading the body;
	// ErrNotFound as VPEC.
	VPECInfo(ctx context.Context, orgID, vpecID string) (VPECInfo, error)

	// PutManifest stores a manifest; created=false if the organisation
	// already had that manifest id (idempotent).
	PutManifest(ctx context.Context, m Manifest) (created bool, err error)
	// Manifest returns a manifest of the organisation; ErrNotFound otherwise.
	Manifest(ctx context.Context, orgID, id string) (Manifest, error)

	// PutProfile publishes a profile, replacing the model index entries of
	// the models it covers; ErrExists if the profile id is already published
	// (profiles are immutable: a new version gets a new id).
	PutProfile(ctx context.Context, p Profile) error
	// Profiles lists published profiles ordered by profile id.
	Profiles(ctx context.Context) ([]Profile, error)
	// ProfileByID and ProfileByModelHash find a profile; ErrNotFound if absent.
	// ProfileByModelHash returns the most recently published profile covering the model.
	ProfileByID(ctx context.Context, id string) (Profile, error)
	ProfileByModelHash(ctx context.Context, modelHash string) (Profile, error)

	// CreateReviewerKey registers a reviewer key; ErrExists if the
	// organisation already has that key id; ErrNotFound for an unknown org.
	CreateReviewerKey(ctx context.Context, k ReviewerKey) error
	// ReviewerKey returns a registered key of the organisation; ErrNotFound otherwise.
	ReviewerKey(ctx context.Context, orgID, keyID string) (ReviewerKey, error)

	// CreateSession stores an open session of an open run of the
	// organisation; ErrNotFound for an unknown run, ErrSealed for a sealed one.
	CreateSession(ctx context.Context, s Session) error
	// Session returns a session of the organisation; ErrNotFound otherwise.
	Session(ctx context.Context, orgID, id string) (Session, error)
	// CloseSession records the close of a session, in one transaction: the
	// first close stores closedAt, commitmentHash and closeTST; closing again
	// with the same commitment hash changes nothing and succeeds (idempotent
	// retry); with another commitment hash it gives ErrConflict. An unknown
	// session gives ErrNotFound; a session of a sealed run gives ErrSealed.
	CloseSession(ctx context.Context, orgID, id string, closedAt time.Time, commitmentHash string, closeTST []byte) error
	// ClaimSession binds a session of the organisation to the one record it
	// backs, atomically across processes: the first claim stores recordID;
	// a claim by the same record id again succeeds (a retry); a claim by
	// another record id gives ErrConflict. An unknown session gives
	// ErrNotFound.
	ClaimSession(ctx context.Context, orgID, id, recordID string) error

	// CreateCalibrationRequest stores a request; ErrExists if the id is taken.
	CreateCalibrationRequest(ctx context.Context, r CalibrationRequest) error
	// CalibrationRequest returns a request of the organisation; ErrNotFound otherwise.
	CalibrationRequest(ctx context.Context, orgID, id string) (CalibrationRequest, error)
	// CalibrationRequestsByModel returns every organisation's requests for a
	// model, oldest first (publishing a profile updates them all).
	CalibrationRequestsByModel(ctx context.Context, modelHash string) ([]CalibrationRequest, error)
	// UpdateCalibrationRequest sets status, profile id and note of a request
	// (any organisation's), atomically and only if its current status is one
	// of from (any status when from is empty): ErrConflict otherwise,
	// ErrNotFound if absent.
	UpdateCalibrationRequest(ctx context.Context, id string, from []string, status, profileID, note string, at time.Time) error

	// Ping checks the database is reachable and, where the store can tell,
	// writable (readiness); ErrNotWritable and ErrLowDisk name why not.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}
