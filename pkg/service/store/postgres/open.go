package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrationsFS embed.FS

// migrationLockKey is the pg_advisory_xact_lock key serialising migrations
// ("svcmig" in ASCII).
const migrationLockKey int64 = 0x7376636d6967

// DB is a store.Store (every role) on a PostgreSQL database. It is safe for concurrent
// use, and several DBs (in several processes) may share one database.
type DB struct {
	pool      *pgxpool.Pool
	closeOnce sync.Once
}

var _ store.Store = (*DB)(nil)

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value connection string; pgxpool's pool_* parameters are honoured),
// checks it is reachable and applies any missing migrations.
func Open(ctx context.Context, dsn string) (*DB, error) {
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	return open(ctx, dsn, ms)
}

// open is Open with the migrations to apply (tests open a database at an
// older schema version with fewer).
func open(ctx context.Context, dsn string, ms []migrate.Migration) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The error may quote the DSN, password included: do not wrap it.
		return nil, errors.New("postgres: open: cannot parse the DSN")
	}
	rp := cfg.ConnConfig.RuntimeParams
	if _, ok := rp["synchronous_commit"]; !ok {
		rp["synchronous_commit"] = "on"
	}
	if _, ok := rp["application_name"]; !ok {
		rp["application_name"] = "svc"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db := &DB{pool: pool}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open %s@%s:%d/%s: %w", cfg.ConnConfig.User, cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	if err := db.migrate(ctx, ms); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	return db, nil
}

// Pool returns the underlying connection pool (for administration and
// tests).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// SchemaVersion returns the highest migration version applied to the
// database (0 for none).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.pool.QueryRow(ctx, migrate.VersionQuery).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

func (db *DB) migrate(ctx context.Context, ms []migrate.Migration) error {
	for {
		done := false
		err := db.inTx(ctx, func(tx pgx.Tx) error {
			var err error
			done, err = migrateStep(ctx, tx, ms)
			return err
		})
		if err != nil || done {
			return err
		}
	}
}

// migrationTable is schema_migrations in PostgreSQL.
var migrationTable = migrate.Table{
	Create: `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`,
	Record: func(m migrate.Migration) (string, []any) {
		return "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", []any{m.Version, m.Name}
	},
}

// migrationTx is a pgx.Tx as migrate.Step sees it.
type migrationTx struct{ pgx.Tx }

func (tx migrationTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := tx.Tx.Exec(ctx, query, args...)
	return err
}

func (tx migrationTx) Int(ctx context.Context, query string) (n int, err error) {
	err = tx.QueryRow(ctx, query).Scan(&n)
	return n, err
}

// migrateStep applies the next missing migration, if any, in tx. The
// advisory lock makes concurrent Opens wait for each other; the version is
// read under it.
func migrateStep(ctx context.Context, tx pgx.Tx, ms []migrate.Migration) (done bool, err error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLockKey); err != nil {
		return false, fmt.Errorf("migrate: lock: %w", err)
	}
	m, err := migrate.Step(ctx, migrationTx{tx}, ms, migrationTable)
	return m == nil && err == nil, err
}

// inTx runs fn in a READ COMMITTED transaction, committing if it returns
// nil and rolling back otherwise.
func (db *DB) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Close closes the pool, waiting for connections in use to be returned.
// Calling it again does nothing.
func (db *DB) Close() error {
	db.closeOnce.Do(db.pool.Close)
	return nil
}

// Ping checks that the database is reachable and migrated.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.pool.QueryRow(ctx, "SELECT 1 FROM schema_migrations LIMIT 1").Scan(&one); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}
