// Package postgres implements store.Store on PostgreSQL (pgx v5, pgxpool),
// for several svc servers sharing one database.
//
// # Concurrency
//
// Every multi-statement write is one READ COMMITTED transaction (set
// explicitly, whatever the server's default). AppendRecord, SealRecords,
// StoreVPEC and SealRun first lock the run's row with SELECT ... FOR
// UPDATE, so across all processes the appends to one run (which update its
// metadata columns) and its seal are serialised: an append either commits
// before the seal, and is in the sealed record set, or sees the run sealed,
// and of two concurrent seals the second sees the first's.
// CreateSession and CloseSession take the run's row FOR SHARE: they do not
// wait for each other, but exclude the seal in the same way. Of concurrent
// closes of one session, the first UPDATE wins and the others, having
// waited for it, compare their commitment hash with the stored one.
// Unique constraints back this up; a unique violation (SQLSTATE 23505) maps
// to store.ErrExists, or to store.ErrConflict / store.ErrSealed where the
// interface says so, and a foreign-key violation (23503: an unknown
// organisation) to store.ErrNotFound.
//
// # Durability
//
// Sessions run with synchronous_commit=on (unless the DSN sets it): a
// commit returns after its WAL is flushed, so every write is durable when
// its method returns.
//
// # Representation
//
// Timestamps are timestamptz, which keeps microseconds: nanoseconds are
// truncated, and times are returned in UTC. Bodies are bytea, byte-exact.
// Tables live in the first schema of the connection's search_path (set it
// in the DSN, e.g. ?search_path=svc, to share a database).
//
// # Migrations
//
// The schema is versioned by the embedded migrations/NNNN_name.sql files
// and the schema_migrations table. Open applies the missing ones in order,
// one transaction each, holding a transaction-scoped advisory lock, so
// servers starting together apply each migration exactly once. Open
// refuses a database whose schema is newer than this binary knows.
package postgres

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrationsFS embed.FS

// migrationLockKey is the pg_advisory_xact_lock key serialising migrations
// ("svcmig" in ASCII).
const migrationLockKey int64 = 0x7376636d6967

// SQLSTATE codes the store maps to sentinels.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// DB is a store.Store on a PostgreSQL database. It is safe for concurrent
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
	if err := db.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
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

// migrateStep applies the next missing migration, if any, in tx. The
// advisory lock makes concurrent Opens wait for each other; the version is
// read under it.
func migrateStep(ctx context.Context, tx pgx.Tx, ms []migrate.Migration) (done bool, err error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLockKey); err != nil {
		return false, fmt.Errorf("migrate: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return false, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var cur int
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&cur); err != nil {
		return false, fmt.Errorf("migrate: read version: %w", err)
	}
	switch {
	case cur > len(ms):
		return false, fmt.Errorf("migrate: the database schema is at version %d but this binary knows only up to %d: upgrade svc", cur, len(ms))
	case cur == len(ms):
		return true, nil
	}
	m := ms[cur]
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("migrate: %04d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
		return false, fmt.Errorf("migrate: record %04d_%s: %w", m.Version, m.Name, err)
	}
	return false, nil
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

// CreateOrg implements store.Store.
func (db *DB) CreateOrg(ctx context.Context, o store.Org) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO orgs (id, name, tier, created_at) VALUES ($1, $2, $3, $4)",
		o.ID, o.Name, o.Tier, o.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create org %s (%s): %w", o.ID, o.Name, mapErr(err))
	}
	return nil
}

const orgCols = "id, name, tier, created_at"

func scanOrg(row pgx.Row) (store.Org, error) {
	var o store.Org
	err := row.Scan(&o.ID, &o.Name, &o.Tier, &o.CreatedAt)
	o.CreatedAt = o.CreatedAt.UTC()
	return o, err
}

// OrgByName implements store.Store.
func (db *DB) OrgByName(ctx context.Context, name string) (store.Org, error) {
	o, err := scanOrg(db.pool.QueryRow(ctx, "SELECT "+orgCols+" FROM orgs WHERE name = $1", name))
	if err != nil {
		return store.Org{}, fmt.Errorf("postgres: org named %q: %w", name, mapErr(err))
	}
	return o, nil
}

