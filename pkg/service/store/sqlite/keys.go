package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

const apiKeyCols = "id, org_id, environment, hash, created_at, revoked_at"

func scanAPIKey(row interface{ Scan(...any) error }) (store.APIKey, error) {
	var k store.APIKey
	var created string
	var revoked sql.NullString
	if err := row.Scan(&k.ID, &k.OrgID, &k.Environment, &k.Hash, &created, &revoked); err != nil {
		return store.APIKey{}, err
	}
	var err error
	if k.CreatedAt, err = parseTime(created); err != nil {
		return store.APIKey{}, err
	}
	if revoked.Valid {
		if k.RevokedAt, err = parseTime(revoked.String); err != nil {
			return store.APIKey{}, err
		}
	}
	return k, nil
}

// APIKeys implements store.Store.
func (db *DB) APIKeys(ctx context.Context, orgID string) ([]store.APIKey, error) {
	rows, err := db.query(ctx, "SELECT "+apiKeyCols+" FROM api_keys WHERE ? = '' OR org_id = ? ORDER BY created_at, id", orgID, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: api keys of org %q: %w", orgID, err)
	}
	defer rows.Close()
	out := []store.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: api keys of org %q: %w", orgID, err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: api keys of org %q: %w", orgID, err)
	}
	return out, nil
}

// RevokeAPIKey implements store.Store. The revocation is committed (and
// durable) when it returns: every process reading the file sees it on its
// next read.
func (db *DB) RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error) {
	var k store.APIKey
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", fmtTime(at), id); err != nil {
			return err
		}
		var err error
		k, err = scanAPIKey(tx.QueryRowContext(ctx, "SELECT "+apiKeyCols+" FROM api_keys WHERE id = ?", id))
		return mapErr(err)
	})
	if err != nil {
		return store.APIKey{}, fmt.Errorf("sqlite: revoke api key %s: %w", id, err)
	}
	return k, nil
}

// ClaimSession implements store.Store. The claim is one write
// transaction: of two concurrent claims by different records (in any
// process sharing the file) exactly one succeeds.
func (db *DB) ClaimSession(ctx context.Context, orgID, id, recordID string) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var held sql.NullString
		err := tx.QueryRowContext(ctx, "SELECT record_id FROM sessions WHERE id = ? AND org_id = ?", id, orgID).Scan(&held)
		switch {
		case err != nil:
			return mapErr(err)
		case held.Valid && held.String == recordID:
			return nil
		case held.Valid:
			return fmt.Errorf("the session backs record %s: %w", held.String, store.ErrConflict)
		}
		_, err = tx.ExecContext(ctx, "UPDATE sessions SET record_id = ? WHERE id = ?", recordID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: claim session %s of org %s for record %s: %w", id, orgID, recordID, err)
	}
	return nil
}
