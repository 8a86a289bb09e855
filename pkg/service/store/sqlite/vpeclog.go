package sqlite

import (
	"context"
	"fmt"
	"math"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// SetVPECLogIndex implements store.VPECLog.
func (db *DB) SetVPECLogIndex(ctx context.Context, orgID, vpecID string, index uint64) error {
	if index > math.MaxInt64 {
		return fmt.Errorf("sqlite: log index %d of vpec %s is past the largest stored index", index, vpecID)
	}
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, "UPDATE vpecs SET log_index = ? WHERE id = ? AND org_id = ? AND log_index IS NULL", int64(index), vpecID, orgID)
		if err != nil {
			return mapErr(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var one int
		return mapErr(tx.QueryRowContext(ctx, "SELECT 1 FROM vpecs WHERE id = ? AND org_id = ?", vpecID, orgID).Scan(&one))
	})
	if err != nil {
		return fmt.Errorf("sqlite: log index of vpec %s of org %s: %w", vpecID, orgID, err)
	}
	return nil
}

// VPECsNotLogged implements store.VPECLog.
func (db *DB) VPECsNotLogged(ctx context.Context, limit int) ([]store.VPEC, error) {
	out, err := list(ctx, db, backend.ScanVPEC, "SELECT "+backend.VPECCols+" FROM vpecs WHERE log_index IS NULL ORDER BY issued_at, id LIMIT ?",
		store.ListLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: vpecs not in the log: %w", err)
	}
	return out, nil
}
