package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateOrg implements store.OrgStore.
func (db *DB) CreateOrg(ctx context.Context, o store.Org) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO orgs (id, name, tier, created_at) VALUES ($1, $2, $3, $4)",
		o.ID, o.Name, o.Tier, o.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create org %s (%s): %w", o.ID, o.Name, mapErr(err))
	}
	return nil
}

// OrgByName implements store.OrgReader.
func (db *DB) OrgByName(ctx context.Context, name string) (store.Org, error) {
	o, err := backend.ScanOrg(db.pool.QueryRow(ctx, "SELECT "+backend.OrgCols+" FROM orgs WHERE name = $1", name))
	if err != nil {
		return store.Org{}, fmt.Errorf("postgres: org named %q: %w", name, mapErr(err))
	}
	return o, nil
}

// OrgByID implements store.OrgReader.
func (db *DB) OrgByID(ctx context.Context, id string) (store.Org, error) {
	o, err := backend.ScanOrg(db.pool.QueryRow(ctx, "SELECT "+backend.OrgCols+" FROM orgs WHERE id = $1", id))
	if err != nil {
		return store.Org{}, fmt.Errorf("postgres: org %s: %w", id, mapErr(err))
	}
	return o, nil
}

// CreateAPIKey implements store.OrgStore.
func (db *DB) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO api_keys (id, org_id, environment, hash, created_at) VALUES ($1, $2, $3, $4, $5)",
		k.ID, k.OrgID, k.Environment, nonNil(k.Hash), k.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create api key %s of org %s: %w", k.ID, k.OrgID, mapErr(err))
	}
	return nil
}

// APIKeyByHash implements store.OrgReader.
func (db *DB) APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	k, err := backend.ScanKeyByHash(db.pool.QueryRow(ctx, "SELECT "+backend.APIKeyCols+" FROM api_keys WHERE hash = $1", nonNil(hash)), hash)
	if err != nil {
		return k, fmt.Errorf("postgres: api key by hash: %w", mapErr(err))
	}
	return k, nil
}

// APIKeys implements store.OrgReader.
func (db *DB) APIKeys(ctx context.Context, orgID string) ([]store.APIKey, error) {
	out, err := list(ctx, db, backend.ScanAPIKey, "SELECT "+backend.APIKeyCols+" FROM api_keys WHERE $1 = '' OR org_id = $1 ORDER BY created_at, id COLLATE \"C\"", orgID)
	if err != nil {
		return nil, fmt.Errorf("postgres: api keys of org %q: %w", orgID, err)
	}
	return out, nil
}

// RevokeAPIKey implements store.OrgStore.
func (db *DB) RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error) {
	k, err := backend.ScanAPIKey(db.pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2)
		WHERE id = $1 RETURNING `+backend.APIKeyCols, id, at))
	if err != nil {
		return store.APIKey{}, fmt.Errorf("postgres: revoke api key %s: %w", id, mapErr(err))
	}
	return k, nil
}

// CreateReviewerKey implements store.OrgStore.
func (db *DB) CreateReviewerKey(ctx context.Context, k store.ReviewerKey) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO reviewer_keys ("+backend.ReviewerKeyCols+") VALUES ($1, $2, $3, $4, $5)",
		k.OrgID, k.KeyID, nonNil(k.PublicKey), k.Name, k.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create reviewer key %s of org %s: %w", k.KeyID, k.OrgID, mapErr(err))
	}
	return nil
}

// ReviewerKey implements store.OrgReader.
func (db *DB) ReviewerKey(ctx context.Context, orgID, keyID string) (store.ReviewerKey, error) {
	k, err := backend.ScanReviewerKey(db.pool.QueryRow(ctx, "SELECT "+backend.ReviewerKeyCols+" FROM reviewer_keys WHERE org_id = $1 AND key_id = $2", orgID, keyID))
	if err != nil {
		return store.ReviewerKey{}, fmt.Errorf("postgres: reviewer key %s of org %s: %w", keyID, orgID, mapErr(err))
	}
	return k, nil
}
