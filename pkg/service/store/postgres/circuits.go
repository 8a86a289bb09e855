package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/svc-gov/svc/pkg/service/store"
)

var _ store.CircuitStore = (*DB)(nil)

// PutCircuit implements store.CircuitStore.
func (db *DB) PutCircuit(ctx context.Context, c store.Circuit) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO circuits (id, circuit, model_hash, body, published_at) VALUES ($1, $2, $3, $4, $5)",
		c.ID, c.Circuit, c.ModelHash, nonNil(c.Body), c.PublishedAt)
	if err != nil {
		return fmt.Errorf("postgres: put circuit %s: %w", c.ID, mapErr(err))
	}
	return nil
}

const circuitCols = "id, circuit, model_hash, body, published_at"

func scanCircuit(row pgx.Row) (store.Circuit, error) {
	var c store.Circuit
	err := row.Scan(&c.ID, &c.Circuit, &c.ModelHash, &c.Body, &c.PublishedAt)
	c.PublishedAt = c.PublishedAt.UTC()
	return c, err
}

// CircuitByID implements store.CircuitStore.
func (db *DB) CircuitByID(ctx context.Context, id string) (store.Circuit, error) {
	c, err := scanCircuit(db.pool.QueryRow(ctx, "SELECT "+circuitCols+" FROM circuits WHERE id = $1", id))
	if err != nil {
		return store.Circuit{}, fmt.Errorf("postgres: circuit %s: %w", id, mapErr(err))
	}
	return c, nil
}

// CircuitByModelHash implements store.CircuitStore.
func (db *DB) CircuitByModelHash(ctx context.Context, modelHash string) (store.Circuit, error) {
	c, err := scanCircuit(db.pool.QueryRow(ctx, "SELECT "+circuitCols+` FROM circuits
		WHERE model_hash = $1 AND model_hash <> '' ORDER BY published_at DESC, seq DESC LIMIT 1`, modelHash))
	if err != nil {
		return store.Circuit{}, fmt.Errorf("postgres: circuit of model %s: %w", modelHash, mapErr(err))
	}
	return c, nil
}
