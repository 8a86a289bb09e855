package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// PutManifest implements store.ManifestStore.
func (db *DB) PutManifest(ctx context.Context, m store.Manifest) (created bool, err error) {
	// fn sets inserted, not the result created: a caller whose context
	// ends returns at once, while fn may still run on the writer.
	var inserted bool
	err = db.write(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO manifests (org_id, id, name, body, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (org_id, id) DO NOTHING`,
			m.OrgID, m.ID, m.Name, nonNil(m.Body), fmtTime(m.CreatedAt))
		if err != nil {
			return mapErr(err)
		}
		n, err := res.RowsAffected()
		inserted = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: put manifest %s of org %s: %w", m.ID, m.OrgID, err)
	}
	return inserted, nil
}

// Manifest implements store.ManifestReader.
func (db *DB) Manifest(ctx context.Context, orgID, id string) (store.Manifest, error) {
	m, err := backend.ScanManifest(db.queryRow(ctx, "SELECT "+backend.ManifestCols+" FROM manifests WHERE org_id = ? AND id = ?", orgID, id))
	if err != nil {
		return store.Manifest{}, fmt.Errorf("sqlite: manifest %s of org %s: %w", id, orgID, mapErr(err))
	}
	return m, nil
}

// ManifestsOfOrg implements store.ManifestReader.
func (db *DB) ManifestsOfOrg(ctx context.Context, orgID string) ([]store.Manifest, error) {
	out, err := list(ctx, db, backend.ScanManifest, "SELECT "+backend.ManifestCols+" FROM manifests WHERE org_id = ? ORDER BY created_at, id LIMIT ?",
		orgID, store.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: manifests of org %s: %w", orgID, err)
	}
	return out, nil
}

// PutProfile implements store.ProfileStore. The model hashes are kept as
// a JSON array, and each in the profile_models index.
func (db *DB) PutProfile(ctx context.Context, p store.Profile) error {
	hashes := backend.NonNilList(p.ModelHashes)
	hashList, err := json.Marshal(hashes)
	if err == nil {
		err = db.write(ctx, func(ctx context.Context, tx *wtx) error {
			published := fmtTime(p.PublishedAt)
			if _, err := tx.ExecContext(ctx, "INSERT INTO profiles ("+backend.ProfileCols+") VALUES (?, ?, ?, ?)",
				p.ID, string(hashList), nonNil(p.Body), published); err != nil {
				return mapErr(err)
			}
			for _, h := range hashes {
				if _, err := tx.ExecContext(ctx, `INSERT INTO profile_models (model_hash, profile_id, published_at)
					VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, h, p.ID, published); err != nil {
					return mapErr(err)
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: put profile %s: %w", p.ID, err)
	}
	return nil
}

func scanProfile(row backend.Scanner) (store.Profile, error) {
	return backend.ScanProfile(row, backend.JSONList)
}

// Profiles implements store.ProfileReader.
func (db *DB) Profiles(ctx context.Context) ([]store.Profile, error) {
	out, err := list(ctx, db, scanProfile, "SELECT "+backend.ProfileCols+" FROM profiles ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("sqlite: profiles: %w", err)
	}
	return out, nil
}

// ProfileByID implements store.ProfileReader.
func (db *DB) ProfileByID(ctx context.Context, id string) (store.Profile, error) {
	p, err := scanProfile(db.queryRow(ctx, "SELECT "+backend.ProfileCols+" FROM profiles WHERE id = ?", id))
	if err != nil {
		return store.Profile{}, fmt.Errorf("sqlite: profile %s: %w", id, mapErr(err))
	}
	return p, nil
}

// ProfileByModelHash implements store.ProfileReader.
func (db *DB) ProfileByModelHash(ctx context.Context, modelHash string) (store.Profile, error) {
	p, err := scanProfile(db.queryRow(ctx, `SELECT p.id, p.model_hashes, p.body, p.published_at
		FROM profile_models m JOIN profiles p ON p.id = m.profile_id
		WHERE m.model_hash = ? ORDER BY m.published_at DESC, m.seq DESC LIMIT 1`, modelHash))
	if err != nil {
		return store.Profile{}, fmt.Errorf("sqlite: profile of model %s: %w", modelHash, mapErr(err))
	}
	return p, nil
}

// PutCircuit implements store.CircuitStore.
func (db *DB) PutCircuit(ctx context.Context, c store.Circuit) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO circuits ("+backend.CircuitCols+") VALUES (?, ?, ?, ?, ?)",
			c.ID, c.Circuit, c.ModelHash, nonNil(c.Body), fmtTime(c.PublishedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: put circuit %s: %w", c.ID, err)
	}
	return nil
}

// CircuitByID implements store.CircuitReader.
func (db *DB) CircuitByID(ctx context.Context, id string) (store.Circuit, error) {
	c, err := backend.ScanCircuit(db.queryRow(ctx, "SELECT "+backend.CircuitCols+" FROM circuits WHERE id = ?", id))
	if err != nil {
		return store.Circuit{}, fmt.Errorf("sqlite: circuit %s: %w", id, mapErr(err))
	}
	return c, nil
}

// CircuitByModelHash implements store.CircuitReader.
func (db *DB) CircuitByModelHash(ctx context.Context, modelHash string) (store.Circuit, error) {
	c, err := backend.ScanCircuit(db.queryRow(ctx, "SELECT "+backend.CircuitCols+` FROM circuits
		WHERE model_hash = ? AND model_hash != '' ORDER BY published_at DESC, seq DESC LIMIT 1`, modelHash))
	if err != nil {
		return store.Circuit{}, fmt.Errorf("sqlite: circuit of model %s: %w", modelHash, mapErr(err))
	}
	return c, nil
}
