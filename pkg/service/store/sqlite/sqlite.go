// Package sqlite implements store.Store on an embedded SQLite database
// (modernc.org/sqlite: pure Go, no cgo).
//
// # Connections
//
// A DB holds two connection pools on the same file:
//
//   - a writer pool of exactly one connection, used (once Open has
//     migrated the database) by one writer goroutine only: every write
//     method queues its write to it, in Go, honouring its context, instead
//     of contending for SQLite's lock. Its transactions start with BEGIN
//     IMMEDIATE, which takes the write lock before the first read: a
//     transaction never has to upgrade a read lock, the one case where
//     SQLite returns SQLITE_BUSY at once without waiting.
//   - a reader pool of several query_only connections. In WAL mode readers
//     never block the writer and the writer never blocks readers.
//
// # Group commit
//
// The writer goroutine commits writes in batches: it takes every write
// waiting (up to MaxBatch), runs them in one transaction, each in a
// SAVEPOINT of its own so that a failing write (store.ErrSealed,
// store.ErrConflict, a constraint...) rolls back only itself, commits once
// (one WAL fsync for the whole batch) and only then answers every caller.
// No caller is told its write succeeded before the commit that holds it is
// durable; if the commit fails, every write of the batch fails with it.
// Writes in one batch are applied in the order taken, each seeing the
// previous ones: the outcome is that of running them one after another, as
// before. A lone write is committed at once: batches form only while the
// previous commit is under way, so nothing waits for a timer.
//
// A caller whose context ends while its write is still queued gets
// ctx.Err() and its write is dropped. If the context ends after the write
// ran but before its batch committed, the caller gets ctx.Err() at once
// and the write still commits: as with a response lost on the network, the
// caller cannot tell, and a retry of AppendRecord reports duplicate=true.
//
// Several processes may open the same file (svc admin beside svc serve):
// between processes the write lock is SQLite's own, and busy_timeout (5 s)
// makes a writer wait for another process's transaction to commit rather
// than fail.
//
// # Durability
//
// The database is in WAL mode with synchronous=FULL: the WAL is fsynced on
// every commit, so every write is durable when its method returns, as the
// store.Store contract requires. (With synchronous=NORMAL, the usual WAL
// setting, the last commits before a power loss can be rolled back:
// acknowledged records and issued VPECs would vanish.) foreign_keys is on.
//
// # Representation
//
// Timestamps are stored as UTC text in the fixed-width layout
// 2006-01-02T15:04:05.000000000Z: nanoseconds are kept, and text order is
// time order. Bodies are BLOBs holding the exact bytes given.
//
// # Migrations
//
// The schema is versioned by the embedded migrations/NNNN_name.sql files and
// the schema_migrations table. Open applies the missing ones in order, one
// transaction each, under the write lock, so two processes opening a new
// file at once apply each migration exactly once. Open refuses a database
// whose schema is newer than this binary knows.
package sqlite

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrationsFS embed.FS

// BusyTimeout is how long a write waits for another process's write
// transaction before failing with SQLITE_BUSY.
const BusyTimeout = 5 * time.Second

// timeLayout is the stored form of every timestamp (always UTC).
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// DB is a store.Store on one SQLite file. It is safe for concurrent use.
type DB struct {
	path      string
	w         *sql.DB     // exactly one connection; BEGIN IMMEDIATE transactions
	r         *sql.DB     // query_only connections
	stmts     writerStmts // prepared on w
	reads     readStmts   // prepared on r
	ops       chan *writeOp
	stop      chan struct{} // closed by Close: the writer stops
	stopped   chan struct{} // closed by the writer when it has stopped
	closeOnce sync.Once
	closeErr  error

	// commits counts the writer's committed transactions, committed the
	// writes they held (for tests and benchmarks: their ratio is the mean
	// batch size).
	commits, committed atomic.Int64

	// minFree is the free space Ping requires (see SetMinFreeBytes).
	minFree atomic.Uint64
}

var _ store.Store = (*DB)(nil)

// Open opens (creating it if needed) the SQLite database at path, sets WAL
// mode, synchronous=FULL, foreign keys and the busy timeout, and applies any
// missing migrations. path is a file name; ":memory:" is refused (the two
// pools would see two different databases).
func Open(ctx context.Context, path string) (*DB, error) {
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return open(ctx, path, ms)
}

