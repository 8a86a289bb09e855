package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunTx is a backend's write transaction as the append and the seal see
// it: each method is one statement of the backend's dialect, its errors
// mapped (MapErr). The backend makes the transaction exclusive on the run
// (SQLite: its one writer; PostgreSQL: the run's row locked FOR UPDATE by
// OpenRun and RunState), so that an append either commits before a seal or
// sees the run sealed, in every process.
type RunTx interface {
	// OpenRun returns the record count and bytes of a run of the
	// organisation: store.ErrNotFound if there is none, store.ErrSealed if
	// it is sealed.
	OpenRun(ctx context.Context, orgID, runID string) (count, bytes int64, err error)
	// RunState returns a run's seal state: whether it is sealed, its VPEC
	// id (none while it has no VPEC) and the key it was sealed with;
	// store.ErrNotFound if the organisation has no such run.
	RunState(ctx context.Context, orgID, runID string) (sealed bool, vpecID sql.NullString, closeKey string, err error)
	// RunByID reads a run (RunCols).
	RunByID(ctx context.Context, runID string) (store.Run, error)
	// StoredRecord returns the run's record with the id (sequence, chain
	// hash and body are read); store.ErrNotFound if none.
	StoredRecord(ctx context.Context, runID, recordID string) (store.Record, error)
	// InsertRecord stores rec unless its record id or its sequence is
	// taken in its run: inserted=false then, and nothing written.
	InsertRecord(ctx context.Context, rec store.Record) (inserted bool, err error)
	// CountRecord adds an inserted record to its run's metadata
	// (RecordCount, RecordBytes, LastSequence, LastChainHash).
	CountRecord(ctx context.Context, rec store.Record) error
	// MarkSealed seals a run at closedAt with the close's key.
	MarkSealed(ctx context.Context, runID, closeKey string, closedAt time.Time) error
	// MarkOpen clears a run's seal (sealed, closed_at, close_key).
	MarkOpen(ctx context.Context, runID string) error
	// InsertVPEC stores v as the VPEC of the organisation's run and sets
	// the run's VPEC id; store.ErrExists for a taken VPEC id.
	InsertVPEC(ctx context.Context, orgID, runID string, v store.VPEC) error
}

// Append is store.RunWriter.AppendRecord in tx. A record is a duplicate
// when the stored record with its id has the same sequence, chain hash and
// body; any other difference is store.ErrConflict. The run is checked
// first: a sealed run gives store.ErrSealed, except for a duplicate of a
// record it holds (a retry whose response was lost), which is
// acknowledged; so is a duplicate that a Limits bound would refuse.
func Append(ctx context.Context, tx RunTx, orgID string, rec store.Record, lim store.Limits) (duplicate bool, err error) {
	count, bytes, err := tx.OpenRun(ctx, orgID, rec.RunID)
	if err != nil {
		// A retry of a record the run already holds (so one of its sealed
		// set) is acknowledged even after the seal: its response may have
		// been lost in a crash.
		if errors.Is(err, store.ErrSealed) {
			if dup, derr := StoredAlready(ctx, tx, rec); derr == nil && dup {
				return true, nil
			}
		}
		return false, err
	}
	rec.Body = NonNil(rec.Body)
	if lerr := lim.Check(count, bytes, int64(len(rec.Body))); lerr != nil {
		// A retry of a stored record is still a duplicate, full or not.
		if dup, derr := StoredAlready(ctx, tx, rec); derr != nil || dup {
			return dup, derr
		}
		return false, lerr
	}
	inserted, err := tx.InsertRecord(ctx, rec)
	if err != nil {
		return false, err
	}
	if inserted {
		if err := tx.CountRecord(ctx, rec); err != nil {
			return false, fmt.Errorf("update run metadata: %w", err)
		}
		return false, nil
	}
	// The record id or the sequence is taken. Nothing was written.
	dup, err := StoredAlready(ctx, tx, rec)
	if err == nil && !dup {
		err = fmt.Errorf("sequence %d holds another record: %w", rec.Sequence, store.ErrConflict)
	}
	return dup, err
}

// AppendMany is store.RunWriter.AppendRecords in tx: Append for each
// record in order, stopping at the first refused one with a
// *store.BatchError (the caller rolls tx back: nothing is stored).
func AppendMany(ctx context.Context, tx RunTx, orgID string, recs []store.Record, lim store.Limits) ([]bool, error) {
	dups := make([]bool, len(recs))
	for i, rec := range recs {
		if rec.RunID != recs[0].RunID {
			return nil, &store.BatchError{Index: i, Err: fmt.Errorf("run %s, not the batch's run %s: %w", rec.RunID, recs[0].RunID, store.ErrConflict)}
		}
		dup, err := Append(ctx, tx, orgID, rec, lim)
		if err != nil {
			return nil, &store.BatchError{Index: i, Err: err}
		}
		dups[i] = dup
	}
	return dups, nil
}

