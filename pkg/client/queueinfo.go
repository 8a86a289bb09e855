package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// QueueInfo describes a queue file as it is on disk.
type QueueInfo struct {
	// Path is the queue file.
	Path string `json:"queue_path"`
	// Exists is false for a queue file that was never made (no entry was
	// ever queued there): an empty queue.
	Exists bool `json:"exists"`
	// Pending counts the entries not delivered yet; Runs the runs they
	// belong to.
	Pending int `json:"pending"`
	Runs    int `json:"runs"`
	// BaseURL and KeyID name the service and API key (its public id) a
	// default queue file belongs to (its <path>.meta.json, written when a
	// Pipeline makes it); empty when not known.
	BaseURL string `json:"base_url,omitempty"`
	KeyID   string `json:"key_id,omitempty"`
}

// queueMeta is the sidecar <queue>.meta.json of a default queue file: the
// service and key it is keyed by (its name is a one-way hash of them).
type queueMeta struct {
	BaseURL string `json:"base_url"`
	KeyID   string `json:"key_id"`
}

func metaPath(queuePath string) string { return queuePath + ".meta.json" }

// writeQueueMeta writes the sidecar of a default queue file if it has
// none (best effort: it only helps 'svc queue status' name the service).
func writeQueueMeta(queuePath, baseURL, keyID string) {
	if _, err := os.Stat(metaPath(queuePath)); err == nil {
		return
	}
	b, err := json.Marshal(queueMeta{BaseURL: baseURL, KeyID: keyID})
	if err != nil {
		return
	}
	_ = os.WriteFile(metaPath(queuePath), append(b, '\n'), 0o600)
}

// ReadQueue reads the queue file at path without creating, locking or
// changing anything (what a Pipeline does on open: cut a torn line, move
// unreadable lines aside, is left to the next one). A file that does not
// exist is an empty queue.
func ReadQueue(path string) (QueueInfo, error) {
	info := QueueInfo{Path: path}
	if b, err := os.ReadFile(metaPath(path)); err == nil {
		var m queueMeta
		if json.Unmarshal(b, &m) == nil {
			info.BaseURL, info.KeyID = m.BaseURL, m.KeyID
		}
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return info, fmt.Errorf("svc client: read queue %s: %w", path, err)
	}
	info.Exists = true
	data = data[:bytes.LastIndexByte(data, '\n')+1] // a torn last line was never queued
	var offset int64
	if b, err := os.ReadFile(path + ".offset"); err == nil {
		if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil && n > 0 {
			offset = n
		}
	}
	pending, _, boundary := parseEntries(data, offset)
	if !boundary || offset > int64(len(data)) {
		pending, _, _ = parseEntries(data, 0) // the sidecar does not match the file
	}
	runs := map[string]bool{}
	for _, e := range pending {
		runs[e.RunID] = true
	}
	info.Pending, info.Runs = len(pending), len(runs)
	return info, nil
}

// DefaultQueueDir is the directory of the default queue files
// (DefaultQueuePath), one per base URL and API key.
func DefaultQueueDir() string { return filepath.Dir(DefaultQueuePath("", "")) }

// DefaultQueues reads every default queue file in DefaultQueueDir (with
// ReadQueue: nothing is created or changed), ordered by path.
func DefaultQueues() ([]QueueInfo, error) {
	paths, err := filepath.Glob(filepath.Join(DefaultQueueDir(), "queue-*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []QueueInfo
	for _, p := range paths {
		if strings.HasSuffix(p, ".rejected.jsonl") {
			continue
		}
		info, err := ReadQueue(p)
		if err != nil {
			return out, err
		}
		out = append(out, info)
	}
	return out, nil
}

// QueueStatus is the queue a Pipeline made with some Options uses, read
// without opening it, and the other default queue files that hold
// entries (records queued against another base URL or with another key,
// which that Pipeline would never deliver).
type QueueStatus struct {
	QueueInfo
	Others []QueueInfo `json:"others"`
}

// StatusOf reads the queue a Pipeline made with opts would use and lists
// the other default queue files holding entries; it creates, locks and
// changes nothing. Without an API key (and no opts.QueuePath) the own
// queue is unknown (Path ""): every default queue holding entries is in
// Others.
func StatusOf(opts Options) (QueueStatus, error) {
	var st QueueStatus
	path, err := QueuePathFor(opts)
	switch {
	case errors.Is(err, ErrNoAPIKey):
	case err != nil:
		return st, err
	default:
		if st.QueueInfo, err = ReadQueue(path); err != nil {
			return st, err
		}
	}
	all, err := DefaultQueues()
	if err != nil {
		return st, err
	}
	st.Others = []QueueInfo{}
	for _, q := range all {
		if q.Pending > 0 && !sameFile(q.Path, path) {
			st.Others = append(st.Others, q)
		}
	}
	return st, nil
}

func sameFile(a, b string) bool {
	if b == "" {
		return false
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
