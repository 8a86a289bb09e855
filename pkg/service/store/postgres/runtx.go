package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// runTx is a READ COMMITTED transaction as the append and the seal see it
// (backend.RunTx). OpenRun and RunState lock the run's row FOR UPDATE for
// the rest of the transaction: across all processes, the appends to one
// run (which update its metadata columns) and its seal are serialised; a
// concurrent transaction holding the lock is waited for, and its outcome
// seen.
type runTx struct{ pgx.Tx }

var _ backend.RunTx = runTx{}

// OpenRun implements backend.RunTx.
func (tx runTx) OpenRun(ctx context.Context, orgID, runID string) (count, bytes int64, err error) {
	var sealed bool
	if err := tx.QueryRow(ctx, "SELECT sealed, record_count, record_bytes FROM runs WHERE id = $1 AND org_id = $2 FOR UPDATE", runID, orgID).
		Scan(&sealed, &count, &bytes); err != nil {
		return 0, 0, mapErr(err)
	}
	if sealed {
		return 0, 0, store.ErrSealed
	}
	return count, bytes, nil
}

// RunState implements backend.RunTx.
func (tx runTx) RunState(ctx context.Context, orgID, runID string) (sealed bool, vpecID sql.NullString, closeKey string, err error) {
	err = tx.QueryRow(ctx, "SELECT sealed, vpec_id, close_key FROM runs WHERE id = $1 AND org_id = $2 FOR UPDATE", runID, orgID).
		Scan(&sealed, &vpecID, &closeKey)
	return sealed, vpecID, closeKey, mapErr(err)
}

// RunByID implements backend.RunTx.
func (tx runTx) RunByID(ctx context.Context, runID string) (store.Run, error) {
	r, err := backend.ScanRun(tx.QueryRow(ctx, "SELECT "+backend.RunCols+" FROM runs WHERE id = $1", runID))
	return r, mapErr(err)
}

// StoredRecord implements backend.RunTx.
func (tx runTx) StoredRecord(ctx context.Context, runID, recordID string) (store.Record, error) {
	r := store.Record{RunID: runID, RecordID: recordID}
	err := tx.QueryRow(ctx, "SELECT sequence, chain_hash, body FROM records WHERE run_id = $1 AND record_id = $2",
		runID, recordID).Scan(&r.Sequence, &r.ChainHash, &r.Body)
	return r, mapErr(err)
}

// InsertRecord implements backend.RunTx.
func (tx runTx) InsertRecord(ctx context.Context, rec store.Record) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO records (run_id, sequence, record_id, chain_hash, body)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
		rec.RunID, rec.Sequence, rec.RecordID, rec.ChainHash, nonNil(rec.Body))
	switch {
	case isUnique(err):
		return false, fmt.Errorf("%w (%v)", store.ErrConflict, err)
	case err != nil:
		return false, mapErr(err)
	}
	return tag.RowsAffected() == 1, nil
}

// CountRecord implements backend.RunTx.
func (tx runTx) CountRecord(ctx context.Context, rec store.Record) error {
	// SET expressions see the row as it was before the UPDATE.
	_, err := tx.Exec(ctx, `UPDATE runs SET record_count = record_count + 1, record_bytes = record_bytes + $2,
		last_sequence = CASE WHEN record_count = 0 OR $3 > last_sequence THEN $3 ELSE last_sequence END,
		last_chain_hash = CASE WHEN record_count = 0 OR $3 > last_sequence THEN $4 ELSE last_chain_hash END
		WHERE id = $1`, rec.RunID, int64(len(rec.Body)), rec.Sequence, rec.ChainHash)
	return err
}

// MarkSealed implements backend.RunTx.
func (tx runTx) MarkSealed(ctx context.Context, runID, closeKey string, closedAt time.Time) error {
	_, err := tx.Exec(ctx, "UPDATE runs SET sealed = true, closed_at = $2, close_key = $3 WHERE id = $1", runID, closedAt, closeKey)
	return err
}

// MarkOpen implements backend.RunTx.
func (tx runTx) MarkOpen(ctx context.Context, runID string) error {
	_, err := tx.Exec(ctx, "UPDATE runs SET sealed = false, closed_at = NULL, close_key = '' WHERE id = $1", runID)
	return err
}

// InsertVPEC implements backend.RunTx. A second VPEC for the run (the
// unique run_id of vpecs) is store.ErrSealed.
func (tx runTx) InsertVPEC(ctx context.Context, orgID, runID string, v store.VPEC) error {
	if _, err := tx.Exec(ctx, "INSERT INTO vpecs (id, run_id, org_id, issued_at, body) VALUES ($1, $2, $3, $4, $5)",
		v.ID, runID, orgID, v.IssuedAt, nonNil(v.Body)); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == uniqueViolation && pe.ConstraintName == "vpecs_run_id_key" {
			return fmt.Errorf("%w (%v)", store.ErrSealed, err)
		}
		return mapErr(err)
	}
	_, err := tx.Exec(ctx, "UPDATE runs SET vpec_id = $2 WHERE id = $1", runID, v.ID)
	return err
}
