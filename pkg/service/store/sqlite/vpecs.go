package sqlite

import (
	"context"
	"fmt"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// VPEC implements store.VPECReader.
func (db *DB) VPEC(ctx context.Context, orgID, vpecID string) (store.VPEC, error) {
	v, err := backend.ScanVPEC(db.queryRow(ctx, "SELECT "+backend.VPECCols+" FROM vpecs WHERE id = ? AND org_id = ?", vpecID, orgID))
	if err != nil {
		return store.VPEC{}, fmt.Errorf("sqlite: vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	return v, nil
}

// VPECInfo implements store.VPECReader. length() of a BLOB reads the
// record header only, never the body's pages.
func (db *DB) VPECInfo(ctx context.Context, orgID, vpecID string) (store.VPECInfo, error) {
	v, err := backend.ScanVPECInfo(db.queryRow(ctx, `SELECT v.id, v.run_id, v.org_id, v.issued_at, length(v.body), r.environment, v.log_index
		FROM vpecs v JOIN runs r ON r.id = v.run_id WHERE v.id = ? AND v.org_id = ?`, vpecID, orgID))
	if err != nil {
		return store.VPECInfo{}, fmt.Errorf("sqlite: vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	return v, nil
}

// VPECsOfOrg implements store.VPECReader.
func (db *DB) VPECsOfOrg(ctx context.Context, orgID string, limit int) ([]store.VPEC, error) {
	out, err := list(ctx, db, backend.ScanVPEC, "SELECT "+backend.VPECCols+" FROM vpecs WHERE org_id = ? ORDER BY issued_at DESC, id DESC LIMIT ?",
		orgID, store.ListLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: vpecs of org %s: %w", orgID, err)
	}
	return out, nil
}
