package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// SQLSTATE codes the store maps to sentinels.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// nonNil keeps a nil slice from being stored as NULL in a NOT NULL column.
func nonNil(b []byte) []byte { return backend.NonNil(b) }

// textArray is the scan destination of a text[] column.
func textArray(dst *[]string) any { return dst }

func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == uniqueViolation
}

// mapErr turns "no rows" and constraint violations into the store's
// sentinels, keeping the server's message.
func mapErr(err error) error {
	v := backend.NoViolation
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case uniqueViolation:
			v = backend.Unique
		case foreignKeyViolation:
			v = backend.ForeignKey
		}
	}
	return backend.MapErr(err, errors.Is(err, pgx.ErrNoRows), v)
}

// list runs a query on the pool and scans every row with scan; no rows is
// an empty list.
func list[T any](ctx context.Context, db *DB, scan func(backend.Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return backend.Collect(rows, scan)
}
