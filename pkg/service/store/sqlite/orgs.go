package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateOrg implements store.OrgStore.
func (db *DB) CreateOrg(ctx context.Context, o store.Org) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO orgs (id, name, tier, created_at) VALUES (?, ?, ?, ?)",
			o.ID, o.Name, o.Tier, fmtTime(o.CreatedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create org %s (%s): %w", o.ID, o.Name, err)
	}
	return nil
}

// OrgByName implements store.OrgReader.
func (db *DB) OrgByName(ctx context.Context, name string) (store.Org, error) {
	o, err := backend.ScanOrg(db.queryRow(ctx, "SELECT "+backend.OrgCols+" FROM orgs WHERE name = ?", name))
	if err != nil {
		return store.Org{}, fmt.Errorf("sqlite: org named %q: %w", name, mapErr(err))
	}
	return o, nil
}

// OrgByID implements store.OrgReader.
func (db *DB) OrgByID(ctx context.Context, id string) (store.Org, error) {
	o, err := backend.ScanOrg(db.queryRow(ctx, "SELECT "+backend.OrgCols+" FROM orgs WHERE id = ?", id))
	if err != nil {
		return store.Org{}, fmt.Errorf("sqlite: org %s: %w", id, mapErr(err))
	}
	return o, nil
}

// CreateAPIKey implements store.OrgStore.
func (db *DB) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO api_keys (id, org_id, environment, hash, created_at) VALUES (?, ?, ?, ?, ?)",
			k.ID, k.OrgID, k.Environment, nonNil(k.Hash), fmtTime(k.CreatedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create api key %s of org %s: %w", k.ID, k.OrgID, err)
	}
	return nil
}

// APIKeyByHash implements store.OrgReader.
func (db *DB) APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	k, err := backend.ScanKeyByHash(db.queryRow(ctx, "SELECT "+backend.APIKeyCols+" FROM api_keys WHERE hash = ?", nonNil(hash)), hash)
	if err != nil {
		return k, fmt.Errorf("sqlite: api key by hash: %w", mapErr(err))
	}
	return k, nil
}

// APIKeys implements store.OrgReader.
func (db *DB) APIKeys(ctx context.Context, orgID string) ([]store.APIKey, error) {
	out, err := list(ctx, db, backend.ScanAPIKey, "SELECT "+backend.APIKeyCols+" FROM api_keys WHERE ? = '' OR org_id = ? ORDER BY created_at, id", orgID, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: api keys of org %q: %w", orgID, err)
	}
	return out, nil
}

// RevokeAPIKey implements store.OrgStore.
func (db *DB) RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error) {
	var k store.APIKey
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", fmtTime(at), id); err != nil {
			return err
		}
		var err error
		k, err = backend.ScanAPIKey(tx.QueryRowContext(ctx, "SELECT "+backend.APIKeyCols+" FROM api_keys WHERE id = ?", id))
		return mapErr(err)
	})
	if err != nil {
		return store.APIKey{}, fmt.Errorf("sqlite: revoke api key %s: %w", id, err)
	}
	return k, nil
}

// CreateReviewerKey implements store.OrgStore.
func (db *DB) CreateReviewerKey(ctx context.Context, k store.ReviewerKey) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO reviewer_keys ("+backend.ReviewerKeyCols+") VALUES (?, ?, ?, ?, ?)",
			k.OrgID, k.KeyID, nonNil(k.PublicKey), k.Name, fmtTime(k.CreatedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create reviewer key %s of org %s: %w", k.KeyID, k.OrgID, err)
	}
	return nil
}

// ReviewerKey implements store.OrgReader.
func (db *DB) ReviewerKey(ctx context.Context, orgID, keyID string) (store.ReviewerKey, error) {
	k, err := backend.ScanReviewerKey(db.queryRow(ctx, "SELECT "+backend.ReviewerKeyCols+" FROM reviewer_keys WHERE org_id = ? AND key_id = ?", orgID, keyID))
	if err != nil {
		return store.ReviewerKey{}, fmt.Errorf("sqlite: reviewer key %s of org %s: %w", keyID, orgID, mapErr(err))
	}
	return k, nil
}