// open is Open with the migrations to apply (tests open a database at an
// older schema version with fewer).
func open(ctx context.Context, path string, ms []migrate.Migration) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: open %q: want the path of a database file", path)
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite: open %q: the path may not contain '?'", path)
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	common := url.Values{}
	common.Set("_busy_timeout", fmt.Sprint(BusyTimeout.Milliseconds()))
	common.Set("_foreign_keys", "1")

	wq := url.Values{}
	for k, v := range common {
		wq[k] = v
	}
	wq.Set("_synchronous", "FULL")
	wq.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	db := &DB{path: path, w: w}
	db.minFree.Store(DefaultMinFreeBytes)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: connect: %w", path, err)
	}
	mode, err := setWAL(ctx, w)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: set WAL mode: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: journal_mode is %q, want wal (is the file on a filesystem without shared memory?)", path, mode)
	}
	if err := db.migrate(ctx, ms); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}

	rq := url.Values{}
	for k, v := range common {
		rq[k] = v
	}
	rq.Set("_query_only", "1")
	r, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.r = r
	db.reads.pool = r
	if err := db.prepare(ctx); err != nil {
		db.stmts.close()
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.ops = make(chan *writeOp)
	db.stop = make(chan struct{})
	db.stopped = make(chan struct{})
	go db.writer()
	return db, nil
}

// setWAL puts the database in WAL mode (a persistent property of the
// file: connections opened later find it so) and returns the mode now in
// force. Switching a new file to WAL needs an exclusive lock, and SQLite
// reports SQLITE_BUSY at once, without waiting busy_timeout, when another
// process is opening the same new file at that moment: retry until
// BusyTimeout.
func setWAL(ctx context.Context, w *sql.DB) (string, error) {
	deadline := time.Now().Add(BusyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		var mode string
		err := w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return mode, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
	}
}

// Path returns the database file name given to Open.
func (db *DB) Path() string { return db.path }

// SchemaVersion returns the highest migration version applied to the
// database (0 for none).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.r.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	return v, nil
}

// migrate applies the missing migrations, one transaction each. Each
// transaction starts with BEGIN IMMEDIATE (the write lock), then reads the
// current version, so concurrent Opens of the same file, in this process or
// another, serialise and apply every migration once.
func (db *DB) migrate(ctx context.Context, ms []migrate.Migration) error {
	for {
		done, err := db.migrateStep(ctx, ms)
		if err != nil || done {
			return err
		}
	}
}

