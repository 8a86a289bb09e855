package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"

	"github.com/svc-gov/svc/internal/fsutil"
)

// Kinds of queue entries.
const (
	kindOpen   = "open"
	kindRecord = "record"
	kindClose  = "close"
)

// entry is one line of the queue file: a request to replay, in order.
type entry struct {
	Kind  string          `json:"kind"`
	RunID string          `json:"run_id"`
	Body  json.RawMessage `json:"body,omitempty"`
	// end is the file offset just past this entry's line.
	end int64
	// recordID is the record's id (records only), for error reports.
	recordID string
}

// queue is the durable local queue: a JSON-lines file of entries waiting
// for the service, appended and fsynced before a caller is told an entry
// is queued. Delivered entries are skipped by a byte offset kept in the
// sidecar file <path>.offset (written atomically); when every entry is
// delivered the file is truncated to empty. A torn last line (a write cut
// by a crash) is cut off when the queue is opened; complete lines before it
// are kept.
type queue struct {
	path string

	mu        sync.Mutex
	f         *os.File
	size      int64 // bytes in the file
	delivered int64 // offset of the first undelivered byte
	persisted int64 // delivered offset last written to the sidecar
	pending   []entry
	perRun    map[string]int
	// failedRuns are runs whose queued open the service refused: their
	// later entries cannot be delivered either.
	failedRuns map[string]bool
}

// openQueues guards against two Pipelines of one process sharing a queue
// file on systems where file locks are per process.
var openQueues sync.Map

func openQueue(path string) (*queue, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("svc client: queue path %s: %w", path, err)
	}
	if _, loaded := openQueues.LoadOrStore(abs, true); loaded {
		return nil, fmt.Errorf("%w: %s is already open in this process (one Pipeline per queue file; set Options.QueuePath)", ErrQueueLocked, abs)
	}
	q, err := loadQueue(abs)
	if err != nil {
		openQueues.Delete(abs)
		return nil, err
	}
	return q, nil
}

func loadQueue(path string) (*queue, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("svc client: queue directory: %w", err)
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("svc client: open queue: %w", err)
	}
	if err := fsutil.LockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v (one Pipeline per queue file; set Options.QueuePath)", ErrQueueLocked, path, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		syncDir(dir)
	}
	q := &queue{path: path, f: f, perRun: map[string]int{}, failedRuns: map[string]bool{}}
	if err := q.load(); err != nil {
		fsutil.UnlockFile(f)
		f.Close()
		return nil, err
	}
	return q, nil
}

// load reads the file: it cuts a torn last line, skips delivered entries
// and moves unreadable lines to the dead-letter file.
func (q *queue) load() error {
	data, err := io.ReadAll(q.f)
	if err != nil {
		return fmt.Errorf("svc client: read queue %s: %w", q.path, err)
	}
	complete := int64(bytes.LastIndexByte(data, '\n') + 1)
	if complete < int64(len(data)) {
		// A write cut short by a crash: it was never reported queued.
		if err := q.f.Truncate(complete); err != nil {
			return fmt.Errorf("svc client: cut torn line of queue %s: %w", q.path, err)
		}
		if err := q.f.Sync(); err != nil {
			return fmt.Errorf("svc client: sync queue %s: %w", q.path, err)
		}
		data = data[:complete]
	}
	q.size = complete
	offset := q.readOffset()
	pending, bad, boundary := parseEntries(data, offset)
	for _, e := range pending {
		q.pending = append(q.pending, e)
		q.perRun[e.RunID]++
	}
	if !boundary || offset > q.size {
		// The sidecar does not match the file (it was truncated after a
		// full flush and the sidecar not yet reset): all lines are new.
		q.pending, q.perRun, bad = nil, map[string]int{}, nil
		q.persisted = -1
		q.delivered = 0
		return q.reload()
	}
	q.delivered, q.persisted = offset, offset
	for _, line := range bad {
		q.deadLetter(line, "unreadable queue line")
	}
	if len(q.pending) == 0 {
		return q.compact()
	}
	return nil
}

// parseEntries parses the complete lines of a queue file (data ends with a
// newline or is empty) past the delivered offset: the pending entries,
// the lines that are no entry, and whether offset falls on a line
// boundary (if not, the sidecar does not match the file).
func parseEntries(data []byte, offset int64) (pending []entry, bad [][]byte, boundary bool) {
	boundary = offset == 0
	var pos int64
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		line := data[:i]
		data = data[i+1:]
		pos += int64(i + 1)
		if pos == offset {
			boundary = true
		}
		if pos <= offset {
			continue
		}
		var e entry
		if err := json.Unmarshal(line, &e); err != nil || e.RunID == "" || (e.Kind != kindOpen && e.Kind != kindRecord && e.Kind != kindClose) ||
			(e.Kind != kindClose && len(e.Body) == 0) {
			bad = append(bad, line)
			continue
		}
		e.end = pos
		e.recordID = recordIDOf(e)
		pending = append(pending, e)
	}
	return pending, bad, boundary
}

// reload parses the whole file again with offset 0.
func (q *queue) reload() error {
	if _, err := q.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := q.writeOffset(0); err != nil {
		return err
	}
	return q.load()
}

func recordIDOf(e entry) string {
	if e.Kind != kindRecord {
		return ""
	}
	var r struct {
		RecordID string `json:"record_id"`
	}
	json.Unmarshal(e.Body, &r)
	return r.RecordID
}

func (q *queue) offsetPath() string     { return q.path + ".offset" }
func (q *queue) deadLetterPath() string { return q.path + ".rejected.jsonl" }

