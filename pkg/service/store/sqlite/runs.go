package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateRun implements store.RunWriter.
func (db *DB) CreateRun(ctx context.Context, r store.Run) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.stmt(ctx, tx.stmts.createRun).ExecContext(ctx,
			r.ID, r.OrgID, r.WorkflowID, r.SurfaceID, r.PolicyPackID, r.PolicySnapshotHash,
			r.ProcessContextHash, r.Environment, r.APIKeyID, fmtTime(r.OpenedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create run %s of org %s: %w", r.ID, r.OrgID, err)
	}
	return nil
}

// Run implements store.RunReader.
func (db *DB) Run(ctx context.Context, orgID, runID string) (store.Run, error) {
	r, err := backend.ScanRun(db.queryRow(ctx, "SELECT "+backend.RunCols+" FROM runs WHERE id = ? AND org_id = ?", runID, orgID))
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: run %s of org %s: %w", runID, orgID, mapErr(err))
	}
	return r, nil
}

// RunsOfOrg implements store.RunReader.
func (db *DB) RunsOfOrg(ctx context.Context, orgID string, f store.RunFilter) ([]store.Run, error) {
	out, err := list(ctx, db, backend.ScanRun, "SELECT "+backend.RunCols+` FROM runs WHERE org_id = ?
		AND (? = '' OR workflow_id = ?)
		AND (? = '' OR (? = 'open' AND sealed = 0) OR (? = 'sealed' AND sealed = 1))
		AND (? = '' OR environment = ?)
		ORDER BY opened_at DESC, id DESC LIMIT ?`,
		orgID, f.WorkflowID, f.WorkflowID, f.State, f.State, f.State, f.Environment, f.Environment, store.ListLimit(f.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: runs of org %s: %w", orgID, err)
	}
	return out, nil
}

// AppendRecord implements store.RunWriter (backend.Append).
//
// Concurrent appends are group-committed (see the package documentation):
// each is atomic on its own, in a savepoint of the batch's transaction, and
// durable when it returns. Appends and seals all go through the one writer:
// an append commits before a seal or sees the run sealed.
func (db *DB) AppendRecord(ctx context.Context, orgID string, rec store.Record, lim store.Limits) (duplicate bool, err error) {
	var dup bool // not the result duplicate: see PutManifest
	err = db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		dup, err = db.appendRecord(ctx, tx, orgID, rec, lim)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: append record %s (sequence %d) to run %s of org %s: %w",
			rec.RecordID, rec.Sequence, rec.RunID, orgID, err)
	}
	return dup, nil
}

// AppendRecords implements store.RunWriter (backend.AppendMany): the whole
// batch is one write of the writer goroutine, in its own savepoint, so it
// commits (one WAL fsync, possibly shared with other writes) or rolls back
// as a whole.
func (db *DB) AppendRecords(ctx context.Context, orgID string, recs []store.Record, lim store.Limits) ([]bool, error) {
	if len(recs) == 0 {
		return []bool{}, nil
	}
	var dups []bool
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		dups, err = appendMany(ctx, tx, orgID, recs, lim)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: append %d records (sequences %d-%d) to run %s of org %s: %w",
			len(recs), recs[0].Sequence, recs[len(recs)-1].Sequence, recs[0].RunID, orgID, err)
	}
	return dups, nil
}

// appendMany is backend.AppendMany in tx, with a shortcut for the common
// batch: records of one open run, all new, within the limits. Those are
// stored by multi-row INSERTs and counted by one UPDATE of the run, three
// statements per record fewer than backend.AppendMany runs. Anything else
// (a duplicate or conflict the INSERT skips, a sealed or missing run, a
// limit, records of several runs) rolls the shortcut back and takes
// backend.AppendMany, which tells those cases apart record by record.
func appendMany(ctx context.Context, tx *wtx, orgID string, recs []store.Record, lim store.Limits) ([]bool, error) {
	ok, err := appendAllNew(ctx, tx, orgID, recs, lim)
	if err != nil {
		return nil, err
	}
	if ok {
		return make([]bool, len(recs)), nil // none a duplicate
	}
	return backend.AppendMany(ctx, tx, orgID, recs, lim)
}

