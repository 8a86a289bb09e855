package sqlite

import (
	"context"
	"fmt"

	"github.com/svc-gov/svc/pkg/service/store"
)

var _ store.CircuitStore = (*DB)(nil)

// PutCircuit implements store.CircuitStore.
func (db *DB) PutCircuit(ctx context.Context, c store.Circuit) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO circuits (id, circuit, model_hash, body, published_at) VALUES (?, ?, ?, ?, ?)",
			c.ID, c.Circuit, c.ModelHash, nonNil(c.Body), fmtTime(c.PublishedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: put circuit %s: %w", c.ID, err)
	}
	return nil
}

const circuitCols = "id, circuit, model_hash, body, published_at"

func scanCircuit(row interface{ Scan(...any) error }) (store.Circuit, error) {
	var c store.Circuit
	var published string
	if err := row.Scan(&c.ID, &c.Circuit, &c.ModelHash, &c.Body, &published); err != nil {
		return store.Circuit{}, err
	}
	var err error
	c.PublishedAt, err = parseTime(published)
	return c, err
}

// CircuitByID implements store.CircuitStore.
func (db *DB) CircuitByID(ctx context.Context, id string) (store.Circuit, error) {
	c, err := scanCircuit(db.queryRow(ctx, "SELECT "+circuitCols+" FROM circuits WHERE id = ?", id))
	if err != nil {
		return store.Circuit{}, fmt.Errorf("sqlite: circuit %s: %w", id, mapErr(err))
	}
	return c, nil
}

// CircuitByModelHash implements store.CircuitStore.
func (db *DB) CircuitByModelHash(ctx context.Context, modelHash string) (store.Circuit, error) {
	c, err := scanCircuit(db.queryRow(ctx, "SELECT "+circuitCols+` FROM circuits
		WHERE model_hash = ? AND model_hash != '' ORDER BY published_at DESC, seq DESC LIMIT 1`, modelHash))
	if err != nil {
		return store.Circuit{}, fmt.Errorf("sqlite: circuit of model %s: %w", modelHash, mapErr(err))
	}
	return c, nil
}
