package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

var _ store.WebStore = (*DB)(nil)

// CreateWebSession implements store.WebStore.
func (db *DB) CreateWebSession(ctx context.Context, s store.WebSession) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO web_sessions (id_hash, org_id, api_key_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
			nonNil(s.IDHash), s.OrgID, s.APIKeyID, fmtTime(s.CreatedAt), fmtTime(s.ExpiresAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create web session of org %s: %w", s.OrgID, err)
	}
	return nil
}

// WebSession implements store.WebStore.
func (db *DB) WebSession(ctx context.Context, idHash []byte, now time.Time) (store.WebSession, error) {
	var s store.WebSession
	var created, expires string
	var revoked sql.NullString
	err := db.queryRow(ctx, `SELECT w.id_hash, w.org_id, w.api_key_id, w.created_at, w.expires_at, k.revoked_at, k.environment
		FROM web_sessions w JOIN api_keys k ON k.id = w.api_key_id WHERE w.id_hash = ? AND w.expires_at > ?`,
		nonNil(idHash), fmtTime(now)).Scan(&s.IDHash, &s.OrgID, &s.APIKeyID, &created, &expires, &revoked, &s.Environment)
	if err == nil {
		s.CreatedAt, err = parseTime(created)
	}
	if err == nil {
		s.ExpiresAt, err = parseTime(expires)
	}
	if err != nil {
		return store.WebSession{}, fmt.Errorf("sqlite: web session: %w", mapErr(err))
	}
	if revoked.Valid {
		return s, fmt.Errorf("sqlite: web session: its API key %s: %w", s.APIKeyID, store.ErrRevoked)
	}
	return s, nil
}

// DeleteWebSession implements store.WebStore.
func (db *DB) DeleteWebSession(ctx context.Context, idHash []byte) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM web_sessions WHERE id_hash = ?", nonNil(idHash))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete web session: %w", err)
	}
	return nil
}

// DeleteExpiredWebSessions implements store.WebStore.
func (db *DB) DeleteExpiredWebSessions(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM web_sessions WHERE expires_at <= ?", fmtTime(now))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired web sessions: %w", err)
	}
	return n, nil
}

// RunsOfOrg implements store.WebStore.
func (db *DB) RunsOfOrg(ctx context.Context, orgID string, f store.RunFilter) ([]store.Run, error) {
	rows, err := db.query(ctx, "SELECT "+runCols+` FROM runs WHERE org_id = ?
		AND (? = '' OR workflow_id = ?)
		AND (? = '' OR (? = 'open' AND sealed = 0) OR (? = 'sealed' AND sealed = 1))
		AND (? = '' OR environment = ?)
		ORDER BY opened_at DESC, id DESC LIMIT ?`,
		orgID, f.WorkflowID, f.WorkflowID, f.State, f.State, f.State, f.Environment, f.Environment, store.ListLimit(f.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: runs of org %s: %w", orgID, err)
	}
	defer rows.Close()
	out := []store.Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: runs of org %s: %w", orgID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: runs of org %s: %w", orgID, err)
	}
	return out, nil
}

// VPECsOfOrg implements store.WebStore.
func (db *DB) VPECsOfOrg(ctx context.Context, orgID string, limit int) ([]store.VPEC, error) {
	rows, err := db.query(ctx, "SELECT id, run_id, org_id, issued_at, body FROM vpecs WHERE org_id = ? ORDER BY issued_at DESC, id DESC LIMIT ?",
		orgID, store.ListLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: vpecs of org %s: %w", orgID, err)
	}
	defer rows.Close()
	out := []store.VPEC{}
	for rows.Next() {
		var v store.VPEC
		var issued string
		err := rows.Scan(&v.ID, &v.RunID, &v.OrgID, &issued, &v.Body)
		if err == nil {
			v.IssuedAt, err = parseTime(issued)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: vpecs of org %s: %w", orgID, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: vpecs of org %s: %w", orgID, err)
	}
	return out, nil
}

// ManifestsOfOrg implements store.WebStore.
func (db *DB) ManifestsOfOrg(ctx context.Context, orgID string) ([]store.Manifest, error) {
	rows, err := db.query(ctx, "SELECT org_id, id, name, body, created_at FROM manifests WHERE org_id = ? ORDER BY created_at, id LIMIT ?", orgID, store.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: manifests of org %s: %w", orgID, err)
	}
	defer rows.Close()
	out := []store.Manifest{}
	for rows.Next() {
		var m store.Manifest
		var created string
		err := rows.Scan(&m.OrgID, &m.ID, &m.Name, &m.Body, &created)
		if err == nil {
			m.CreatedAt, err = parseTime(created)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: manifests of org %s: %w", orgID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: manifests of org %s: %w", orgID, err)
	}
	return out, nil
}

// CalibrationRequestsOfOrg implements store.WebStore.
func (db *DB) CalibrationRequestsOfOrg(ctx context.Context, orgID string) ([]store.CalibrationRequest, error) {
	rows, err := db.query(ctx, "SELECT "+calCols+" FROM calibration_requests WHERE org_id = ? ORDER BY created_at, id LIMIT ?", orgID, store.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: calibration requests of org %s: %w", orgID, err)
	}
	defer rows.Close()
	out := []store.CalibrationRequest{}
	for rows.Next() {
		c, err := scanCal(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: calibration requests of org %s: %w", orgID, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: calibration requests of org %s: %w", orgID, err)
	}
	return out, nil
}