// insertRows is the number of records one INSERT of appendAllNew holds
// (five parameters each, well under SQLite's 32,766).
const insertRows = 200

// appendAllNew stores recs if they are all new records of one open run of
// the organisation that its limits admit, and reports whether it did;
// false leaves tx as it found it.
func appendAllNew(ctx context.Context, tx *wtx, orgID string, recs []store.Record, lim store.Limits) (bool, error) {
	runID := recs[0].RunID
	for _, rec := range recs {
		if rec.RunID != runID {
			return false, nil
		}
	}
	count, bytes, err := tx.OpenRun(ctx, orgID, runID)
	if err != nil {
		return false, nil // not found, sealed...: AppendMany says which
	}
	var total int64
	top := 0
	for i, rec := range recs {
		n := int64(len(rec.Body))
		if lim.Check(count+int64(i), bytes+total, n) != nil {
			return false, nil
		}
		total += n
		if rec.Sequence > recs[top].Sequence {
			top = i
		}
	}
	if _, err := tx.ExecContext(ctx, "SAVEPOINT many"); err != nil {
		return false, fmt.Errorf("savepoint: %w", err)
	}
	inserted, ierr := insertRecords(ctx, tx, recs)
	if ierr != nil || inserted != int64(len(recs)) {
		// An id or a sequence is taken (in the run or twice in the batch),
		// or a record is refused: AppendMany finds which. If the failure
		// rolled the whole transaction back (an I/O error, a full disk),
		// the savepoint is gone and the write fails with it.
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO many"); err != nil {
			return false, fmt.Errorf("roll back to savepoint after %v: %w", ierr, err)
		}
		if _, err := tx.ExecContext(ctx, "RELEASE many"); err != nil {
			return false, fmt.Errorf("release savepoint: %w", err)
		}
		return false, nil
	}
	last := recs[top]
	if _, err := tx.stmt(ctx, tx.stmts.updateRun).ExecContext(ctx, runID, total, last.Sequence, last.ChainHash, len(recs)); err != nil {
		return false, fmt.Errorf("update run metadata: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "RELEASE many"); err != nil {
		return false, fmt.Errorf("release savepoint: %w", err)
	}
	return true, nil
}

// insertRecords inserts recs, insertRows to a statement, skipping any
// whose id or sequence is taken, and returns how many it inserted.
func insertRecords(ctx context.Context, tx *wtx, recs []store.Record) (int64, error) {
	var inserted int64
	for len(recs) > 0 {
		chunk := recs[:min(len(recs), insertRows)]
		recs = recs[len(chunk):]
		var q strings.Builder
		q.WriteString("INSERT INTO records (run_id, sequence, record_id, chain_hash, body) VALUES ")
		args := make([]any, 0, 5*len(chunk))
		for i, rec := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?)")
			args = append(args, rec.RunID, rec.Sequence, rec.RecordID, rec.ChainHash, nonNil(rec.Body))
		}
		q.WriteString(" ON CONFLICT DO NOTHING")
		res, err := tx.ExecContext(ctx, q.String(), args...)
		if err != nil {
			return 0, fmt.Errorf("insert %d records: %w", len(chunk), mapErr(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("insert %d records: %w", len(chunk), err)
		}
		inserted += n
	}
	return inserted, nil
}

// appendRecord appends rec in tx (the writer's transaction, or its
// savepoint).
func (db *DB) appendRecord(ctx context.Context, tx *wtx, orgID string, rec store.Record, lim store.Limits) (bool, error) {
	return backend.Append(ctx, tx, orgID, rec, lim)
}

// RecordBySequence implements store.RunReader.
func (db *DB) RecordBySequence(ctx context.Context, runID string, seq int64) (store.Record, error) {
	r, err := backend.ScanRecord(db.queryRow(ctx, "SELECT "+backend.RecordCols+" FROM records WHERE run_id = ? AND sequence = ?", runID, seq))
	if err != nil {
		return store.Record{}, fmt.Errorf("sqlite: record %d of run %s: %w", seq, runID, mapErr(err))
	}
	return r, nil
}

