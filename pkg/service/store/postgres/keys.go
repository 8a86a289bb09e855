package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svc-gov/svc/pkg/service/store"
)

const apiKeyCols = "id, org_id, environment, hash, created_at, revoked_at"

func scanAPIKey(row pgx.Row) (store.APIKey, error) {
	var k store.APIKey
	var revoked *time.Time
	if err := row.Scan(&k.ID, &k.OrgID, &k.Environment, &k.Hash, &k.CreatedAt, &revoked); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	if revoked != nil {
		k.RevokedAt = revoked.UTC()
	}
	return k, nil
}

// APIKeys implements store.Store.
func (db *DB) APIKeys(ctx context.Context, orgID string) ([]store.APIKey, error) {
	rows, err := db.pool.Query(ctx, "SELECT "+apiKeyCols+" FROM api_keys WHERE $1 = '' OR org_id = $1 ORDER BY created_at, id COLLATE \"C\"", orgID)
	if err != nil {
		return nil, fmt.Errorf("postgres: api keys of org %q: %w", orgID, err)
	}
	defer rows.Close()
	out := []store.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: api keys of org %q: %w", orgID, err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: api keys of org %q: %w", orgID, err)
	}
	return out, nil
}

// RevokeAPIKey implements store.Store. The revocation is committed when it
// returns: every server sharing the database sees it on its next read.
func (db *DB) RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error) {
	k, err := scanAPIKey(db.pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2)
		WHERE id = $1 RETURNING `+apiKeyCols, id, at))
	if err != nil {
		return store.APIKey{}, fmt.Errorf("postgres: revoke api key %s: %w", id, mapErr(err))
	}
	return k, nil
}

// ClaimSession implements store.Store. The session's row is locked FOR
// UPDATE: of concurrent claims (in any process) the first commits its
// record id, and the others, having waited for the lock, read it.
func (db *DB) ClaimSession(ctx context.Context, orgID, id, recordID string) error {
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var held *string
		err := tx.QueryRow(ctx, "SELECT record_id FROM sessions WHERE id = $1 AND org_id = $2 FOR UPDATE", id, orgID).Scan(&held)
		switch {
		case err != nil:
			return mapErr(err)
		case held != nil && *held == recordID:
			return nil
		case held != nil:
			return fmt.Errorf("the session backs record %s: %w", *held, store.ErrConflict)
		}
		_, err = tx.Exec(ctx, "UPDATE sessions SET record_id = $2 WHERE id = $1", id, recordID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: claim session %s of org %s for record %s: %w", id, orgID, recordID, err)
	}
	return nil
}