func (db *DB) migrateStep(ctx context.Context, ms []migrate.Migration) (done bool, err error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	) STRICT`); err != nil {
		return false, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var cur int
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&cur); err != nil {
		return false, fmt.Errorf("migrate: read version: %w", err)
	}
	switch {
	case cur > len(ms):
		return false, fmt.Errorf("migrate: the database schema is at version %d but this binary knows only up to %d: upgrade svc", cur, len(ms))
	case cur == len(ms):
		return true, tx.Commit()
	}
	m := ms[cur]
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("migrate: %04d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
		m.Version, m.Name, fmtTime(time.Now())); err != nil {
		return false, fmt.Errorf("migrate: record %04d_%s: %w", m.Version, m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate: commit %04d_%s: %w", m.Version, m.Name, err)
	}
	return false, nil
}

// Close stops the writer goroutine, after it has committed and answered
// the batch in hand (writes still queued fail with ErrClosed), then closes
// both pools. Calling it again returns the first result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		if db.stop != nil {
			close(db.stop)
			<-db.stopped
		}
		errs := []error{db.stmts.close(), db.reads.close()}
		if db.r != nil {
			errs = append(errs, db.r.Close())
		}
		errs = append(errs, db.w.Close())
		if err := errors.Join(errs...); err != nil {
			db.closeErr = fmt.Errorf("sqlite: close: %w", err)
		}
	})
	return db.closeErr
}

// Ping checks that the database file can be read and written to: both
// pools answer, and the database's directory takes a probe write and has
// at least the minimum free space (DefaultMinFreeBytes); the errors match
// ErrNotWritable and ErrLowDisk.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.r.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	var one int
	if err := db.r.QueryRowContext(ctx, "SELECT 1 FROM schema_migrations LIMIT 1").Scan(&one); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	if err := db.w.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	if err := db.checkWritable(); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// CreateOrg implements store.Store.
func (db *DB) CreateOrg(ctx context.Context, o store.Org) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO orgs (id, name, tier, created_at) VALUES (?, ?, ?, ?)",
			o.ID, o.Name, o.Tier, fmtTime(o.CreatedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create org %s (%s): %w", o.ID, o.Name, err)
	}
	return nil
}

const orgCols = "id, name, tier, created_at"

func scanOrg(row interface{ Scan(...any) error }) (store.Org, error) {
	var o store.Org
	var created string
	if err := row.Scan(&o.ID, &o.Name, &o.Tier, &created); err != nil {
		return store.Org{}, err
	}
	var err error
	o.CreatedAt, err = parseTime(created)
	return o, err
}

// OrgByName implements store.Store.
func (db *DB) OrgByName(ctx context.Context, name string) (store.Org, error) {
	o, err := scanOrg(db.queryRow(ctx, "SELECT "+orgCols+" FROM orgs WHERE name = ?", name))
	if err != nil {
		return store.Org{}, fmt.Errorf("sqlite: org named %q: %w", name, mapErr(err))
	}
	return o, nil
}

// OrgByID implements store.Store.
func (db *DB) OrgByID(ctx context.Context, id string) (store.Org, error) {
	o, err := scanOrg(db.queryRow(ctx, "SELECT "+orgCols+" FROM orgs WHERE id = ?", id))
	if err != nil {
		return store.Org{}, fmt.Errorf("sqlite: org %s: %w", id, mapErr(err))
	}
	return o, nil
}

// CreateAPIKey implements store.Store. A key of an unknown organisation
// gives store.ErrNotFound.
func (db *DB) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO api_keys (id, org_id, environment, hash, created_at) VALUES (?, ?, ?, ?, ?)",
			k.ID, k.OrgID, k.Environment, nonNil(k.Hash), fmtTime(k.CreatedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create api key %s of org %s: %w", k.ID, k.OrgID, err)
	}
	return nil
}

// APIKeyByHash implements store.Store.
func (db *DB) APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	k, err := scanAPIKey(db.queryRow(ctx, "SELECT "+apiKeyCols+" FROM api_keys WHERE hash = ?", nonNil(hash)))
	if err == nil && subtle.ConstantTimeCompare(k.Hash, hash) != 1 {
		err = sql.ErrNoRows
	}
	if err != nil {
		return store.APIKey{}, fmt.Errorf("sqlite: api key by hash: %w", mapErr(err))
	}
	if !k.RevokedAt.IsZero() {
		return k, fmt.Errorf("sqlite: api key %s: %w at %s", k.ID, store.ErrRevoked, fmtTime(k.RevokedAt))
	}
	return k, nil
}

// CreateRun implements store.Store. The run is stored open whatever r's
// Sealed, ClosedAt and VPECID say; a run of an unknown organisation gives
// store.ErrNotFound.
func (db *DB) CreateRun(ctx context.Context, r store.Run) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, org_id, workflow_id, surface_id, policy_pack_id,
			policy_snapshot_hash, process_context_hash, environment, api_key_id, sealed, opened_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
			r.ID, r.OrgID, r.WorkflowID, r.SurfaceID, r.PolicyPackID, r.PolicySnapshotHash,
			r.ProcessContextHash, r.Environment, r.APIKeyID, fmtTime(r.OpenedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create run %s of org %s: %w", r.ID, r.OrgID, err)
	}
	return nil
}

const runCols = `id, org_id, workflow_id, surface_id, policy_pack_id, policy_snapshot_hash, process_context_hash,
	environment, api_key_id, sealed, opened_at, closed_at, vpec_id, close_key,
	record_count, last_sequence, last_chain_hash, record_bytes`

func scanRun(row interface{ Scan(...any) error }) (store.Run, error) {
	var r store.Run
	var opened string
	var closed, vpecID sql.NullString
	err := row.Scan(&r.ID, &r.OrgID, &r.WorkflowID, &r.SurfaceID, &r.PolicyPackID, &r.PolicySnapshotHash,
		&r.ProcessContextHash, &r.Environment, &r.APIKeyID, &r.Sealed, &opened, &closed, &vpecID, &r.CloseKey,
		&r.RecordCount, &r.LastSequence, &r.LastChainHash, &r.RecordBytes)
	if err == nil {
		r.OpenedAt, err = parseTime(opened)
	}
	if err == nil && closed.Valid {
		r.ClosedAt, err = parseTime(closed.String)
	}
	r.VPECID = vpecID.String
	return r, err
}

// Run implements store.Store.
func (db *DB) Run(ctx context.Context, orgID, runID string) (store.Run, error) {
	r, err := scanRun(db.queryRow(ctx, "SELECT "+runCols+" FROM runs WHERE id = ? AND org_id = ?", runID, orgID))
	if err != nil {
		return store.Run{}, fmt.Errorf("sqlite: run %s of org %s: %w", runID, orgID, mapErr(err))
	}
	return r, nil
}

// lockOpenRun checks, inside a write transaction, that the run exists in
// the organisation and is open.
func (db *DB) lockOpenRun(ctx context.Context, tx *wtx, orgID, runID string) error {
	_, _, err := db.openRunSize(ctx, tx, orgID, runID)
	return err
}

// openRunSize is lockOpenRun returning the run's record count and bytes.
func (db *DB) openRunSize(ctx context.Context, tx *wtx, orgID, runID string) (count, bytes int64, err error) {
	var sealed bool
	if err := tx.stmt(ctx, db.stmts.runSealed).QueryRowContext(ctx, runID, orgID).Scan(&sealed, &count, &bytes); err != nil {
		return 0, 0, mapErr(err)
	}
	if sealed {
		return 0, 0, store.ErrSealed
	}
	return count, bytes, nil
}

// AppendRecord implements store.Store. A record is a duplicate when the
// stored record with its id has the same sequence, chain hash and body; any
// other difference is store.ErrConflict. The run is checked first: a sealed
// run gives store.ErrSealed even for a duplicate.
//
// Concurrent appends are group-committed (see the package documentation):
// each is atomic on its own, in a savepoint of the batch's transaction, and
// durable when it returns. Appends and seals all go through the one writer:
// an append commits before a seal or sees the run sealed.
func (db *DB) AppendRecord(ctx context.Context, orgID string, rec store.Record, lim store.Limits) (duplicate bool, err error) {
	var dup bool // not the result duplicate: see PutManifest
	err = db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		dup, err = db.appendRecord(ctx, tx, orgID, rec, lim)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: append record %s (sequence %d) to run %s of org %s: %w",
			rec.RecordID, rec.Sequence, rec.RunID, orgID, err)
	}
	return dup, nil
}

// appendRecord appends rec in tx (the writer's transaction, or its
// savepoint).
func (db *DB) appendRecord(ctx context.Context, tx *wtx, orgID string, rec store.Record, lim store.Limits) (bool, error) {
	count, bytes, err := db.openRunSize(ctx, tx, orgID, rec.RunID)
	if err != nil {
		// A retry of a record the run already holds (so one of its sealed
		// set) is acknowledged even after the seal: its response may have
		// been lost in a crash.
		if errors.Is(err, store.ErrSealed) {
			if dup, derr := storedAlready(ctx, tx, rec); derr == nil && dup {
				return true, nil
			}
		}
		return false, err
	}
	body := nonNil(rec.Body)
	if lerr := lim.Check(count, bytes, int64(len(body))); lerr != nil {
		// A retry of a stored record is still a duplicate, full or not.
		if dup, derr := storedAlready(ctx, tx, rec); derr != nil || dup {
			return dup, derr
		}
		return false, lerr
	}
	res, err := tx.stmt(ctx, db.stmts.insertRecord).ExecContext(ctx,
		rec.RunID, rec.Sequence, rec.RecordID, rec.ChainHash, body)
	if err != nil {
		return false, mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n == 1 {
		if _, err := tx.stmt(ctx, db.stmts.updateRun).ExecContext(ctx, rec.RunID, len(body), rec.Sequence, rec.ChainHash); err != nil {
			return false, fmt.Errorf("update run metadata: %w", err)
		}
		return false, nil
	}
	// The record id or the sequence is taken. Nothing was written.
	dup, err := storedAlready(ctx, tx, rec)
	if err == nil && !dup {
		err = fmt.Errorf("sequence %d holds another record: %w", rec.Sequence, store.ErrConflict)
	}
	return dup, err
}

// storedAlready reports whether the run holds rec exactly (same id,
// sequence, chain hash and body): true; nothing with its id: false; a
// different record with its id: store.ErrConflict.
func storedAlready(ctx context.Context, tx *wtx, rec store.Record) (bool, error) {
	var seq int64
	var chain string
	var body []byte
	err := tx.QueryRowContext(ctx, "SELECT sequence, chain_hash, body FROM records WHERE run_id = ? AND record_id = ?",
		rec.RunID, rec.RecordID).Scan(&seq, &chain, &body)
	switch {
	case errors.Is(err, sql.ErrNoRows):
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

func scanRecord(row interface{ Scan(...any) error }) (store.Record, error) {
	var r store.Record
	err := row.Scan(&r.RunID, &r.Sequence, &r.RecordID, &r.ChainHash, &r.Body)
	return r, err
}

// RecordBySequence implements store.Store.
func (db *DB) RecordBySequence(ctx context.Context, runID string, seq int64) (store.Record, error) {
	r, err := scanRecord(db.queryRow(ctx, "SELECT "+recordCols+" FROM records WHERE run_id = ? AND sequence = ?", runID, seq))
	if err != nil {
		return store.Record{}, fmt.Errorf("sqlite: record %d of run %s: %w", seq, runID, mapErr(err))
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

// EachRecord implements store.Store. It reads in pages of recordPage
// records, each page in its own statement, so that no read transaction
// stays open while fn works (a long reader would keep the WAL from being
// checkpointed).
func (db *DB) EachRecord(ctx context.Context, runID string, fn func(store.Record) error) error {
	var after int64
	first := true
	for {
		n := 0
		q, args := "SELECT "+recordCols+" FROM records WHERE run_id = ? ORDER BY sequence LIMIT ?", []any{runID, recordPage}
		if !first {
			q, args = "SELECT "+recordCols+" FROM records WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?", []any{runID, after, recordPage}
		}
		rows, err := db.query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("sqlite: records of run %s: %w", runID, err)
		}
		var page []store.Record
		for rows.Next() {
			r, err := scanRecord(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: records of run %s: %w", runID, err)
			}
			page = append(page, r)
			n++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("sqlite: records of run %s: %w", runID, err)
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
		if n < recordPage {
			return nil
		}
		first = false
	}
}

// recordPage is how many records EachRecord reads per statement.
const recordPage = 256

// SealRun implements store.Store. v.RunID and v.OrgID, when set, must name
// runID and orgID; the VPEC is stored with runID and orgID. A VPEC id that
// is already taken gives store.ErrExists and leaves the run open.
func (db *DB) SealRun(ctx context.Context, orgID, runID string, v store.VPEC) error {
	err := v.Belongs(orgID, runID)
	if err == nil {
		err = db.write(ctx, func(ctx context.Context, tx *wtx) error {
			if err := db.lockOpenRun(ctx, tx, orgID, runID); err != nil {
				return err
			}
			if err := db.sealRecords(ctx, tx, runID, "", v.IssuedAt); err != nil {
				return err
			}
			return db.storeVPEC(ctx, tx, orgID, runID, v)
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: seal run %s of org %s with vpec %s: %w", runID, orgID, v.ID, err)
	}
	return nil
}

func (db *DB) sealRecords(ctx context.Context, tx *wtx, runID, closeKey string, at time.Time) error {
	_, err := tx.ExecContext(ctx, "UPDATE runs SET sealed = 1, closed_at = ?, close_key = ? WHERE id = ?", fmtTime(at), closeKey, runID)
	return err
}

func (db *DB) storeVPEC(ctx context.Context, tx *wtx, orgID, runID string, v store.VPEC) error {
	if _, err := tx.ExecContext(ctx, "INSERT INTO vpecs (id, run_id, org_id, issued_at, body) VALUES (?, ?, ?, ?, ?)",
		v.ID, runID, orgID, fmtTime(v.IssuedAt), nonNil(v.Body)); err != nil {
		return mapErr(err)
	}
	_, err := tx.ExecContext(ctx, "UPDATE runs SET vpec_id = ? WHERE id = ?", v.ID, runID)
	return err
}

// SealRecords implements store.Store.
func (db *DB) SealRecords(ctx context.Context, orgID, runID, closeKey string, closedAt time.Time) (store.Run, bool, error) {
	var run store.Run
	var sealed bool
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		err = db.lockOpenRun(ctx, tx, orgID, runID)
		switch {
		case err == nil:
			if err := db.sealRecords(ctx, tx, runID, closeKey, closedAt); err != nil {
				return err
			}
			sealed = true
		case !errors.Is(err, store.ErrSealed):
			return err
		}
		run, err = scanRun(tx.QueryRowContext(ctx, "SELECT "+runCols+" FROM runs WHERE id = ?", runID))
		return mapErr(err)
	})
	if err != nil {
		return store.Run{}, false, fmt.Errorf("sqlite: seal the records of run %s of org %s: %w", runID, orgID, err)
	}
	return run, sealed, nil
}

// UnsealRecords implements store.Store.
func (db *DB) UnsealRecords(ctx context.Context, orgID, runID, closeKey string) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var sealed bool
		var vpecID sql.NullString
		var key string
		if err := tx.QueryRowContext(ctx, "SELECT sealed, vpec_id, close_key FROM runs WHERE id = ? AND org_id = ?", runID, orgID).Scan(&sealed, &vpecID, &key); err != nil {
			return mapErr(err)
		}
		switch {
		case !sealed:
			return store.ErrNotSealed
		case vpecID.Valid || key != closeKey:
			return store.ErrSealed
		}
		_, err := tx.ExecContext(ctx, "UPDATE runs SET sealed = 0, closed_at = NULL, close_key = '' WHERE id = ?", runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: unseal the records of run %s of org %s: %w", runID, orgID, err)
	}
	return nil
}

// StoreVPEC implements store.Store.
func (db *DB) StoreVPEC(ctx context.Context, orgID, runID string, v store.VPEC) error {
	err := v.Belongs(orgID, runID)
	if err == nil {
		err = db.write(ctx, func(ctx context.Context, tx *wtx) error {
			var sealed bool
			var vpecID sql.NullString
			if err := tx.QueryRowContext(ctx, "SELECT sealed, vpec_id FROM runs WHERE id = ? AND org_id = ?", runID, orgID).Scan(&sealed, &vpecID); err != nil {
				return mapErr(err)
			}
			switch {
			case !sealed:
				return store.ErrNotSealed
			case vpecID.Valid:
				return fmt.Errorf("%w: the run already has vpec %s", store.ErrSealed, vpecID.String)
			}
			return db.storeVPEC(ctx, tx, orgID, runID, v)
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: store vpec %s of run %s of org %s: %w", v.ID, runID, orgID, err)
	}
	return nil
}

// VPEC implements store.Store.
func (db *DB) VPEC(ctx context.Context, orgID, vpecID string) (store.VPEC, error) {
	var v store.VPEC
	var issued string
	err := db.queryRow(ctx, "SELECT id, run_id, org_id, issued_at, body FROM vpecs WHERE id = ? AND org_id = ?", vpecID, orgID).
		Scan(&v.ID, &v.RunID, &v.OrgID, &issued, &v.Body)
	if err == nil {
		v.IssuedAt, err = parseTime(issued)
	}
	if err != nil {
		return store.VPEC{}, fmt.Errorf("sqlite: vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	return v, nil
}

// VPECInfo implements store.Store. length() of a BLOB reads the record
// header only, never the body's pages.
func (db *DB) VPECInfo(ctx context.Context, orgID, vpecID string) (store.VPECInfo, error) {
	var v store.VPECInfo
	var issued string
	err := db.queryRow(ctx, `SELECT v.id, v.run_id, v.org_id, v.issued_at, length(v.body), r.environment
		FROM vpecs v JOIN runs r ON r.id = v.run_id WHERE v.id = ? AND v.org_id = ?`, vpecID, orgID).
		Scan(&v.ID, &v.RunID, &v.OrgID, &issued, &v.Size, &v.Environment)
	if err == nil {
		v.IssuedAt, err = parseTime(issued)
	}
	if err != nil {
		return store.VPECInfo{}, fmt.Errorf("sqlite: vpec %s of org %s: %w", vpecID, orgID, mapErr(err))
	}
	return v, nil
}

// PutManifest implements store.Store. A manifest of an unknown
// organisation gives store.ErrNotFound.
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

// Manifest implements store.Store.
func (db *DB) Manifest(ctx context.Context, orgID, id string) (store.Manifest, error) {
	var m store.Manifest
	var created string
	err := db.queryRow(ctx, "SELECT org_id, id, name, body, created_at FROM manifests WHERE org_id = ? AND id = ?", orgID, id).
		Scan(&m.OrgID, &m.ID, &m.Name, &m.Body, &created)
	if err == nil {
		m.CreatedAt, err = parseTime(created)
	}
	if err != nil {
		return store.Manifest{}, fmt.Errorf("sqlite: manifest %s of org %s: %w", id, orgID, mapErr(err))
	}
	return m, nil
}

// PutProfile implements store.Store. ProfileByModelHash answers with the
// covering profile of latest PublishedAt (the last published on a tie), so
// publishing a profile with an older PublishedAt does not take a model
// over from a newer one.
func (db *DB) PutProfile(ctx context.Context, p store.Profile) error {
	if err := db.write(ctx, func(ctx context.Context, tx *wtx) error { return putProfile(ctx, tx, p) }); err != nil {
		return fmt.Errorf("sqlite: put profile %s: %w", p.ID, err)
	}
	return nil
}

func putProfile(ctx context.Context, tx *wtx, p store.Profile) error {
	hashes := p.ModelHashes
	if hashes == nil {
		hashes = []string{}
	}
	list, err := json.Marshal(hashes)
	if err != nil {
		return err
	}
	published := fmtTime(p.PublishedAt)
	if _, err := tx.ExecContext(ctx, "INSERT INTO profiles (id, model_hashes, body, published_at) VALUES (?, ?, ?, ?)",
		p.ID, string(list), nonNil(p.Body), published); err != nil {
		return mapErr(err)
	}
	for _, h := range hashes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO profile_models (model_hash, profile_id, published_at)
			VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, h, p.ID, published); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

const profileCols = "id, model_hashes, body, published_at"

func scanProfile(row interface{ Scan(...any) error }) (store.Profile, error) {
	var p store.Profile
	var list, published string
	if err := row.Scan(&p.ID, &list, &p.Body, &published); err != nil {
		return store.Profile{}, err
	}
	if err := json.Unmarshal([]byte(list), &p.ModelHashes); err != nil {
		return store.Profile{}, fmt.Errorf("model hashes of profile %s: %w", p.ID, err)
	}
	var err error
	p.PublishedAt, err = parseTime(published)
	return p, err
}

// Profiles implements store.Store.
func (db *DB) Profiles(ctx context.Context) ([]store.Profile, error) {
	rows, err := db.query(ctx, "SELECT "+profileCols+" FROM profiles ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("sqlite: profiles: %w", err)
	}
	defer rows.Close()
	out := []store.Profile{}
	for rows.Next() {
		p, err := scanProfile(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: profiles: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: profiles: %w", err)
	}
	return out, nil
}

// ProfileByID implements store.Store.
func (db *DB) ProfileByID(ctx context.Context, id string) (store.Profile, error) {
	p, err := scanProfile(db.queryRow(ctx, "SELECT "+profileCols+" FROM profiles WHERE id = ?", id))
	if err != nil {
		return store.Profile{}, fmt.Errorf("sqlite: profile %s: %w", id, mapErr(err))
	}
	return p, nil
}

// ProfileByModelHash implements store.Store.
func (db *DB) ProfileByModelHash(ctx context.Context, modelHash string) (store.Profile, error) {
	p, err := scanProfile(db.queryRow(ctx, `SELECT p.id, p.model_hashes, p.body, p.published_at
		FROM profile_models m JOIN profiles p ON p.id = m.profile_id
		WHERE m.model_hash = ? ORDER BY m.published_at DESC, m.seq DESC LIMIT 1`, modelHash))
	if err != nil {
		return store.Profile{}, fmt.Errorf("sqlite: profile of model %s: %w", modelHash, mapErr(err))
	}
	return p, nil
}

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// nonNil keeps a nil slice from being stored as NULL in a NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// mapErr turns "no rows" and constraint violations into the store's
// sentinels, keeping the driver's message.
func mapErr(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w (%v)", store.ErrExists, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: the organisation or run it refers to does not exist (%v)", store.ErrNotFound, err)
		}
	}
	return err
}