// OrgByID implements store.Store.
func (db *DB) OrgByID(ctx context.Context, id string) (store.Org, error) {
	o, err := scanOrg(db.pool.QueryRow(ctx, "SELECT "+orgCols+" FROM orgs WHERE id = $1", id))
	if err != nil {
		return store.Org{}, fmt.Errorf("postgres: org %s: %w", id, mapErr(err))
	}
	return o, nil
}

// CreateAPIKey implements store.Store. A key of an unknown organisation
// gives store.ErrNotFound.
func (db *DB) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO api_keys (id, org_id, environment, hash, created_at) VALUES ($1, $2, $3, $4, $5)",
		k.ID, k.OrgID, k.Environment, nonNil(k.Hash), k.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create api key %s of org %s: %w", k.ID, k.OrgID, mapErr(err))
	}
	return nil
}

// APIKeyByHash implements store.Store.
func (db *DB) APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	k, err := scanAPIKey(db.pool.QueryRow(ctx, "SELECT "+apiKeyCols+" FROM api_keys WHERE hash = $1", nonNil(hash)))
	if err == nil && subtle.ConstantTimeCompare(k.Hash, hash) != 1 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return store.APIKey{}, fmt.Errorf("postgres: api key by hash: %w", mapErr(err))
	}
	if !k.RevokedAt.IsZero() {
		return k, fmt.Errorf("postgres: api key %s: %w at %s", k.ID, store.ErrRevoked, k.RevokedAt.Format(time.RFC3339Nano))
	}
	return k, nil
}

