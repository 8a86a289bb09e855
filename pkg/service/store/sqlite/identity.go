package sqlite

import (
	"context"
	"fmt"

	"github.com/svc-gov/svc/pkg/service/store"
)

var _ store.IdentityStore = (*DB)(nil)

const identityCols = "signing_key_id, signing_key, tsa_cert, tsa_root, recorded_at"

func scanIdentity(row interface{ Scan(...any) error }) (store.Identity, error) {
	var id store.Identity
	var recorded string
	if err := row.Scan(&id.SigningKeyID, &id.SigningKey, &id.TSACert, &id.TSARoot, &recorded); err != nil {
		return store.Identity{}, mapErr(err)
	}
	var err error
	id.RecordedAt, err = parseTime(recorded)
	return id, err
}

// InitIdentity implements store.IdentityStore.
func (db *DB) InitIdentity(ctx context.Context, id store.Identity) (store.Identity, bool, error) {
	var stored store.Identity
	var created bool
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO service_identity (id, "+identityCols+") VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
			id.SigningKeyID, nonNil(id.SigningKey), id.TSACert, id.TSARoot, fmtTime(id.RecordedAt))
		if err != nil {
			return mapErr(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		created = n == 1
		stored, err = scanIdentity(tx.QueryRowContext(ctx, "SELECT "+identityCols+" FROM service_identity WHERE id = 1"))
		return err
	})
	if err != nil {
		return store.Identity{}, false, fmt.Errorf("sqlite: record the service identity: %w", err)
	}
	return stored, created, nil
}

// Identity implements store.IdentityStore.
func (db *DB) Identity(ctx context.Context) (store.Identity, error) {
	id, err := scanIdentity(db.queryRow(ctx, "SELECT "+identityCols+" FROM service_identity WHERE id = 1"))
	if err != nil {
		return store.Identity{}, fmt.Errorf("sqlite: service identity: %w", err)
	}
	return id, nil
}
