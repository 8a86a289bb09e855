package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/svc-gov/svc/pkg/service/store"
)

var _ store.IdentityStore = (*DB)(nil)

const identityCols = "signing_key_id, signing_key, tsa_cert, tsa_root, recorded_at"

func scanIdentity(row pgx.Row) (store.Identity, error) {
	var id store.Identity
	if err := row.Scan(&id.SigningKeyID, &id.SigningKey, &id.TSACert, &id.TSARoot, &id.RecordedAt); err != nil {
		return store.Identity{}, mapErr(err)
	}
	id.RecordedAt = id.RecordedAt.UTC()
	return id, nil
}

// InitIdentity implements store.IdentityStore. A concurrent insert by
// another process makes this one wait for its commit and then do nothing
// (ON CONFLICT), so the SELECT that follows reads the winner's row.
func (db *DB) InitIdentity(ctx context.Context, id store.Identity) (store.Identity, bool, error) {
	tag, err := db.pool.Exec(ctx, "INSERT INTO service_identity (id, "+identityCols+") VALUES (1, $1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
		id.SigningKeyID, nonNil(id.SigningKey), id.TSACert, id.TSARoot, id.RecordedAt)
	if err != nil {
		return store.Identity{}, false, fmt.Errorf("postgres: record the service identity: %w", mapErr(err))
	}
	stored, err := db.Identity(ctx)
	if err != nil {
		return store.Identity{}, false, err
	}
	return stored, tag.RowsAffected() == 1, nil
}

// Identity implements store.IdentityStore.
func (db *DB) Identity(ctx context.Context) (store.Identity, error) {
	id, err := scanIdentity(db.pool.QueryRow(ctx, "SELECT "+identityCols+" FROM service_identity WHERE id = 1"))
	if err != nil {
		return store.Identity{}, fmt.Errorf("postgres: service identity: %w", err)
	}
	return id, nil
}
