package sqlite

import (
	"context"
	"database/sql"
	"embed"
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

// DB is a store.Store (every role) on one SQLite file. It is safe for concurrent use.
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
	err := db.r.QueryRowContext(ctx, migrate.VersionQuery).Scan(&v)
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

// migrationTable is schema_migrations in SQLite.
var migrationTable = migrate.Table{
	Create: `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	) STRICT`,
	Record: func(m migrate.Migration) (string, []any) {
		return "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", []any{m.Version, m.Name, fmtTime(time.Now())}
	},
}

// migrationTx is a *sql.Tx as migrate.Step sees it.
type migrationTx struct{ *sql.Tx }

func (tx migrationTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := tx.ExecContext(ctx, query, args...)
	return err
}

func (tx migrationTx) Int(ctx context.Context, query string) (n int, err error) {
	err = tx.QueryRowContext(ctx, query).Scan(&n)
	return n, err
}

func (db *DB) migrateStep(ctx context.Context, ms []migrate.Migration) (done bool, err error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	m, err := migrate.Step(ctx, migrationTx{tx}, ms, migrationTable)
	switch {
	case err != nil:
		return false, err
	case m == nil:
		return true, tx.Commit()
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