// CreateRun implements store.Store. The run is stored open whatever r's
// Sealed, ClosedAt and VPECID say; a run of an unknown organisation gives
// store.ErrNotFound.
func (db *DB) CreateRun(ctx context.Context, r store.Run) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO runs (id, org_id, workflow_id, surface_id, policy_pack_id,
		policy_snapshot_hash, process_context_hash, environment, api_key_id, sealed, opened_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, false, $10)`,
		r.ID, r.OrgID, r.WorkflowID, r.SurfaceID, r.PolicyPackID, r.PolicySnapshotHash,
		r.ProcessContextHash, r.Environment, r.APIKeyID, r.OpenedAt)
	if err != nil {
		return fmt.Errorf("postgres: create run %s of org %s: %w", r.ID, r.OrgID, mapErr(err))
	}
	return nil
}

const runCols = `id, org_id, workflow_id, surface_id, policy_pack_id, policy_snapshot_hash, process_context_hash,
	environment, api_key_id, sealed, opened_at, closed_at, vpec_id, close_key,
	record_count, last_sequence, last_chain_hash, record_bytes`

func scanRun(row pgx.Row) (store.Run, error) {
	var r store.Run
	var closed *time.Time
	var vpecID *string
	err := row.Scan(&r.ID, &r.OrgID, &r.WorkflowID, &r.SurfaceID, &r.PolicyPackID, &r.PolicySnapshotHash,
		&r.ProcessContextHash, &r.Environment, &r.APIKeyID, &r.Sealed, &r.OpenedAt, &closed, &vpecID, &r.CloseKey,
		&r.RecordCount, &r.LastSequence, &r.LastChainHash, &r.RecordBytes)
	if err != nil {
		return store.Run{}, err
	}
	r.OpenedAt = r.OpenedAt.UTC()
	if closed != nil {
		r.ClosedAt = closed.UTC()
	}
	if vpecID != nil {
		r.VPECID = *vpecID
	}
	return r, nil
}

// Run implements store.Store.
func (db *DB) Run(ctx context.Context, orgID, runID string) (store.Run, error) {
	r, err := scanRun(db.pool.QueryRow(ctx, "SELECT "+runCols+" FROM runs WHERE id = $1 AND org_id = $2", runID, orgID))
	if err != nil {
		return store.Run{}, fmt.Errorf("postgres: run %s of org %s: %w", runID, orgID, mapErr(err))
	}
	return r, nil
}

// lockOpenRun locks the run's row for the rest of the transaction and
// checks that it belongs to the organisation and is open. A concurrent
// transaction holding the lock (an append or a seal) is waited for, and its
// outcome seen.
func lockOpenRun(ctx context.Context, tx pgx.Tx, orgID, runID string) error {
	_, _, err := lockOpenRunSize(ctx, tx, orgID, runID)
	return err
}

// lockOpenRunSize is lockOpenRun returning the run's record count and bytes.
func lockOpenRunSize(ctx context.Context, tx pgx.Tx, orgID, runID string) (count, bytes int64, err error) {
	var sealed bool
	if err := tx.QueryRow(ctx, "SELECT sealed, record_count, record_bytes FROM runs WHERE id = $1 AND org_id = $2 FOR UPDATE", runID, orgID).
		Scan(&sealed, &count, &bytes); err != nil {
		return 0, 0, mapErr(err)
	}
	if sealed {
		return 0, 0, store.ErrSealed
	}
	return count, bytes, nil
}

// AppendRecord implements store.Store. A record is a duplicate when the
// stored record with its id has the same sequence, chain hash and body; any
// other difference is store.ErrConflict. The run is checked first, its row
// locked FOR UPDATE: a sealed run gives store.ErrSealed, except for a
// duplicate of a record it holds (a retry whose response was lost), which
// is acknowledged. The lock serialises the append with the seal (and the
// run's metadata update with other appends) across processes.
func (db *DB) AppendRecord(ctx context.Context, orgID string, rec store.Record, lim store.Limits) (duplicate bool, err error) {
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		count, bytes, err := lockOpenRunSize(ctx, tx, orgID, rec.RunID)
		if err != nil {
			if errors.Is(err, store.ErrSealed) {
				if dup, derr := storedAlready(ctx, tx, rec); derr == nil && dup {
					duplicate = true
					return nil
				}
			}
			return err
		}
		body := nonNil(rec.Body)
		if lerr := lim.Check(count, bytes, int64(len(body))); lerr != nil {
			dup, derr := storedAlready(ctx, tx, rec)
			if derr != nil {
				return derr
			}
			if dup {
				duplicate = true
				return nil
			}
			return lerr
		}
		tag, err := tx.Exec(ctx, `INSERT INTO records (run_id, sequence, record_id, chain_hash, body)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
			rec.RunID, rec.Sequence, rec.RecordID, rec.ChainHash, body)
		if err != nil {
			if isUnique(err) {
				return fmt.Errorf("%w (%v)", store.ErrConflict, err)
			}
			return mapErr(err)
		}
		if tag.RowsAffected() == 1 {
			// SET expressions see the row as it was before the UPDATE.
			_, err := tx.Exec(ctx, `UPDATE runs SET record_count = record_count + 1, record_bytes = record_bytes + $2,
				last_sequence = CASE WHEN record_count = 0 OR $3 > last_sequence THEN $3 ELSE last_sequence END,
				last_chain_hash = CASE WHEN record_count = 0 OR $3 > last_sequence THEN $4 ELSE last_chain_hash END
				WHERE id = $1`, rec.RunID, int64(len(body)), rec.Sequence, rec.ChainHash)
			if err != nil {
				return fmt.Errorf("update run metadata: %w", err)
			}
			return nil
		}
		// The record id or the sequence is taken. Nothing was written.
		dup, err := storedAlready(ctx, tx, rec)
		if err == nil && !dup {
			err = fmt.Errorf("sequence %d holds another record: %w", rec.Sequence, store.ErrConflict)
		}
		duplicate = dup
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: append record %s (sequence %d) to run %s of org %s: %w",
			rec.RecordID, rec.Sequence, rec.RunID, orgID, err)
	}
	return duplicate, nil
}

// storedAlready reports whether the run holds rec exactly (same id,
// sequence, chain hash and body): true; nothing with its id: false; a
// different record with its id: store.ErrConflict.
func storedAlready(ctx context.Context, tx pgx.Tx, rec store.Record) (bool, error) {
	var seq int64
	var chain string
	var body []byte
	err := tx.QueryRow(ctx, "SELECT sequence, chain_hash, body FROM records WHERE run_id = $1 AND record_id = $2",
		rec.RunID, rec.RecordID).Scan(&seq, &chain, &body)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	}
	if err := rec.SameAs(seq, chain, body); err != nil {
		return false, err
	}
	return true, nil
}

const recordCols = "run_id, sequence, record_id, chain_hash, body"