func (q *queue) readOffset() int64 {
	b, err := os.ReadFile(q.offsetPath())
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// writeOffset replaces the sidecar atomically: temp file, fsync, rename.
func (q *queue) writeOffset(n int64) error {
	if n == q.persisted {
		return nil
	}
	if n == 0 {
		if err := os.Remove(q.offsetPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("svc client: reset queue offset: %w", err)
		}
		q.persisted = 0
		return nil
	}
	dir := filepath.Dir(q.path)
	tmp, err := os.CreateTemp(dir, filepath.Base(q.offsetPath())+".tmp-*")
	if err != nil {
		return fmt.Errorf("svc client: write queue offset: %w", err)
	}
	_, err = tmp.WriteString(strconv.FormatInt(n, 10) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), q.offsetPath())
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("svc client: write queue offset: %w", err)
	}
	syncDir(dir)
	q.persisted = n
	return nil
}

// encodeLine writes an entry as one JSON line.
func encodeLine(kind, runID string, body []byte) []byte {
	id, _ := json.Marshal(runID)
	line := make([]byte, 0, len(body)+len(id)+40)
	line = append(line, `{"kind":"`...)
	line = append(line, kind...)
	line = append(line, `","run_id":`...)
	line = append(line, id...)
	if body != nil {
		line = append(line, `,"body":`...)
		line = append(line, body...)
	}
	return append(line, "}\n"...)
}

// append writes an entry and fsyncs it: when it returns nil the entry
// survives a crash of the process. On error the file is rolled back.
func (q *queue) append(kind, runID string, body []byte) error {
	line := encodeLine(kind, runID, body)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.f == nil {
		return ErrPipelineClosed
	}
	_, err := q.f.Write(line)
	if err == nil {
		err = q.f.Sync()
	}
	if err != nil {
		q.f.Truncate(q.size)
		return fmt.Errorf("svc client: write queue %s: %w", q.path, err)
	}
	q.size += int64(len(line))
	e := entry{Kind: kind, RunID: runID, Body: body, end: q.size}
	e.recordID = recordIDOf(e)
	q.pending = append(q.pending, e)
	q.perRun[runID]++
	return nil
}

// head returns the first undelivered entry.
func (q *queue) head() (entry, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		return entry{}, false
	}
	return q.pending[0], true
}

// headRecords returns the record entries of run runID at the head of the
// queue, in order, as many as one batch request takes (chunkBatch).
func (q *queue) headRecords(runID string) []entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := 0
	for k < len(q.pending) && k < api.MaxBatchRecords && q.pending[k].Kind == kindRecord && q.pending[k].RunID == runID {
		k++
	}
	if k == 0 {
		return nil
	}
	chunks := chunkBatch(k, func(i int) int { return len(q.pending[i].Body) })
	return append([]entry(nil), q.pending[:chunks[0][1]]...)
}

// pop removes the head entry e after it was delivered or dead-lettered.
func (q *queue) pop(e entry) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 || q.pending[0].end != e.end {
		return
	}
	q.pending[0] = entry{}
	q.pending = q.pending[1:]
	if len(q.pending) == 0 {
		q.pending = nil
	}
	if q.perRun[e.RunID]--; q.perRun[e.RunID] <= 0 {
		delete(q.perRun, e.RunID)
	}
	q.delivered = e.end
}

// reject moves the head entry e to the dead-letter file and pops it.
func (q *queue) reject(e entry, reason error) {
	q.deadLetter(encodeLine(e.Kind, e.RunID, e.Body), reason.Error())
	q.mu.Lock()
	if e.Kind == kindOpen {
		q.failedRuns[e.RunID] = true
	}
	q.mu.Unlock()
	q.pop(e)
}

func (q *queue) runFailed(runID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failedRuns[runID]
}

// deadLetter appends a line and the reason to <path>.rejected.jsonl.
func (q *queue) deadLetter(line []byte, reason string) {
	rec, _ := json.Marshal(map[string]any{
		"rejected_at": time.Now().UTC().Format(time.RFC3339Nano),
		"reason":      reason,
		"entry":       json.RawMessage(bytes.TrimSpace(line)),
	})
	if !json.Valid(bytes.TrimSpace(line)) {
		rec, _ = json.Marshal(map[string]any{
			"rejected_at": time.Now().UTC().Format(time.RFC3339Nano),
			"reason":      reason,
			"raw":         string(line),
		})
	}
	f, err := os.OpenFile(q.deadLetterPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	f.Write(append(rec, '\n'))
	f.Sync()
	f.Close()
}

// count is the number of undelivered entries; pendingFor those of one run.
func (q *queue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

func (q *queue) pendingFor(runID string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.perRun[runID]
}

// persist records progress: it truncates the file when everything is
// delivered, else writes the delivered offset to the sidecar.
func (q *queue) persist() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.f == nil {
		return nil
	}
	if len(q.pending) == 0 {
		return q.compact()
	}
	return q.writeOffset(q.delivered)
}

// compact empties the file once every entry is delivered. The caller holds
// q.mu (or has q to itself).
func (q *queue) compact() error {
	if q.size > 0 {
		if err := q.f.Truncate(0); err != nil {
			return fmt.Errorf("svc client: compact queue: %w", err)
		}
		if err := q.f.Sync(); err != nil {
			return fmt.Errorf("svc client: compact queue: %w", err)
		}
	}
	q.size, q.delivered = 0, 0
	return q.writeOffset(0)
}

// close records progress, releases the lock and closes the file.
func (q *queue) close() error {
	err := q.persist()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.f == nil {
		return nil
	}
	fsutil.UnlockFile(q.f)
	if cerr := q.f.Close(); err == nil {
		err = cerr
	}
	q.f = nil
	openQueues.Delete(q.path)
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
