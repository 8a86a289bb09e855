package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateWebSession implements store.WebSessionStore.
func (db *DB) CreateWebSession(ctx context.Context, s store.WebSession) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO web_sessions (id_hash, org_id, api_key_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
		nonNil(s.IDHash), s.OrgID, s.APIKeyID, s.CreatedAt, s.ExpiresAt)
	if err != nil {
		return fmt.Errorf("postgres: create web session of org %s: %w", s.OrgID, mapErr(err))
	}
	return nil
}

// WebSession implements store.WebSessionStore.
func (db *DB) WebSession(ctx context.Context, idHash []byte, now time.Time) (store.WebSession, error) {
	s, err := backend.ScanWebSession(db.pool.QueryRow(ctx, `SELECT w.id_hash, w.org_id, w.api_key_id, w.created_at, w.expires_at, k.revoked_at, k.environment
		FROM web_sessions w JOIN api_keys k ON k.id = w.api_key_id WHERE w.id_hash = $1 AND w.expires_at > $2`,
		nonNil(idHash), now))
	if err != nil {
		return s, fmt.Errorf("postgres: web session: %w", mapErr(err))
	}
	return s, nil
}

// DeleteWebSession implements store.WebSessionStore.
func (db *DB) DeleteWebSession(ctx context.Context, idHash []byte) error {
	if _, err := db.pool.Exec(ctx, "DELETE FROM web_sessions WHERE id_hash = $1", nonNil(idHash)); err != nil {
		return fmt.Errorf("postgres: delete web session: %w", err)
	}
	return nil
}

// DeleteExpiredWebSessions implements store.WebSessionStore.
func (db *DB) DeleteExpiredWebSessions(ctx context.Context, now time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, "DELETE FROM web_sessions WHERE expires_at <= $1", now)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete expired web sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}
