// Package fsutil writes files so that nothing is ever half-written or
// silently replaced: key material and documents are created whole or not
// at all.
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteNew atomically creates path with data and mode perm. The data goes
// to a temporary file in the same directory, is synced, and is then linked
// into place, so a reader never sees a partial file and a crash leaves
// either nothing or the whole file. It refuses to replace an existing file:
// the error then wraps fs.ErrExist. Where hard links are not supported it
// falls back to a rename after checking that path does not exist.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	tmpName, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmpName)
	linkErr := os.Link(tmpName, path)
	if linkErr == nil {
		return nil
	}
	if errors.Is(linkErr, fs.ErrExist) {
		return fmt.Errorf("refusing to overwrite %s: %w", path, fs.ErrExist)
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("refusing to overwrite %s: %w", path, fs.ErrExist)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeTemp writes data with mode perm to a synced temporary file beside
// path and returns its name; the caller links or renames it into place
// and removes it.
func writeTemp(path string, data []byte, perm fs.FileMode) (string, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	err = tmp.Chmod(perm)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return tmp.Name(), nil
}

// SyncDir flushes a directory's entries so that files linked or renamed
// into it survive a crash. File systems that cannot sync a directory are
// not an error: the files themselves are already synced.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer d.Close()
	_ = d.Sync()
	return nil
}

// ErrLocked: LockFile found the file locked by someone else.
var ErrLocked = errors.New("locked by another process")

// WriteReplace writes data to path atomically, replacing any file there:
// a synced temporary file in the same directory renamed into place, then
// the directory synced, so a crash leaves the old file or the new one.
func WriteReplace(path string, data []byte, perm fs.FileMode) error {
	tmpName, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmpName)
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// CheckWritable reports whether a file can be written at path the way
// WriteNew and WriteReplace write it (a temporary file beside it, then a
// link or rename): an error naming the problem when its directory is
// missing or not writable, or path is a directory. It writes nothing that
// stays.
func CheckWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("write %s: is a directory", path)
	}
	name, err := writeTemp(path, nil, 0o600)
	if err != nil {
		return err
	}
	return os.Remove(name)
}