// StoredAlready reports whether the run holds rec exactly (same id,
// sequence, chain hash and body): true; nothing with its id: false; a
// different record with its id: store.ErrConflict.
func StoredAlready(ctx context.Context, tx RunTx, rec store.Record) (bool, error) {
	held, err := tx.StoredRecord(ctx, rec.RunID, rec.RecordID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	if err := rec.SameAs(held.Sequence, held.ChainHash, held.Body); err != nil {
		return false, err
	}
	return true, nil
}

// SealRecords is store.RunWriter.SealRecords in tx.
func SealRecords(ctx context.Context, tx RunTx, orgID, runID, closeKey string, closedAt time.Time) (run store.Run, sealed bool, err error) {
	_, _, err = tx.OpenRun(ctx, orgID, runID)
	switch {
	case err == nil:
		if err := tx.MarkSealed(ctx, runID, closeKey, closedAt); err != nil {
			return store.Run{}, false, err
		}
		sealed = true
	case !errors.Is(err, store.ErrSealed):
		return store.Run{}, false, err
	}
	run, err = tx.RunByID(ctx, runID)
	if err != nil {
		return store.Run{}, false, err
	}
	return run, sealed, nil
}

// SealRun is store.RunWriter.SealRun in tx, once v.Belongs(orgID, runID)
// is checked.
func SealRun(ctx context.Context, tx RunTx, orgID, runID string, v store.VPEC) error {
	if _, _, err := tx.OpenRun(ctx, orgID, runID); err != nil {
		return err
	}
	if err := tx.MarkSealed(ctx, runID, "", v.IssuedAt); err != nil {
		return err
	}
	return tx.InsertVPEC(ctx, orgID, runID, v)
}

// StoreVPEC is store.RunWriter.StoreVPEC in tx, once v.Belongs(orgID,
// runID) is checked.
func StoreVPEC(ctx context.Context, tx RunTx, orgID, runID string, v store.VPEC) error {
	sealed, vpecID, _, err := tx.RunState(ctx, orgID, runID)
	switch {
	case err != nil:
		return err
	case !sealed:
		return store.ErrNotSealed
	case vpecID.Valid:
		return fmt.Errorf("%w: the run already has vpec %s", store.ErrSealed, vpecID.String)
	}
	return tx.InsertVPEC(ctx, orgID, runID, v)
}

// UnsealRecords is store.RunWriter.UnsealRecords in tx.
func UnsealRecords(ctx context.Context, tx RunTx, orgID, runID, closeKey string) error {
	sealed, vpecID, key, err := tx.RunState(ctx, orgID, runID)
	switch {
	case err != nil:
		return err
	case !sealed:
		return store.ErrNotSealed
	case vpecID.Valid || key != closeKey:
		return store.ErrSealed
	}
	return tx.MarkOpen(ctx, runID)
}

// RecordPage is how many records EachRecord reads per query.
const RecordPage = 256

// EachRecord is store.RunReader.EachRecord over page, which reads up to
// RecordPage records of the run in sequence order: the first ones when
// first is set, else those after sequence after. Each page is its own
// query (keyset pagination), so that neither the whole run nor a
// long-lived cursor or read transaction is held while fn works.
func EachRecord(page func(first bool, after int64) ([]store.Record, error), fn func(store.Record) error) error {
	var after int64
	for first := true; ; first = false {
		recs, err := page(first, after)
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			after = recs[len(recs)-1].Sequence
		}
		for i := range recs {
			if err := fn(recs[i]); err != nil {
				return err
			}
			recs[i] = store.Record{} // fn may keep what it needs, not the page
		}
		if len(recs) < RecordPage {
			return nil
		}
	}
}

// BodyPage is a page of EachRecordBody: the records' sequences and their
// bodies in one buffer, reused from page to page.
type BodyPage struct {
	seqs []int64
	ends []int
	buf  []byte
}

// Add appends a record's sequence and body (copied) to the page.
func (p *BodyPage) Add(seq int64, body []byte) {
	p.buf = append(p.buf, body...)
	p.seqs = append(p.seqs, seq)
	p.ends = append(p.ends, len(p.buf))
}

// EachRecordBody is store.RunReader.EachRecordBody over page, which adds
// up to RecordPage records of the run to p in sequence order (the first
// ones when first is set, else those after sequence after), each page
// its own query as in EachRecord. fn is called once the page's query is
// done, with bodies in the page's buffer.
func EachRecordBody(page func(first bool, after int64, p *BodyPage) error, fn func(seq int64, body []byte) error) error {
	var p BodyPage
	var after int64
	for first := true; ; first = false {
		p.seqs, p.ends, p.buf = p.seqs[:0], p.ends[:0], p.buf[:0]
		if err := page(first, after, &p); err != nil {
			return err
		}
		start := 0
		for i, seq := range p.seqs {
			end := p.ends[i]
			if err := fn(seq, p.buf[start:end:end]); err != nil {
				return err
			}
			start = end
		}
		if len(p.seqs) > 0 {
			after = p.seqs[len(p.seqs)-1]
		}
		if len(p.seqs) < RecordPage {
			return nil
		}
	}
}

// Records collects what each (a store's EachRecord for one run) reads; an
// unknown run has no records: the result is empty, not an error.
func Records(each func(fn func(store.Record) error) error) ([]store.Record, error) {
	out := []store.Record{}
	err := each(func(r store.Record) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
