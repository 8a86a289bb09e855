package postgres

import (
	"context"
	"fmt"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// InitIdentity implements store.IdentityStore. A concurrent insert by
// another process makes this one wait for its commit and then do nothing
// (ON CONFLICT), so the SELECT that follows reads the winner's row.
func (db *DB) InitIdentity(ctx context.Context, id store.Identity) (store.Identity, bool, error) {
	tag, err := db.pool.Exec(ctx, "INSERT INTO service_identity (id, "+backend.IdentityCols+") VALUES (1, $1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
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
	id, err := backend.ScanIdentity(db.pool.QueryRow(ctx, "SELECT "+backend.IdentityCols+" FROM service_identity WHERE id = 1"))
	if err != nil {
		return store.Identity{}, fmt.Errorf("postgres: service identity: %w", mapErr(err))
	}
	return id, nil
}