func scanRecord(row pgx.Row) (store.Record, error) {
	var r store.Record
	err := row.Scan(&r.RunID, &r.Sequence, &r.RecordID, &r.ChainHash, &r.Body)
	return r, err
}

// RecordBySequence implements store.Store.
func (db *DB) RecordBySequence(ctx context.Context, runID string, seq int64) (store.Record, error) {
	r, err := scanRecord(db.pool.QueryRow(ctx, "SELECT "+recordCols+" FROM records WHERE run_id = $1 AND sequence = $2", runID, seq))
	if err != nil {
		return store.Record{}, fmt.Errorf("postgres: record %d of run %s: %w", seq, runID, mapErr(err))
	}
	return r, nil
}

// Records implements store.Store. An unknown run has no records: the
// result is empty, not an error.
func (db *DB) Records(ctx context.Context, runID string) ([]store.Record, error) {
	out := []store.Record{}
	err := db.EachRecord(ctx, runID, func(r store.Record) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// recordPage is how many records EachRecord reads per query.
const recordPage = 256

// EachRecord implements store.Store. It reads in pages of recordPage
// records (keyset pagination on the primary key), so that neither the
// whole run nor a long-lived cursor is held while fn works.
func (db *DB) EachRecord(ctx context.Context, runID string, fn func(store.Record) error) error {
	var after int64
	first := true
	for {
		q, args := "SELECT "+recordCols+" FROM records WHERE run_id = $1 ORDER BY sequence LIMIT $2", []any{runID, recordPage}
		if !first {
			q, args = "SELECT "+recordCols+" FROM records WHERE run_id = $1 AND sequence > $3 ORDER BY sequence LIMIT $2", []any{runID, recordPage, after}
		}
		rows, err := db.pool.Query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("postgres: records of run %s: %w", runID, err)
		}
		page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Record, error) { return scanRecord(row) })
		if err != nil {
			return fmt.Errorf("postgres: records of run %s: %w", runID, err)
		}
		if len(page) > 0 {
			after = page[len(page)-1].Sequence
		}
		for i := range page {
			if err := fn(page[i]); err != nil {
				return err
			}
			page[i] = store.Record{} // fn may keep what it needs, not the page
		}
		if len(page) < recordPage {
			return nil
		}
		first = false
	}
}

// SealRun implements store.Store. v.RunID and v.OrgID, when set, must name
// runID and orgID; the VPEC is stored with runID and orgID. A VPEC id that
// is already taken gives store.ErrExists and leaves the run open.
func (db *DB) SealRun(ctx context.Context, orgID, runID string, v store.VPEC) error {
	err := v.Belongs(orgID, runID)
	if err == nil {
		err = db.inTx(ctx, func(tx pgx.Tx) error {
			if err := lockOpenRun(ctx, tx, orgID, runID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "UPDATE runs SET sealed = true, closed_at = $2, close_key = '' WHERE id = $1", runID, v.IssuedAt); err != nil {
				return err
			}
			return storeVPEC(ctx, tx, orgID, runID, v)
		})
	}
	if err != nil {
		return fmt.Errorf("postgres: seal run %s of org %s with vpec %s: %w", runID, orgID, v.ID, err)
	}
	return nil
}

func storeVPEC(ctx context.Context, tx pgx.Tx, orgID, runID string, v store.VPEC) error {
	if _, err := tx.Exec(ctx, "INSERT INTO vpecs (id, run_id, org_id, issued_at, body) VALUES ($1, $2, $3, $4, $5)",
		v.ID, runID, orgID, v.IssuedAt, nonNil(v.Body)); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == uniqueViolation && pe.ConstraintName == "vpecs_run_id_key" {
			return fmt.Errorf("%w (%v)", store.ErrSealed, err)
		}
		return mapErr(err)
	}
	_, err := tx.Exec(ctx, "UPDATE runs SET vpec_id = $2 WHERE id = $1", runID, v.ID)
	return err
}

