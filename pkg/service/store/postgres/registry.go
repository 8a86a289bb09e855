package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// PutManifest implements store.ManifestStore.
func (db *DB) PutManifest(ctx context.Context, m store.Manifest) (created bool, err error) {
	tag, err := db.pool.Exec(ctx, `INSERT INTO manifests (org_id, id, name, body, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org_id, id) DO NOTHING`,
		m.OrgID, m.ID, m.Name, nonNil(m.Body), m.CreatedAt)
	if err != nil {
		return false, fmt.Errorf("postgres: put manifest %s of org %s: %w", m.ID, m.OrgID, mapErr(err))
	}
	return tag.RowsAffected() == 1, nil
}

// Manifest implements store.ManifestReader.
func (db *DB) Manifest(ctx context.Context, orgID, id string) (store.Manifest, error) {
	m, err := backend.ScanManifest(db.pool.QueryRow(ctx, "SELECT "+backend.ManifestCols+" FROM manifests WHERE org_id = $1 AND id = $2", orgID, id))
	if err != nil {
		return store.Manifest{}, fmt.Errorf("postgres: manifest %s of org %s: %w", id, orgID, mapErr(err))
	}
	return m, nil
}

// ManifestsOfOrg implements store.ManifestReader.
func (db *DB) ManifestsOfOrg(ctx context.Context, orgID string) ([]store.Manifest, error) {
	out, err := list(ctx, db, backend.ScanManifest, "SELECT "+backend.ManifestCols+` FROM manifests WHERE org_id = $1
		ORDER BY created_at, id COLLATE "C" LIMIT $2`, orgID, store.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("postgres: manifests of org %s: %w", orgID, err)
	}
	return out, nil
}

// PutProfile implements store.ProfileStore. The model hashes are kept as
// a text[], and each in the profile_models index.
func (db *DB) PutProfile(ctx context.Context, p store.Profile) error {
	hashes := backend.NonNilList(p.ModelHashes)
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO profiles ("+backend.ProfileCols+") VALUES ($1, $2, $3, $4)",
			p.ID, hashes, nonNil(p.Body), p.PublishedAt); err != nil {
			return mapErr(err)
		}
		// ORDER BY ordinality keeps seq in publication order for ties.
		_, err := tx.Exec(ctx, `INSERT INTO profile_models (model_hash, profile_id, published_at)
			SELECT h, $2, $3 FROM unnest($1::text[]) WITH ORDINALITY AS u (h, i) ORDER BY i
			ON CONFLICT DO NOTHING`, hashes, p.ID, p.PublishedAt)
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("postgres: put profile %s: %w", p.ID, err)
	}
	return nil
}

func scanProfile(row backend.Scanner) (store.Profile, error) {
	return backend.ScanProfile(row, textArray)
}

// Profiles implements store.ProfileReader.
func (db *DB) Profiles(ctx context.Context) ([]store.Profile, error) {
	out, err := list(ctx, db, scanProfile, "SELECT "+backend.ProfileCols+` FROM profiles ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: profiles: %w", err)
	}
	return out, nil
}

// ProfileByID implements store.ProfileReader.
func (db *DB) ProfileByID(ctx context.Context, id string) (store.Profile, error) {
	p, err := scanProfile(db.pool.QueryRow(ctx, "SELECT "+backend.ProfileCols+" FROM profiles WHERE id = $1", id))
	if err != nil {
		return store.Profile{}, fmt.Errorf("postgres: profile %s: %w", id, mapErr(err))
	}
	return p, nil
}

// ProfileByModelHash implements store.ProfileReader.
func (db *DB) ProfileByModelHash(ctx context.Context, modelHash string) (store.Profile, error) {
	p, err := scanProfile(db.pool.QueryRow(ctx, `SELECT p.id, p.model_hashes, p.body, p.published_at
		FROM profile_models m JOIN profiles p ON p.id = m.profile_id
		WHERE m.model_hash = $1 ORDER BY m.published_at DESC, m.seq DESC LIMIT 1`, modelHash))
	if err != nil {
		return store.Profile{}, fmt.Errorf("postgres: profile of model %s: %w", modelHash, mapErr(err))
	}
	return p, nil
}

// PutCircuit implements store.CircuitStore.
func (db *DB) PutCircuit(ctx context.Context, c store.Circuit) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO circuits ("+backend.CircuitCols+") VALUES ($1, $2, $3, $4, $5)",
		c.ID, c.Circuit, c.ModelHash, nonNil(c.Body), c.PublishedAt)
	if err != nil {
		return fmt.Errorf("postgres: put circuit %s: %w", c.ID, mapErr(err))
	}
	return nil
}

// CircuitByID implements store.CircuitReader.
func (db *DB) CircuitByID(ctx context.Context, id string) (store.Circuit, error) {
	c, err := backend.ScanCircuit(db.pool.QueryRow(ctx, "SELECT "+backend.CircuitCols+" FROM circuits WHERE id = $1", id))
	if err != nil {
		return store.Circuit{}, fmt.Errorf("postgres: circuit %s: %w", id, mapErr(err))
	}
	return c, nil
}

// CircuitByModelHash implements store.CircuitReader.
func (db *DB) CircuitByModelHash(ctx context.Context, modelHash string) (store.Circuit, error) {
	c, err := backend.ScanCircuit(db.pool.QueryRow(ctx, "SELECT "+backend.CircuitCols+` FROM circuits
		WHERE model_hash = $1 AND model_hash <> '' ORDER BY published_at DESC, seq DESC LIMIT 1`, modelHash))
	if err != nil {
		return store.Circuit{}, fmt.Errorf("postgres: circuit of model %s: %w", modelHash, mapErr(err))
	}
	return c, nil
}
