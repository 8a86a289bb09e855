package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svc-gov/svc/pkg/service/store"
)

var _ store.WebStore = (*DB)(nil)

// CreateWebSession implements store.WebStore.
func (db *DB) CreateWebSession(ctx context.Context, s store.WebSession) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO web_sessions (id_hash, org_id, api_key_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
		nonNil(s.IDHash), s.OrgID, s.APIKeyID, s.CreatedAt, s.ExpiresAt)
	if err != nil {
		return fmt.Errorf("postgres: create web session of org %s: %w", s.OrgID, mapErr(err))
	}
	return nil
}

// WebSession implements store.WebStore.
func (db *DB) WebSession(ctx context.Context, idHash []byte, now time.Time) (store.WebSession, error) {
	var s store.WebSession
	var revoked *time.Time
	err := db.pool.QueryRow(ctx, `SELECT w.id_hash, w.org_id, w.api_key_id, w.created_at, w.expires_at, k.revoked_at, k.environment
		FROM web_sessions w JOIN api_keys k ON k.id = w.api_key_id WHERE w.id_hash = $1 AND w.expires_at > $2`,
		nonNil(idHash), now).Scan(&s.IDHash, &s.OrgID, &s.APIKeyID, &s.CreatedAt, &s.ExpiresAt, &revoked, &s.Environment)
	if err != nil {
		return store.WebSession{}, fmt.Errorf("postgres: web session: %w", mapErr(err))
	}
	s.CreatedAt, s.ExpiresAt = s.CreatedAt.UTC(), s.ExpiresAt.UTC()
	if revoked != nil {
		return s, fmt.Errorf("postgres: web session: its API key %s: %w", s.APIKeyID, store.ErrRevoked)
	}
	return s, nil
}

// DeleteWebSession implements store.WebStore.
func (db *DB) DeleteWebSession(ctx context.Context, idHash []byte) error {
	if _, err := db.pool.Exec(ctx, "DELETE FROM web_sessions WHERE id_hash = $1", nonNil(idHash)); err != nil {
		return fmt.Errorf("postgres: delete web session: %w", err)
	}
	return nil
}

// DeleteExpiredWebSessions implements store.WebStore.
func (db *DB) DeleteExpiredWebSessions(ctx context.Context, now time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, "DELETE FROM web_sessions WHERE expires_at <= $1", now)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete expired web sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

// RunsOfOrg implements store.WebStore.
func (db *DB) RunsOfOrg(ctx context.Context, orgID string, f store.RunFilter) ([]store.Run, error) {
	rows, err := db.pool.Query(ctx, "SELECT "+runCols+` FROM runs WHERE org_id = $1
		AND ($2 = '' OR workflow_id = $2)
		AND ($3 = '' OR ($3 = 'open' AND NOT sealed) OR ($3 = 'sealed' AND sealed))
		AND ($5 = '' OR environment = $5)
		ORDER BY opened_at DESC, id COLLATE "C" DESC LIMIT $4`,
		orgID, f.WorkflowID, f.State, store.ListLimit(f.Limit), f.Environment)
	if err != nil {
		return nil, fmt.Errorf("postgres: runs of org %s: %w", orgID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Run, error) { return scanRun(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: runs of org %s: %w", orgID, err)
	}
	if out == nil {
		out = []store.Run{}
	}
	return out, nil
}

// VPECsOfOrg implements store.WebStore.
func (db *DB) VPECsOfOrg(ctx context.Context, orgID string, limit int) ([]store.VPEC, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, run_id, org_id, issued_at, body FROM vpecs WHERE org_id = $1
		ORDER BY issued_at DESC, id COLLATE "C" DESC LIMIT $2`, orgID, store.ListLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: vpecs of org %s: %w", orgID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.VPEC, error) {
		var v store.VPEC
		err := row.Scan(&v.ID, &v.RunID, &v.OrgID, &v.IssuedAt, &v.Body)
		v.IssuedAt = v.IssuedAt.UTC()
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: vpecs of org %s: %w", orgID, err)
	}
	if out == nil {
		out = []store.VPEC{}
	}
	return out, nil
}

// ManifestsOfOrg implements store.WebStore.
func (db *DB) ManifestsOfOrg(ctx context.Context, orgID string) ([]store.Manifest, error) {
	rows, err := db.pool.Query(ctx, `SELECT org_id, id, name, body, created_at FROM manifests WHERE org_id = $1
		ORDER BY created_at, id COLLATE "C" LIMIT $2`, orgID, store.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("postgres: manifests of org %s: %w", orgID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Manifest, error) {
		var m store.Manifest
		err := row.Scan(&m.OrgID, &m.ID, &m.Name, &m.Body, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: manifests of org %s: %w", orgID, err)
	}
	if out == nil {
		out = []store.Manifest{}
	}
	return out, nil
}

// CalibrationRequestsOfOrg implements store.WebStore.
func (db *DB) CalibrationRequestsOfOrg(ctx context.Context, orgID string) ([]store.CalibrationRequest, error) {
	rows, err := db.pool.Query(ctx, "SELECT "+calCols+` FROM calibration_requests WHERE org_id = $1
		ORDER BY created_at, id COLLATE "C" LIMIT $2`, orgID, store.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("postgres: calibration requests of org %s: %w", orgID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.CalibrationRequest, error) { return scanCal(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: calibration requests of org %s: %w", orgID, err)
	}
	if out == nil {
		out = []store.CalibrationRequest{}
	}
	return out, nil
}
