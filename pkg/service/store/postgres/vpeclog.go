package postgres

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
		return fmt.Errorf("postgres: log index %d of vpec %s is past the largest stored index", index, vpecID)
	}
	tag, err := db.pool.Exec(ctx, "UPDATE vpecs SET log_index = $1 WHERE id = $2 AND org_id = $3 AND log_index IS NULL", int64(index), vpecID, orgID)
	if err == nil && tag.RowsAffected() == 0 {
		var one int
		err = db.pool.QueryRow(ctx, "SELECT 1 FROM vpecs WHERE id = $1 AND org_id = $2", vpecID, orgID).Scan(&one)
	}
	if err != nil {
		return fmt.Errorf("postgres: log index of vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	return nil
}

// VPECsNotLogged implements store.VPECLog.
func (db *DB) VPECsNotLogged(ctx context.Context, limit int) ([]store.VPEC, error) {
	out, err := list(ctx, db, backend.ScanVPEC, "SELECT "+backend.VPECCols+` FROM vpecs WHERE log_index IS NULL
		ORDER BY issued_at, id COLLATE "C" LIMIT $1`, store.ListLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: vpecs not in the log: %w", err)
	}
	return out, nil
}
