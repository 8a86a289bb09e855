// Package setup assembles what a Governance Proof Service needs before
// server.New, and serves it: the store of a data directory (SQLite) or a
// PostgreSQL DSN, the lock that keeps one serving process per data
// directory, the timestamp authorities, and the HTTP server's life from
// listening to graceful shutdown. svc serve and the admin commands are
// flag wiring over it; a program embedding the service calls it directly.
package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/postgres"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// SQLiteFile is the database file inside a data directory.
const SQLiteFile = "svc.db"

// LockFile is the file in a data directory that the serving process
// holds locked (flock) and writes its pid to.
const LockFile = "serve.lock"

// Errors of this package, matchable with errors.Is.
var (
	// ErrUnsupportedDSN: a database DSN that is not postgres:// or
	// postgresql://.
	ErrUnsupportedDSN = errors.New("unsupported database")
	// ErrNoDatabase: the data directory has no database and Create was
	// not set.
	ErrNoDatabase = errors.New("no service database")
	// ErrOpenStore: the database could not be opened or created.
	ErrOpenStore = errors.New("cannot open the service database")
	// ErrLocked: another process serves the data directory (a
	// *LockedError).
	ErrLocked = errors.New("the data directory is being served")
)

// StoreOptions locate a service's store.
type StoreOptions struct {
	// DataDir holds the SQLite database (SQLiteFile) unless DSN is set.
	DataDir string
	// DSN is a PostgreSQL DSN (postgres://… or postgresql://…) used
	// instead of SQLite.
	DSN string
	// Create allows a new SQLite database (and the data directory) to be
	// made; without it a data directory without a database is
	// ErrNoDatabase, so a mistyped directory shows at once.
	Create bool
}

// Store is an opened store and where it is, for messages. It plays every
// role (store.Store): the code that opens it hands each consumer its role
// (server.StorageOf for the server, the role interface itself for an
// administrative call).
type Store struct {
	store.Store
	// Where is "sqlite <path>" or "postgres <DSN with the password
	// hidden>".
	Where string
	// Created is true when a new SQLite database was made.
	Created bool
}

// OpenStore opens the store o locates: PostgreSQL when a DSN is given,
// else SQLite in the data directory. Errors match ErrUnsupportedDSN,
// ErrNoDatabase or ErrOpenStore; none of them shows a DSN's password.
func OpenStore(ctx context.Context, o StoreOptions) (*Store, error) {
	if o.DSN != "" {
		if !strings.HasPrefix(o.DSN, "postgres://") && !strings.HasPrefix(o.DSN, "postgresql://") {
			return nil, fmt.Errorf("%w %q", ErrUnsupportedDSN, RedactDSN(o.DSN))
		}
		st, err := postgres.Open(ctx, o.DSN)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOpenStore, err)
		}
		return &Store{Store: st, Where: "postgres " + RedactDSN(o.DSN)}, nil
	}
	path := filepath.Join(o.DataDir, SQLiteFile)
	_, statErr := os.Stat(path)
	isNew := errors.Is(statErr, fs.ErrNotExist)
	if isNew && !o.Create {
		return nil, fmt.Errorf("%w at %s", ErrNoDatabase, path)
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: data directory: %w", ErrOpenStore, err)
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOpenStore, err)
	}
	return &Store{Store: st, Where: "sqlite " + path, Created: isNew}, nil
}

// RedactDSN hides the password of a DSN (user:password@host) for
// messages: user:****@host.
func RedactDSN(dsn string) string {
	if at := strings.Index(dsn, "@"); at > 0 {
		if c := strings.Index(dsn[:at], "://"); c >= 0 {
			if p := strings.Index(dsn[c+3:at], ":"); p >= 0 {
				return dsn[:c+3+p+1] + "****" + dsn[at:]
			}
		}
	}
	return dsn
}

// LockedError is the error of LockDataDir when another process serves the
// directory; it matches ErrLocked.
type LockedError struct {
	Dir string
	// PID is the pid the holder wrote in the lock file, "" if none.
	PID string
}

func (e *LockedError) Error() string {
	who := "another svc serve"
	if e.PID != "" {
		who += " (pid " + e.PID + ")"
	}
	return fmt.Sprintf("%s is serving %s", who, e.Dir)
}

// Is matches ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// LockDataDir locks dir for this process (LockFile, flock, holding this
// process's pid) and returns its release; a directory another process
// holds is a *LockedError naming that process. One process per SQLite
// data directory: a second one would share the database file and the key
// material unannounced.
func LockDataDir(dir string) (unlock func(), err error) {
	f, holder, err := lockPID(dir, LockFile)
	if errors.Is(err, fsutil.ErrLocked) {
		return nil, &LockedError{Dir: dir, PID: holder}
	}
	if err != nil {
		return nil, err
	}
	return func() { release(f) }, nil
}

// SetupLockFile is the file in a data directory that a starting svc serve
// holds locked (flock) while it creates or checks the key material, the
// service identity and the trust root.
const SetupLockFile = "setup.lock"

// ErrSetupWait: LockSetup gave up waiting for another process's setup.
var ErrSetupWait = errors.New("another svc serve is still setting up the data directory")

// LockSetup waits, until ctx ends or for at most wait, to hold dir's
// SetupLockFile and returns its release. Servers that start at once on
// one new data directory (several servers on one PostgreSQL database)
// then create its keys and trust root once, one after the other, and the
// later ones load what the first made. A wait that ends is an error
// matching ErrSetupWait, naming the holder's pid. unlock may be called
// more than once.
func LockSetup(ctx context.Context, dir string, wait time.Duration) (unlock func(), err error) {
	deadline := time.Now().Add(wait)
	for {
		f, holder, err := lockPID(dir, SetupLockFile)
		if err == nil {
			var once sync.Once
			return func() { once.Do(func() { release(f) }) }, nil
		}
		if !errors.Is(err, fsutil.ErrLocked) {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w %s (pid %s, holding %s for more than %v)", ErrSetupWait, dir, holder, SetupLockFile, wait)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w %s (pid %s): %w", ErrSetupWait, dir, holder, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lockPID takes an exclusive, non-blocking flock on dir/name and writes
// this process's pid in it; when another process holds it, the error
// matches fsutil.ErrLocked and holder is the pid that process wrote.
func lockPID(dir, name string) (f *os.File, holder string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, name)
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("lock the data directory: %w", err)
	}
	if err := fsutil.LockFile(f); err != nil {
		b, _ := io.ReadAll(f)
		f.Close()
		return nil, strings.TrimSpace(string(b)), fmt.Errorf("lock %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, "", nil
}

// release empties and unlocks a file of lockPID.
func release(f *os.File) {
	f.Truncate(0)
	fsutil.UnlockFile(f)
	f.Close()
}
