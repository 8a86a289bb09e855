package postgres

import (
	"context"
	"fmt"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// VPEC implements store.VPECReader.
func (db *DB) VPEC(ctx context.Context, orgID, vpecID string) (store.VPEC, error) {
	v, err := backend.ScanVPEC(db.pool.QueryRow(ctx, "SELECT "+backend.VPECCols+" FROM vpecs WHERE id = $1 AND org_id = $2", vpecID, orgID))
	if err != nil {
		return store.VPEC{}, fmt.Errorf("postgres: vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	return v, nil
}

// VPECInfo implements store.VPECReader. octet_length of a TOASTed bytea
// reads its TOAST pointer (which holds the raw size), never the body.
func (db *DB) VPECInfo(ctx context.Context, orgID, vpecID string) (store.VPECInfo, error) {
	v, err := backend.ScanVPECInfo(db.pool.QueryRow(ctx, `SELECT v.id, v.run_id, v.org_id, v.issued_at, octet_length(v.body), r.environment, v.log_index
		FROM vpecs v JOIN runs r ON r.id = v.run_id WHERE v.id = $1 AND v.org_id = $2`, vpecID, orgID))
	if err != nil {
		return store.VPECInfo{}, fmt.Errorf("postgres: vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	return v, nil
}

// VPECsOfOrg implements store.VPECReader.
func (db *DB) VPECsOfOrg(ctx context.Context, orgID string, limit int) ([]store.VPEC, error) {
	out, err := list(ctx, db, backend.ScanVPEC, "SELECT "+backend.VPECCols+` FROM vpecs WHERE org_id = $1
		ORDER BY issued_at DESC, id COLLATE "C" DESC LIMIT $2`, orgID, store.ListLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: vpecs of org %s: %w", orgID, err)
	}
	return out, nil
}