// Records implements store.RunReader.
func (db *DB) Records(ctx context.Context, runID string) ([]store.Record, error) {
	return backend.Records(func(fn func(store.Record) error) error { return db.EachRecord(ctx, runID, fn) })
}

// EachRecord implements store.RunReader. It reads in pages, each page in
// its own statement, so that no read transaction stays open while fn
// works (a long reader would keep the WAL from being checkpointed).
func (db *DB) EachRecord(ctx context.Context, runID string, fn func(store.Record) error) error {
	return backend.EachRecord(func(first bool, after int64) ([]store.Record, error) {
		q, args := "SELECT "+backend.RecordCols+" FROM records WHERE run_id = ? ORDER BY sequence LIMIT ?", []any{runID, backend.RecordPage}
		if !first {
			q, args = "SELECT "+backend.RecordCols+" FROM records WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?", []any{runID, after, backend.RecordPage}
		}
		page, err := list(ctx, db, backend.ScanRecord, q, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: records of run %s: %w", runID, err)
		}
		return page, nil
	}, fn)
}

// EachRecordBody implements store.RunReader: EachRecord's pages, reading
// only sequence and body, each body scanned from the driver's buffer into
// the page's.
func (db *DB) EachRecordBody(ctx context.Context, runID string, fn func(seq int64, body []byte) error) error {
	return backend.EachRecordBody(func(first bool, after int64, p *backend.BodyPage) error {
		q, args := "SELECT sequence, body FROM records WHERE run_id = ? ORDER BY sequence LIMIT ?", []any{runID, backend.RecordPage}
		if !first {
			q, args = "SELECT sequence, body FROM records WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?", []any{runID, after, backend.RecordPage}
		}
		if err := db.bodyPage(ctx, p, q, args...); err != nil {
			return fmt.Errorf("sqlite: records of run %s: %w", runID, err)
		}
		return nil
	}, fn)
}

func (db *DB) bodyPage(ctx context.Context, p *backend.BodyPage, q string, args ...any) error {
	rows, err := db.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var seq int64
	var body sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&seq, &body); err != nil {
			return err
		}
		p.Add(seq, body)
	}
	return rows.Err()
}

// SealRun implements store.RunWriter.
func (db *DB) SealRun(ctx context.Context, orgID, runID string, v store.VPEC) error {
	err := v.Belongs(orgID, runID)
	if err == nil {
		err = db.write(ctx, func(ctx context.Context, tx *wtx) error { return backend.SealRun(ctx, tx, orgID, runID, v) })
	}
	if err != nil {
		return fmt.Errorf("sqlite: seal run %s of org %s with vpec %s: %w", runID, orgID, v.ID, err)
	}
	return nil
}

// SealRecords implements store.RunWriter.
func (db *DB) SealRecords(ctx context.Context, orgID, runID, closeKey string, closedAt time.Time) (store.Run, bool, error) {
	var run store.Run
	var sealed bool
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		run, sealed, err = backend.SealRecords(ctx, tx, orgID, runID, closeKey, closedAt)
		return err
	})
	if err != nil {
		return store.Run{}, false, fmt.Errorf("sqlite: seal the records of run %s of org %s: %w", runID, orgID, err)
	}
	return run, sealed, nil
}

// UnsealRecords implements store.RunWriter.
func (db *DB) UnsealRecords(ctx context.Context, orgID, runID, closeKey string) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		return backend.UnsealRecords(ctx, tx, orgID, runID, closeKey)
	})
	if err != nil {
		return fmt.Errorf("sqlite: unseal the records of run %s of org %s: %w", runID, orgID, err)
	}
	return nil
}

// StoreVPEC implements store.RunWriter.
func (db *DB) StoreVPEC(ctx context.Context, orgID, runID string, v store.VPEC) error {
	err := v.Belongs(orgID, runID)
	if err == nil {
		err = db.write(ctx, func(ctx context.Context, tx *wtx) error { return backend.StoreVPEC(ctx, tx, orgID, runID, v) })
	}
	if err != nil {
		return fmt.Errorf("sqlite: store vpec %s of run %s of org %s: %w", v.ID, runID, orgID, err)
	}
	return nil
}