// SealRecords implements store.Store. It locks the run's row FOR UPDATE:
// appends holding the lock commit first, appends waiting for it then see
// the run sealed.
func (db *DB) SealRecords(ctx context.Context, orgID, runID, closeKey string, closedAt time.Time) (store.Run, bool, error) {
	var run store.Run
	var sealed bool
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		sealed = false
		err := lockOpenRun(ctx, tx, orgID, runID)
		switch {
		case err == nil:
			if _, err := tx.Exec(ctx, "UPDATE runs SET sealed = true, closed_at = $2, close_key = $3 WHERE id = $1", runID, closedAt, closeKey); err != nil {
				return err
			}
			sealed = true
		case !errors.Is(err, store.ErrSealed):
			return err
		}
		run, err = scanRun(tx.QueryRow(ctx, "SELECT "+runCols+" FROM runs WHERE id = $1", runID))
		return mapErr(err)
	})
	if err != nil {
		return store.Run{}, false, fmt.Errorf("postgres: seal the records of run %s of org %s: %w", runID, orgID, err)
	}
	return run, sealed, nil
}

// UnsealRecords implements store.Store.
func (db *DB) UnsealRecords(ctx context.Context, orgID, runID, closeKey string) error {
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var sealed bool
		var vpecID *string
		var key string
		if err := tx.QueryRow(ctx, "SELECT sealed, vpec_id, close_key FROM runs WHERE id = $1 AND org_id = $2 FOR UPDATE", runID, orgID).Scan(&sealed, &vpecID, &key); err != nil {
			return mapErr(err)
		}
		switch {
		case !sealed:
			return store.ErrNotSealed
		case vpecID != nil || key != closeKey:
			return store.ErrSealed
		}
		_, err := tx.Exec(ctx, "UPDATE runs SET sealed = false, closed_at = NULL, close_key = '' WHERE id = $1", runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: unseal the records of run %s of org %s: %w", runID, orgID, err)
	}
	return nil
}

// StoreVPEC implements store.Store.
func (db *DB) StoreVPEC(ctx context.Context, orgID, runID string, v store.VPEC) error {
	err := v.Belongs(orgID, runID)
	if err == nil {
		err = db.inTx(ctx, func(tx pgx.Tx) error {
			var sealed bool
			var vpecID *string
			if err := tx.QueryRow(ctx, "SELECT sealed, vpec_id FROM runs WHERE id = $1 AND org_id = $2 FOR UPDATE", runID, orgID).Scan(&sealed, &vpecID); err != nil {
				return mapErr(err)
			}
			switch {
			case !sealed:
				return store.ErrNotSealed
			case vpecID != nil:
				return fmt.Errorf("%w: the run already has vpec %s", store.ErrSealed, *vpecID)
			}
			return storeVPEC(ctx, tx, orgID, runID, v)
		})
	}
	if err != nil {
		return fmt.Errorf("postgres: store vpec %s of run %s of org %s: %w", v.ID, runID, orgID, err)
	}
	return nil
}

