package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateRun implements store.RunWriter.
func (db *DB) CreateRun(ctx context.Context, r store.Run) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO runs (id, org_id, workflow_id, surface_id, policy_pack_id,
		policy_snapshot_hash, process_context_hash, environment, api_key_id, sealed, opened_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, false, $10)`,
		r.ID, r.OrgID, r.WorkflowID, r.SurfaceID, r.PolicyPackID, r.PolicySnapshotHash,
		r.ProcessContextHash, r.Environment, r.APIKeyID, r.OpenedAt)
	if err != nil {
		return fmt.Errorf("postgres: create run %s of org %s: %w", r.ID, r.OrgID, mapErr(err))
	}
	return nil
}

// Run implements store.RunReader.
func (db *DB) Run(ctx context.Context, orgID, runID string) (store.Run, error) {
	r, err := backend.ScanRun(db.pool.QueryRow(ctx, "SELECT "+backend.RunCols+" FROM runs WHERE id = $1 AND org_id = $2", runID, orgID))
	if err != nil {
		return store.Run{}, fmt.Errorf("postgres: run %s of org %s: %w", runID, orgID, mapErr(err))
	}
	return r, nil
}

// RunsOfOrg implements store.RunReader.
func (db *DB) RunsOfOrg(ctx context.Context, orgID string, f store.RunFilter) ([]store.Run, error) {
	out, err := list(ctx, db, backend.ScanRun, "SELECT "+backend.RunCols+` FROM runs WHERE org_id = $1
		AND ($2 = '' OR workflow_id = $2)
		AND ($3 = '' OR ($3 = 'open' AND NOT sealed) OR ($3 = 'sealed' AND sealed))
		AND ($5 = '' OR environment = $5)
		ORDER BY opened_at DESC, id COLLATE "C" DESC LIMIT $4`,
		orgID, f.WorkflowID, f.State, store.ListLimit(f.Limit), f.Environment)
	if err != nil {
		return nil, fmt.Errorf("postgres: runs of org %s: %w", orgID, err)
	}
	return out, nil
}

// inRunTx runs fn in a READ COMMITTED transaction (see inTx) as a
// backend.RunTx.
func (db *DB) inRunTx(ctx context.Context, fn func(tx runTx) error) error {
	return db.inTx(ctx, func(tx pgx.Tx) error { return fn(runTx{tx}) })
}

// AppendRecord implements store.RunWriter (backend.Append). The append
// updates the run's row first: that row lock serialises it with the seal
// (and the run's metadata update with other appends) across processes.
func (db *DB) AppendRecord(ctx context.Context, orgID string, rec store.Record, lim store.Limits) (duplicate bool, err error) {
	// The common case (an open run with room, a new record id and
	// sequence) in one statement and one round trip; anything else (and
	// only then) takes the transaction below, which tells a duplicate, a
	// conflict, a sealed or full run apart. The statement changes nothing
	// when it does not append.
	tag, err := db.pool.Exec(ctx, appendFastSQL, rec.RunID, orgID, rec.Sequence, rec.RecordID, rec.ChainHash, nonNil(rec.Body),
		lim.MaxRecords, lim.MaxBytes, int64(len(rec.Body)), lim.BytesPerRecord)
	switch {
	case err == nil && tag.RowsAffected() == 1:
		return false, nil
	case err != nil && !isUnique(err): // a unique violation rolled it back whole
		return false, fmt.Errorf("postgres: append record %s (sequence %d) to run %s of org %s: %w",
			rec.RecordID, rec.Sequence, rec.RunID, orgID, mapErr(err))
	}
	err = db.inRunTx(ctx, func(tx runTx) error {
		var err error
		duplicate, err = backend.Append(ctx, tx, orgID, rec, lim)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: append record %s (sequence %d) to run %s of org %s: %w",
			rec.RecordID, rec.Sequence, rec.RunID, orgID, err)
	}
	return duplicate, nil
}

// appendFastSQL appends a record in one statement: it counts the record
// in the run's metadata as runTx.CountRecord does, only if the run is the
// organisation's, open, and has room for it (store.Limits.Check: $7
// MaxRecords, $8 MaxBytes, $9 the body's length, $10 BytesPerRecord; 0 is
// no bound), and inserts the record for the run it updated. It affects one
// row when it appended and none, having written nothing, otherwise; a
// taken record id or sequence is a unique violation that rolls the whole
// statement back. Updating the row first takes its lock without a
// separate SELECT ... FOR UPDATE (which PostgreSQL writes to its WAL as a
// lock of its own): the row lock serialises the append with the run's
// seal (an UPDATE of the same row) and its other appends across
// processes, and conflicts with the FOR UPDATE of the transaction path;
// under READ COMMITTED, an update that had to wait re-checks the
// conditions on the row as committed (a run sealed meanwhile is not
// appended to). SET reads the row as it was: the run's first record, or a
// higher sequence, becomes its chain tip.
const appendFastSQL = `WITH u AS (
	UPDATE runs SET record_count = record_count + 1, record_bytes = record_bytes + $9::bigint,
		last_sequence = CASE WHEN record_count = 0 OR $3 > last_sequence THEN $3 ELSE last_sequence END,
		last_chain_hash = CASE WHEN record_count = 0 OR $3 > last_sequence THEN $5 ELSE last_chain_hash END
	WHERE id = $1 AND org_id = $2 AND NOT sealed
		AND ($7::bigint <= 0 OR record_count + 1 <= $7::bigint)
		AND ($8::bigint <= 0 OR record_bytes + $9::bigint + (record_count + 1) * $10::bigint <= $8::bigint)
	RETURNING id
)
INSERT INTO records (run_id, sequence, record_id, chain_hash, body)
SELECT id, $3, $4, $5, $6 FROM u`

// AppendRecords implements store.RunWriter (backend.AppendMany). The
// common case (an open run with room for the whole batch, every record
// id and sequence new) is one statement, one round trip and one commit
// (appendManySQL); a unique violation aborts that statement whole, and
// anything but the common case takes one transaction of backend.AppendMany,
// which tells duplicates, conflicts, a sealed or a full run apart.
func (db *DB) AppendRecords(ctx context.Context, orgID string, recs []store.Record, lim store.Limits) (duplicates []bool, err error) {
	if len(recs) == 0 {
		return []bool{}, nil
	}
	fail := func(err error) error {
		return fmt.Errorf("postgres: append %d records (sequences %d-%d) to run %s of org %s: %w",
			len(recs), recs[0].Sequence, recs[len(recs)-1].Sequence, recs[0].RunID, orgID, err)
	}
	if appended, err := db.appendManyFast(ctx, orgID, recs, lim); err != nil {
		return nil, fail(err)
	} else if appended {
		return make([]bool, len(recs)), nil
	}
	err = db.inRunTx(ctx, func(tx runTx) error {
		var err error
		duplicates, err = backend.AppendMany(ctx, tx, orgID, recs, lim)
		return err
	})
	if err != nil {
		return nil, fail(err)
	}
	return duplicates, nil
}

// appendManyFast tries appendManySQL: appended=true if it stored every
// record, false (nothing written) if the batch needs the transaction.
func (db *DB) appendManyFast(ctx context.Context, orgID string, recs []store.Record, lim store.Limits) (appended bool, err error) {
	n := len(recs)
	seqs, ids, chains, bodies := make([]int64, n), make([]string, n), make([]string, n), make([][]byte, n)
	var total int64
	last := 0
	for i, r := range recs {
		if r.RunID != recs[0].RunID {
			return false, nil // AppendMany names it
		}
		seqs[i], ids[i], chains[i], bodies[i] = r.Sequence, r.RecordID, r.ChainHash, nonNil(r.Body)
		total += int64(len(r.Body))
		if r.Sequence > recs[last].Sequence {
			last = i
		}
	}
	tag, err := db.pool.Exec(ctx, appendManySQL, recs[0].RunID, orgID, seqs, ids, chains, bodies,
		lim.MaxRecords, lim.MaxBytes, int64(n), total, lim.BytesPerRecord, recs[last].Sequence, recs[last].ChainHash)
	switch {
	case isUnique(err):
		return false, nil // the statement was rolled back whole
	case err != nil:
		return false, mapErr(err)
	}
	return tag.RowsAffected() == 1, nil
}

// appendManySQL appends a batch in one statement (one lock a batch costs
// little): it locks the run's row FOR UPDATE only if the run is the
// organisation's, open, and has room for all $9 records of $10 body bytes
// (store.Limits.Check after the last one: $7 MaxRecords, $8 MaxBytes, $11
// BytesPerRecord), inserts them all ($3-$6, arrays in batch order) and
// counts them in the run's metadata ($12 and $13: the batch's highest
// sequence and its chain hash). Without ON CONFLICT, a taken record id or
// sequence is a unique violation that aborts the whole statement; it
// affects one row when it appended every record and none otherwise.
const appendManySQL = `WITH r AS (
	SELECT id FROM runs
	WHERE id = $1 AND org_id = $2 AND NOT sealed
		AND ($7::bigint <= 0 OR record_count + $9::bigint <= $7::bigint)
		AND ($8::bigint <= 0 OR record_bytes + $10::bigint + (record_count + $9::bigint) * $11::bigint <= $8::bigint)
	FOR UPDATE
), ins AS (
	INSERT INTO records (run_id, sequence, record_id, chain_hash, body)
	SELECT r.id, u.s, u.rid, u.ch, u.b FROM r, unnest($3::bigint[], $4::text[], $5::text[], $6::bytea[]) AS u(s, rid, ch, b)
	RETURNING 1
)
UPDATE runs SET record_count = record_count + $9::bigint, record_bytes = record_bytes + $10::bigint,
	last_sequence = CASE WHEN record_count = 0 OR $12::bigint > last_sequence THEN $12::bigint ELSE last_sequence END,
	last_chain_hash = CASE WHEN record_count = 0 OR $12::bigint > last_sequence THEN $13::text ELSE last_chain_hash END
