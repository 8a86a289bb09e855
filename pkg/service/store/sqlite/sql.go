package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// fmtTime is the stored form of t: UTC text in timeLayout.
func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// nonNil keeps a nil slice from being stored as NULL in a NOT NULL column.
func nonNil(b []byte) []byte { return backend.NonNil(b) }

// mapErr turns "no rows" and constraint violations into the store's
// sentinels, keeping the driver's message.
func mapErr(err error) error {
	v := backend.NoViolation
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			v = backend.Unique
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			v = backend.ForeignKey
		}
	}
	return backend.MapErr(err, errors.Is(err, sql.ErrNoRows), v)
}

// list runs a read query on the reader pool and scans every row with
// scan; no rows is an empty list.
func list[T any](ctx context.Context, db *DB, scan func(backend.Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return backend.Collect(rows, scan)
}
