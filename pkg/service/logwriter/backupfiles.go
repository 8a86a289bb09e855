package logwriter

import (
	"strconv"
	"strings"
)

// FileKind is how a backup taken while the log is written copies a file
// of the POSIX log's directory (Config.Dir).
type FileKind int

const (
	// FileSkip is not part of the log: a lock, or the temporary file of a
	// write in progress (Tessera writes a file under another name and
	// renames or links it into place).
	FileSkip FileKind = iota
	// FileStable is written once and never changed or removed: a full
	// tile or entry bundle. A backup may list it and copy it later.
	FileStable
	// FileVolatile is replaced while the log is written (the checkpoint,
	// the tree state), or removed once a full one supersedes it (a
	// partial tile or entry bundle): a backup reads it when it lists it.
	FileVolatile
)

// BackupFirst lists the files of the log's directory a backup reads
// before it lists the others, in this order: the checkpoint, then the
// tree state (Tessera publishes a checkpoint from a state it has already
// written, so the state read second covers the checkpoint read first),
// then everything else (Tessera writes tiles and bundles before the state
// that counts them, so the tiles listed afterwards cover that state).
func BackupFirst() []string { return []string{"checkpoint", ".state/treeState"} }

// BackupKind classifies the file at rel, a slash-separated path relative
// to the log's directory.
func BackupKind(rel string) FileKind {
	switch {
	case rel == "checkpoint":
		return FileVolatile
	case strings.HasPrefix(rel, ".state/"):
		switch strings.TrimPrefix(rel, ".state/") {
		case "treeState", "gcState", "version":
			return FileVolatile
		}
		return FileSkip // locks (Tessera's and svc's writer lock), temporary files
	case strings.HasPrefix(rel, "tile/"):
		return tileKind(strings.Split(strings.TrimPrefix(rel, "tile/"), "/"))
	}
	return FileSkip
}

// tileKind classifies a tlog-tiles path after "tile/": a level (0-63) or
// "entries", then the index as 3-digit groups (all but the last prefixed
// with x), then for a partial tile ".p/" and its width (1-255).
func tileKind(parts []string) FileKind {
	if len(parts) < 2 {
		return FileSkip
	}
	if parts[0] != "entries" {
		if l, err := strconv.Atoi(parts[0]); err != nil || l < 0 || l > 63 || strconv.Itoa(l) != parts[0] {
			return FileSkip
		}
	}
	idx := parts[1:]
	partial := false
	if n := len(idx); n >= 2 && strings.HasSuffix(idx[n-2], ".p") {
		w, err := strconv.Atoi(idx[n-1])
		if err != nil || w < 1 || w > 255 || strconv.Itoa(w) != idx[n-1] {
			return FileSkip
		}
		idx[n-2] = strings.TrimSuffix(idx[n-2], ".p")
		idx, partial = idx[:n-1], true
	}
	for i, g := range idx {
		if i < len(idx)-1 {
			if !strings.HasPrefix(g, "x") {
				return FileSkip
			}
			g = g[1:]
		}
		if len(g) != 3 || strings.Trim(g, "0123456789") != "" {
			return FileSkip
		}
	}
	if partial {
		return FileVolatile
	}
	return FileStable
}
