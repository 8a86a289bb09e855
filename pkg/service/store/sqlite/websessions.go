package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateWebSession implements store.WebSessionStore.
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

// WebSession implements store.WebSessionStore.
func (db *DB) WebSession(ctx context.Context, idHash []byte, now time.Time) (store.WebSession, error) {
	s, err := backend.ScanWebSession(db.queryRow(ctx, `SELECT w.id_hash, w.org_id, w.api_key_id, w.created_at, w.expires_at, k.revoked_at, k.environment
		FROM web_sessions w JOIN api_keys k ON k.id = w.api_key_id WHERE w.id_hash = ? AND w.expires_at > ?`,
		nonNil(idHash), fmtTime(now)))
	if err != nil {
		return s, fmt.Errorf("sqlite: web session: %w", mapErr(err))
	}
	return s, nil
}

// DeleteWebSession implements store.WebSessionStore.
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

// DeleteExpiredWebSessions implements store.WebSessionStore.
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
