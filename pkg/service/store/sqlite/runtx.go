package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// The writer's transaction is the backend.RunTx of appends and seals: the
// one writer makes it exclusive on every run, and the statements an append
// runs are prepared (writerStmts).
var _ backend.RunTx = (*wtx)(nil)

// OpenRun implements backend.RunTx.
func (tx *wtx) OpenRun(ctx context.Context, orgID, runID string) (count, bytes int64, err error) {
	var sealed bool
	if err := tx.stmt(ctx, tx.stmts.runSealed).QueryRowContext(ctx, runID, orgID).Scan(&sealed, &count, &bytes); err != nil {
		return 0, 0, mapErr(err)
	}
	if sealed {
		return 0, 0, store.ErrSealed
	}
	return count, bytes, nil
}

// RunState implements backend.RunTx.
func (tx *wtx) RunState(ctx context.Context, orgID, runID string) (sealed bool, vpecID sql.NullString, closeKey string, err error) {
	err = tx.stmt(ctx, tx.stmts.runState).QueryRowContext(ctx, runID, orgID).
		Scan(&sealed, &vpecID, &closeKey)
	return sealed, vpecID, closeKey, mapErr(err)
}

// RunByID implements backend.RunTx.
func (tx *wtx) RunByID(ctx context.Context, runID string) (store.Run, error) {
	r, err := backend.ScanRun(tx.stmt(ctx, tx.stmts.runByID).QueryRowContext(ctx, runID))
	return r, mapErr(err)
}

// StoredRecord implements backend.RunTx.
func (tx *wtx) StoredRecord(ctx context.Context, runID, recordID string) (store.Record, error) {
	r := store.Record{RunID: runID, RecordID: recordID}
	err := tx.QueryRowContext(ctx, "SELECT sequence, chain_hash, body FROM records WHERE run_id = ? AND record_id = ?",
		runID, recordID).Scan(&r.Sequence, &r.ChainHash, &r.Body)
	return r, mapErr(err)
}

// InsertRecord implements backend.RunTx.
func (tx *wtx) InsertRecord(ctx context.Context, rec store.Record) (bool, error) {
	res, err := tx.stmt(ctx, tx.stmts.insertRecord).ExecContext(ctx,
		rec.RunID, rec.Sequence, rec.RecordID, rec.ChainHash, nonNil(rec.Body))
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CountRecord implements backend.RunTx.
func (tx *wtx) CountRecord(ctx context.Context, rec store.Record) error {
	_, err := tx.stmt(ctx, tx.stmts.updateRun).ExecContext(ctx, rec.RunID, len(rec.Body), rec.Sequence, rec.ChainHash, 1)
	return err
}

// MarkSealed implements backend.RunTx.
func (tx *wtx) MarkSealed(ctx context.Context, runID, closeKey string, closedAt time.Time) error {
	_, err := tx.stmt(ctx, tx.stmts.markSealed).ExecContext(ctx, fmtTime(closedAt), closeKey, runID)
	return err
}

// MarkOpen implements backend.RunTx.
func (tx *wtx) MarkOpen(ctx context.Context, runID string) error {
	_, err := tx.ExecContext(ctx, "UPDATE runs SET sealed = 0, closed_at = NULL, close_key = '' WHERE id = ?", runID)
	return err
}

// InsertVPEC implements backend.RunTx.
func (tx *wtx) InsertVPEC(ctx context.Context, orgID, runID string, v store.VPEC) error {
	if _, err := tx.stmt(ctx, tx.stmts.insertVPEC).ExecContext(ctx,
		v.ID, runID, orgID, fmtTime(v.IssuedAt), nonNil(v.Body)); err != nil {
		return mapErr(err)
	}
	_, err := tx.stmt(ctx, tx.stmts.setVPECID).ExecContext(ctx, v.ID, runID)
	return err
}
