package store

import (
	"bytes"
	"context"
	"fmt"
	"time"
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

// BatchError is the error of an AppendRecords that stored nothing because
// its record at Index was refused; it wraps that record's error, so
// errors.Is(err, ErrSealed) and errors.As(err, new(*LimitError)) see it.
type BatchError struct {
	Index int   // the refused record's index in the batch
	Err   error // why it was refused
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("record %d of the batch: %v", e.Index, e.Err)
}

// Unwrap returns the refused record's error.
func (e *BatchError) Unwrap() error { return e.Err }

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

// RunReader reads runs and their records.
type RunReader interface {
	// Run returns a run of the organisation; ErrNotFound if absent or another org's.
	Run(ctx context.Context, orgID, runID string) (Run, error)
	// RunsOfOrg lists the organisation's runs, most recently opened
	// first (ties by id), filtered by f.
	RunsOfOrg(ctx context.Context, orgID string, f RunFilter) ([]Run, error)
	// RecordBySequence returns one record of a run; ErrNotFound if absent.
	RecordBySequence(ctx context.Context, runID string, seq int64) (Record, error)
	// Records returns every record of a run ordered by sequence (empty
	// for an unknown run).
	Records(ctx context.Context, runID string) ([]Record, error)
	// EachRecord calls fn with every record of a run in sequence order,
	// reading them as it goes (a run's records need not fit in memory
	// twice); it stops at fn's first error and returns it.
	EachRecord(ctx context.Context, runID string, fn func(Record) error) error
	// EachRecordBody is EachRecord reading only each record's sequence
	// and stored body (what a close reads): body is valid only until fn
	// returns (fn copies what it keeps).
	EachRecordBody(ctx context.Context, runID string, fn func(seq int64, body []byte) error) error
}

// RunWriter opens runs, appends their records and seals them: a close
// seals the record set (SealRecords), then stores the VPEC (StoreVPEC).
// The appends to a run and its seal serialise on the run, across
// processes: an append either commits before the seal, and is in the
// sealed record set, or sees the run sealed.
type RunWriter interface {
	// CreateRun adds an open run (whatever r's Sealed, ClosedAt and VPECID
	// say); ErrExists if the id is taken, ErrNotFound for an unknown
	// organisation.
	CreateRun(ctx context.Context, r Run) error
	// AppendRecord stores a record in an open run of the organisation, in one
	// transaction that also updates the run's metadata (RecordCount,
	// LastSequence, LastChainHash, RecordBytes). If a record with the same
	// record id and identical body is already stored it returns
	// duplicate=true and changes nothing, even in a sealed run (a retry
	// whose response was lost: the record is in the sealed set); a
	// different record with that id or that sequence gives ErrConflict; a
	// sealed run gives ErrSealed; an unknown run ErrNotFound; a record the
	// run cannot take within lim a *LimitError (ErrRunFull), unless it is
	// such a duplicate.
	AppendRecord(ctx context.Context, orgID string, rec Record, lim Limits) (duplicate bool, err error)
	// AppendRecords stores recs, records of one run in the order given,
	// all or nothing, in one transaction (one commit): each record as
	// AppendRecord would store it after the ones before it, so
	// duplicates[i] reports what AppendRecord reports for recs[i], and
	// the limits apply to the run as each record is added. If any record
	// is refused, nothing is stored and the error is a *BatchError naming
	// the first refused record's index and wrapping what AppendRecord
	// would have returned for it (ErrSealed, ErrConflict, ErrNotFound, a
	// *LimitError...). Every record must name the same run (ErrConflict
	// otherwise, as a *BatchError); an empty recs stores nothing.
	AppendRecords(ctx context.Context, orgID string, recs []Record, lim Limits) (duplicates []bool, err error)
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
	// unknown run, ErrExists for a taken VPEC id. v.RunID and v.OrgID,
	// when set, must name runID and orgID.
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
	// sealed (by any process). A VPEC id that is already taken gives
	// ErrExists and leaves the run open.
	SealRun(ctx context.Context, orgID, runID string, v VPEC) error
}

// RunStore is the runs role: reading and writing runs and records.
type RunStore interface {
	RunReader
	RunWriter
}
