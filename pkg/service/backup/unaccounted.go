package backup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Unaccounted lists the top-level entries of dataDir that a backup with
// layout l neither carries nor knows to leave out (the locks,
// SQLite's -wal, -shm and -journal files, a backup's own temporary
// directory), sorted. A new part of the data directory that svc serve
// starts to keep (a transparency log's directory) shows here until
// DataDirLayout carries it: svc admin backup warns about each, and the
// restore test fails on any, so nothing svc keeps is silently left out
// of a backup. The zero Layout means DataDirLayout().
func Unaccounted(dataDir string, l Layout) ([]string, error) {
	if l.Database == "" && l.Items == nil {
		l = DataDirLayout()
	}
	entries, err := os.ReadDir(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	known := []string{}
	if l.Database != "" {
		known = append(known, firstElement(l.Database))
	}
	for _, it := range l.Items {
		known = append(known, firstElement(it.Path))
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		db := &Database{Path: l.Database}
		switch {
		case slices.Contains(known, name), reserved(name, db), strings.HasPrefix(name, ".svc-backup-"):
			continue
		}
		out = append(out, filepath.Join(dataDir, name))
	}
	return out, nil
}

// firstElement is the first element of a slash-separated path.
func firstElement(p string) string {
	first, _, _ := strings.Cut(p, "/")
	return first
}
