package sqlite

import (
	"context"
	"fmt"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// InitIdentity implements store.IdentityStore.
func (db *DB) InitIdentity(ctx context.Context, id store.Identity) (store.Identity, bool, error) {
	var stored store.Identity
	var created bool
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO service_identity (id, "+backend.IdentityCols+") VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
			id.SigningKeyID, nonNil(id.SigningKey), id.TSACert, id.TSARoot, fmtTime(id.RecordedAt))
		if err != nil {
			return mapErr(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		created = n == 1
		stored, err = backend.ScanIdentity(tx.QueryRowContext(ctx, "SELECT "+backend.IdentityCols+" FROM service_identity WHERE id = 1"))
		return mapErr(err)
	})
	if err != nil {
		return store.Identity{}, false, fmt.Errorf("sqlite: record the service identity: %w", err)
	}
	return stored, created, nil
}

// Identity implements store.IdentityStore.
func (db *DB) Identity(ctx context.Context) (store.Identity, error) {
	id, err := backend.ScanIdentity(db.queryRow(ctx, "SELECT "+backend.IdentityCols+" FROM service_identity WHERE id = 1"))
	if err != nil {
		return store.Identity{}, fmt.Errorf("sqlite: service identity: %w", mapErr(err))
	}
	return id, nil
}
