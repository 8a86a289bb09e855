// Package migrate loads the versioned SQL migrations that the store
// backends embed. A migration is a file named NNNN_name.sql; versions start
// at 1 and have no gaps, so a database's schema version is simply the
// highest version recorded in its schema_migrations table.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/svc-gov/svc/pkg/service/store"
)

// Migration is one schema change.
type Migration struct {
	Version int    // from the file name: 0001_init.sql is version 1
	Name    string // the file name without the version and extension: "init"
	SQL     string // the statements, run in one transaction
}

// Load reads every *.sql file in dir of fsys, ordered by version. It fails
// on a badly named file, a duplicate version or a gap, so a mistake in the
// migrations directory stops the service at Open rather than leaving a
// half-migrated database.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		base := strings.TrimSuffix(e.Name(), ".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 || name == "" {
			return nil, fmt.Errorf("migrations: %s: want a name like 0001_init.sql", e.Name())
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migrations: version %d (%s) found where %d was expected: versions must run 1, 2, 3... without gaps or duplicates", m.Version, m.Name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("migrations: none in %s", dir)
	}
	return ms, nil
}

// Next returns the migration to apply to a database whose schema is at
// version cur (0 for none), nil once it is current, and an error when the
// database is newer than ms: this binary does not know its schema (a
// *store.SchemaTooNewError, matching store.ErrSchemaTooNew).
func Next(ms []Migration, cur int) (*Migration, error) {
	switch {
	case cur > len(ms):
		return nil, &store.SchemaTooNewError{Database: cur, Binary: len(ms)}
	case cur == len(ms):
		return nil, nil
	}
	return &ms[cur], nil
}

// VersionQuery reads a database's schema version (0 for none) from its
// schema_migrations table.
const VersionQuery = "SELECT coalesce(max(version), 0) FROM schema_migrations"

// Tx is a backend's migration transaction, holding the lock that keeps
// concurrent Opens from migrating at once.
type Tx interface {
	// Exec runs a statement.
	Exec(ctx context.Context, query string, args ...any) error
	// Int runs a query returning one integer.
	Int(ctx context.Context, query string) (int, error)
}

// Table is a backend's schema_migrations table in its dialect.
type Table struct {
	// Create creates the table if it does not exist.
	Create string
	// Record returns the statement inserting m's row, and its arguments.
	Record func(m Migration) (query string, args []any)
}

// Step applies in tx the migration that follows the database's version,
// recording it in the table: it returns that migration, or nil when the
// database is current (nothing was changed but the table's creation). The
// caller commits tx, and calls Step again until it returns nil.
func Step(ctx context.Context, tx Tx, ms []Migration, t Table) (*Migration, error) {
	if err := tx.Exec(ctx, t.Create); err != nil {
		return nil, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	cur, err := tx.Int(ctx, VersionQuery)
	if err != nil {
		return nil, fmt.Errorf("migrate: read version: %w", err)
	}
	m, err := Next(ms, cur)
	if err != nil || m == nil {
		if err != nil {
			err = fmt.Errorf("migrate: %w", err)
		}
		return nil, err
	}
	if err := tx.Exec(ctx, m.SQL); err != nil {
		return nil, fmt.Errorf("migrate: %04d_%s: %w", m.Version, m.Name, err)
	}
	q, args := t.Record(*m)
	if err := tx.Exec(ctx, q, args...); err != nil {
		return nil, fmt.Errorf("migrate: record %04d_%s: %w", m.Version, m.Name, err)
	}
	return m, nil
}