WHERE runs.id = (SELECT id FROM r) AND (SELECT count(*) FROM ins) = $9::bigint`

// RecordBySequence implements store.RunReader.
func (db *DB) RecordBySequence(ctx context.Context, runID string, seq int64) (store.Record, error) {
	r, err := backend.ScanRecord(db.pool.QueryRow(ctx, "SELECT "+backend.RecordCols+" FROM records WHERE run_id = $1 AND sequence = $2", runID, seq))
	if err != nil {
		return store.Record{}, fmt.Errorf("postgres: record %d of run %s: %w", seq, runID, mapErr(err))
	}
	return r, nil
}

// Records implements store.RunReader.
func (db *DB) Records(ctx context.Context, runID string) ([]store.Record, error) {
	return backend.Records(func(fn func(store.Record) error) error { return db.EachRecord(ctx, runID, fn) })
}

// EachRecord implements store.RunReader. It reads in pages (keyset
// pagination on the primary key), so that neither the whole run nor a
// long-lived cursor is held while fn works.
func (db *DB) EachRecord(ctx context.Context, runID string, fn func(store.Record) error) error {
	return backend.EachRecord(func(first bool, after int64) ([]store.Record, error) {
		q, args := "SELECT "+backend.RecordCols+" FROM records WHERE run_id = $1 ORDER BY sequence LIMIT $2", []any{runID, backend.RecordPage}
		if !first {
			q, args = "SELECT "+backend.RecordCols+" FROM records WHERE run_id = $1 AND sequence > $3 ORDER BY sequence LIMIT $2", []any{runID, backend.RecordPage, after}
		}
		page, err := list(ctx, db, backend.ScanRecord, q, args...)
		if err != nil {
			return nil, fmt.Errorf("postgres: records of run %s: %w", runID, err)
		}
		return page, nil
	}, fn)
}

// EachRecordBody implements store.RunReader: EachRecord's pages, reading
// only sequence and body, each body scanned from the connection's buffer
// (pgtype.DriverBytes) into the page's.
func (db *DB) EachRecordBody(ctx context.Context, runID string, fn func(seq int64, body []byte) error) error {
	return backend.EachRecordBody(func(first bool, after int64, p *backend.BodyPage) error {
		q, args := "SELECT sequence, body FROM records WHERE run_id = $1 ORDER BY sequence LIMIT $2", []any{runID, backend.RecordPage}
		if !first {
			q, args = "SELECT sequence, body FROM records WHERE run_id = $1 AND sequence > $3 ORDER BY sequence LIMIT $2", []any{runID, backend.RecordPage, after}
		}
		rows, err := db.pool.Query(ctx, q, args...)
		if err == nil {
			var seq int64
			var body pgtype.DriverBytes
			for rows.Next() {
				if err = rows.Scan(&seq, &body); err != nil {
					break
				}
				p.Add(seq, body)
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err != nil {
			return fmt.Errorf("postgres: records of run %s: %w", runID, err)
		}
		return nil
	}, fn)
}

// SealRun implements store.RunWriter.
func (db *DB) SealRun(ctx context.Context, orgID, runID string, v store.VPEC) error {
	err := v.Belongs(orgID, runID)
	if err == nil {
		err = db.inRunTx(ctx, func(tx runTx) error { return backend.SealRun(ctx, tx, orgID, runID, v) })
	}
	if err != nil {
		return fmt.Errorf("postgres: seal run %s of org %s with vpec %s: %w", runID, orgID, v.ID, err)
	}
	return nil
}

// SealRecords implements store.RunWriter. It locks the run's row FOR
// UPDATE: appends holding the lock commit first, appends waiting for it
// then see the run sealed.
func (db *DB) SealRecords(ctx context.Context, orgID, runID, closeKey string, closedAt time.Time) (store.Run, bool, error) {
	// The common case (the organisation's open run) in one statement and
	// one round trip; anything else (and only then) takes the transaction
	// below, which tells a sealed run from a missing one. The statement
	// changes nothing when it does not seal.
	run, err := backend.ScanRun(db.pool.QueryRow(ctx, sealFastSQL, runID, orgID, closedAt, closeKey))
	switch {
	case err == nil:
		return run, true, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return store.Run{}, false, fmt.Errorf("postgres: seal the records of run %s of org %s: %w", runID, orgID, mapErr(err))
	}
	var sealed bool
	err = db.inRunTx(ctx, func(tx runTx) error {
		var err error
		run, sealed, err = backend.SealRecords(ctx, tx, orgID, runID, closeKey, closedAt)
		return err
	})
	if err != nil {
		return store.Run{}, false, fmt.Errorf("postgres: seal the records of run %s of org %s: %w", runID, orgID, err)
	}
	return run, sealed, nil
}

// storeVPECFast stores v in one statement and one round trip in the
// common case (the organisation's sealed run, with no VPEC yet): stored
// is true. Otherwise it writes nothing and stored is false, and
// backend.StoreVPEC's transaction tells the cases apart (a unique
// violation aborts the statement whole and is left to it too).
func (db *DB) storeVPECFast(ctx context.Context, orgID, runID string, v store.VPEC) (stored bool, err error) {
	tag, err := db.pool.Exec(ctx, storeVPECFastSQL, v.ID, runID, orgID, v.IssuedAt, nonNil(v.Body))
	switch {
	case isUnique(err):
		return false, nil
	case err != nil:
		return false, mapErr(err)
	}
	return tag.RowsAffected() == 1, nil
}

// storeVPECFastSQL is backend.StoreVPEC in one statement: it records the
// VPEC's id in the run, only if the run is the organisation's, sealed and
// without a VPEC, and inserts the VPEC for the run it updated, as
// runTx.InsertVPEC does. It affects one row when it stored the VPEC and
// none, having written nothing, otherwise; a VPEC id already taken is a
// unique violation that rolls the whole statement back. Like
// appendFastSQL, it takes the run row's lock by updating the row.
const storeVPECFastSQL = `WITH u AS (
	UPDATE runs SET vpec_id = $1
	WHERE id = $2 AND org_id = $3 AND sealed AND vpec_id IS NULL
	RETURNING id
)
INSERT INTO vpecs (id, run_id, org_id, issued_at, body)
SELECT $1, id, $3, $4, $5 FROM u`

// sealFastSQL seals a run in one statement, as backend.SealRecords does
// in a transaction: only if the run is the organisation's and open, and
// it returns the run as sealed (RunCols). The UPDATE takes the row lock
// that OpenRun takes, so the seal is serialised with the run's appends
// across processes as in the transaction; under READ COMMITTED, a lock
// that had to wait re-checks the conditions on the row as committed (a
// run sealed meanwhile is not sealed again, and no row is returned).
const sealFastSQL = `UPDATE runs SET sealed = true, closed_at = $3, close_key = $4
	WHERE id = $1 AND org_id = $2 AND NOT sealed
	RETURNING ` + backend.RunCols

// UnsealRecords implements store.RunWriter.
func (db *DB) UnsealRecords(ctx context.Context, orgID, runID, closeKey string) error {
	err := db.inRunTx(ctx, func(tx runTx) error { return backend.UnsealRecords(ctx, tx, orgID, runID, closeKey) })
	if err != nil {
		return fmt.Errorf("postgres: unseal the records of run %s of org %s: %w", runID, orgID, err)
	}
	return nil
}

// StoreVPEC implements store.RunWriter.
func (db *DB) StoreVPEC(ctx context.Context, orgID, runID string, v store.VPEC) error {
	err := v.Belongs(orgID, runID)
	if err == nil {
		var stored bool
		if stored, err = db.storeVPECFast(ctx, orgID, runID, v); err == nil && !stored {
			err = db.inRunTx(ctx, func(tx runTx) error { return backend.StoreVPEC(ctx, tx, orgID, runID, v) })
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: store vpec %s of run %s of org %s: %w", v.ID, runID, orgID, err)
	}
	return nil
}