// VPEC implements store.Store.
func (db *DB) VPEC(ctx context.Context, orgID, vpecID string) (store.VPEC, error) {
	var v store.VPEC
	err := db.pool.QueryRow(ctx, "SELECT id, run_id, org_id, issued_at, body FROM vpecs WHERE id = $1 AND org_id = $2", vpecID, orgID).
		Scan(&v.ID, &v.RunID, &v.OrgID, &v.IssuedAt, &v.Body)
	if err != nil {
		return store.VPEC{}, fmt.Errorf("postgres: vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	v.IssuedAt = v.IssuedAt.UTC()
	return v, nil
}

// VPECInfo implements store.Store. octet_length of a TOASTed bytea reads
// its TOAST pointer (which holds the raw size), never the body.
func (db *DB) VPECInfo(ctx context.Context, orgID, vpecID string) (store.VPECInfo, error) {
	var v store.VPECInfo
	err := db.pool.QueryRow(ctx, `SELECT v.id, v.run_id, v.org_id, v.issued_at, octet_length(v.body), r.environment
		FROM vpecs v JOIN runs r ON r.id = v.run_id WHERE v.id = $1 AND v.org_id = $2`, vpecID, orgID).
		Scan(&v.ID, &v.RunID, &v.OrgID, &v.IssuedAt, &v.Size, &v.Environment)
	if err != nil {
		return store.VPECInfo{}, fmt.Errorf("postgres: vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	v.IssuedAt = v.IssuedAt.UTC()
	return v, nil
}

// PutManifest implements store.Store. A manifest of an unknown
// organisation gives store.ErrNotFound.
func (db *DB) PutManifest(ctx context.Context, m store.Manifest) (created bool, err error) {
	tag, err := db.pool.Exec(ctx, `INSERT INTO manifests (org_id, id, name, body, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org_id, id) DO NOTHING`,
		m.OrgID, m.ID, m.Name, nonNil(m.Body), m.CreatedAt)
	if err != nil {
		return false, fmt.Errorf("postgres: put manifest %s of org %s: %w", m.ID, m.OrgID, mapErr(err))
	}
	return tag.RowsAffected() == 1, nil
}

// Manifest implements store.Store.
func (db *DB) Manifest(ctx context.Context, orgID, id string) (store.Manifest, error) {
	var m store.Manifest
	err := db.pool.QueryRow(ctx, "SELECT org_id, id, name, body, created_at FROM manifests WHERE org_id = $1 AND id = $2", orgID, id).
		Scan(&m.OrgID, &m.ID, &m.Name, &m.Body, &m.CreatedAt)
	if err != nil {
		return store.Manifest{}, fmt.Errorf("postgres: manifest %s of org %s: %w", id, orgID, mapErr(err))
	}
	m.CreatedAt = m.CreatedAt.UTC()
	return m, nil
}

// PutProfile implements store.Store. ProfileByModelHash answers with the
// covering profile of latest PublishedAt (the last published on a tie), so
// publishing a profile with an older PublishedAt does not take a model
// over from a newer one.
func (db *DB) PutProfile(ctx context.Context, p store.Profile) error {
	hashes := p.ModelHashes
	if hashes == nil {
		hashes = []string{}
	}
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO profiles (id, model_hashes, body, published_at) VALUES ($1, $2, $3, $4)",
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

const profileCols = "id, model_hashes, body, published_at"

func scanProfile(row pgx.Row) (store.Profile, error) {
	var p store.Profile
	err := row.Scan(&p.ID, &p.ModelHashes, &p.Body, &p.PublishedAt)
	if p.ModelHashes == nil {
		p.ModelHashes = []string{}
	}
	p.PublishedAt = p.PublishedAt.UTC()
	return p, err
}

// Profiles implements store.Store.
func (db *DB) Profiles(ctx context.Context) ([]store.Profile, error) {
	rows, err := db.pool.Query(ctx, "SELECT "+profileCols+" FROM profiles ORDER BY id COLLATE \"C\"")
	if err != nil {
		return nil, fmt.Errorf("postgres: profiles: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Profile, error) { return scanProfile(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: profiles: %w", err)
	}
	if out == nil {
		out = []store.Profile{}
	}
	return out, nil
}

// ProfileByID implements store.Store.
func (db *DB) ProfileByID(ctx context.Context, id string) (store.Profile, error) {
	p, err := scanProfile(db.pool.QueryRow(ctx, "SELECT "+profileCols+" FROM profiles WHERE id = $1", id))
	if err != nil {
		return store.Profile{}, fmt.Errorf("postgres: profile %s: %w", id, mapErr(err))
	}
	return p, nil
}

// ProfileByModelHash implements store.Store.
func (db *DB) ProfileByModelHash(ctx context.Context, modelHash string) (store.Profile, error) {
	p, err := scanProfile(db.pool.QueryRow(ctx, `SELECT p.id, p.model_hashes, p.body, p.published_at
		FROM profile_models m JOIN profiles p ON p.id = m.profile_id
		WHERE m.model_hash = $1 ORDER BY m.published_at DESC, m.seq DESC LIMIT 1`, modelHash))
	if err != nil {
		return store.Profile{}, fmt.Errorf("postgres: profile of model %s: %w", modelHash, mapErr(err))
	}
	return p, nil
}

// nonNil keeps a nil slice from being stored as NULL in a NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == uniqueViolation
}

// mapErr turns "no rows" and constraint violations into the store's
// sentinels, keeping the server's message.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case uniqueViolation:
			return fmt.Errorf("%w (%v)", store.ErrExists, err)
		case foreignKeyViolation:
			return fmt.Errorf("%w: the organisation or run it refers to does not exist (%v)", store.ErrNotFound, err)
		}
	}
	return err
}
