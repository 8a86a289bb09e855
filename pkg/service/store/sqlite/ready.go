package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/pkg/service/store"
)

// DefaultMinFreeBytes is the free space the database's directory must have
// for Ping to report the database ready: below it a write (a record, a
// VPEC of a large run) may fail with "disk full", so the service says so
// at /readyz before its writes start failing.
const DefaultMinFreeBytes = 64 << 20

// Errors of Ping, matchable with errors.Is (the store's sentinels).
var (
	// ErrNotWritable: the database's directory or file cannot be written.
	ErrNotWritable = store.ErrNotWritable
	// ErrLowDisk: the database's directory has less free space than the
	// readiness threshold.
	ErrLowDisk = store.ErrLowDisk
)

// SetMinFreeBytes sets the free space below which Ping fails with
// ErrLowDisk (DefaultMinFreeBytes unless set; 0 disables the check).
func (db *DB) SetMinFreeBytes(n uint64) { db.minFree.Store(n) }

// checkWritable proves the database can be written: a probe file is
// created, written, synced and removed in the database's directory (the
// WAL and the shared-memory file live there), the database file opens for
// writing, and the directory has at least the minimum free space.
func (db *DB) checkWritable() error {
	dir := filepath.Dir(db.path)
	f, err := os.CreateTemp(dir, ".svc-ready-*")
	if err != nil {
		return fmt.Errorf("directory %s: %w: %w", dir, ErrNotWritable, err)
	}
	_, werr := f.Write([]byte("ready\n"))
	serr := f.Sync()
	cerr := f.Close()
	rerr := os.Remove(f.Name())
	if err := errors.Join(werr, serr, cerr, rerr); err != nil {
		return fmt.Errorf("directory %s: %w: %w", dir, ErrNotWritable, err)
	}
	df, err := os.OpenFile(db.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("database file: %w: %w", ErrNotWritable, err)
	}
	df.Close()
	min := db.minFree.Load()
	if min == 0 {
		return nil
	}
	free, err := freeBytes(dir)
	if errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("free space of %s: %w", dir, err)
	}
	if free < min {
		return fmt.Errorf("%s has %d MiB free: %w (%d MiB)", dir, free>>20, ErrLowDisk, min>>20)
	}
	return nil
}

// createPrivate creates the database file, if it does not exist yet, with
// mode 0600: SQLite creates the WAL and shared-memory files with the mode
// of the database file, so all three are readable by the owner only. An
// existing file keeps its mode.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
