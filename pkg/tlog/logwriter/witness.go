package logwriter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/tlog"
)

// WitnessEvent is one answer of a witness to a checkpoint the log sent it
// (C2SP tlog-witness add-checkpoint), or the failure to get one.
type WitnessEvent struct {
	// Witness is the witness's key name; URL its add-checkpoint endpoint.
	Witness, URL string
	// CheckpointSize is the size of the checkpoint sent.
	CheckpointSize uint64
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// Time is when the answer came.
	Time time.Time
	// Err is nil for a cosignature (200) or for the protocol's "tell me
	// your size" exchange (409 with the witness's size, which the log
	// follows with a consistency proof); else it matches one of
	// ErrWitnessUnreachable, ErrWitnessConflict, ErrWitnessRejected.
	Err error
}

// witnessWatch is the HTTP transport Tessera's witness client goes
// through: it passes every request on unchanged and reports what each
// witness answered, which Tessera itself only logs.
type witnessWatch struct {
	base  http.RoundTripper
	names map[string]string // add-checkpoint URL → witness name
	on    func(WitnessEvent)

	mu     sync.Mutex
	last   map[string]WitnessEvent
	counts map[error]uint64
}

func newWitnessWatch(base http.RoundTripper, p *tlog.WitnessPolicy, on func(WitnessEvent)) *witnessWatch {
	w := &witnessWatch{base: base, names: map[string]string{}, on: on, last: map[string]WitnessEvent{}, counts: map[error]uint64{}}
	if p != nil {
		for _, pw := range p.Witnesses() {
			w.names[pw.URL] = pw.Name
		}
	}
	return w
}

func (w *witnessWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	name, ok := w.names[req.URL.String()]
	if !ok {
		return w.base.RoundTrip(req)
	}
	ev := WitnessEvent{Witness: name, URL: req.URL.String(), CheckpointSize: requestSize(req)}
	resp, err := w.base.RoundTrip(req)
	ev.Time = time.Now()
	if err != nil {
		ev.Err = fmt.Errorf("%w: %s at %s: %v", ErrWitnessUnreachable, name, ev.URL, err)
		w.record(ev)
		return resp, err
	}
	ev.Status = resp.StatusCode
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusConflict:
		if resp.Header.Get("Content-Type") == "text/x.tlog.size" {
			body, rerr := io.ReadAll(io.LimitReader(resp.Body, 64))
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			theirs, perr := strconv.ParseUint(strings.TrimSpace(string(body)), 10, 64)
			switch {
			case rerr != nil || perr != nil:
				ev.Err = fmt.Errorf("%w: %s answered 409 with an unreadable size %q", ErrWitnessRejected, name, body)
			case theirs > ev.CheckpointSize:
				ev.Err = fmt.Errorf("%w: %s has cosigned %d entries of this log, more than this checkpoint's %d: the log was rolled back or forked", ErrWitnessConflict, name, theirs, ev.CheckpointSize)
			}
			break
		}
		ev.Err = fmt.Errorf("%w: %s (409) has cosigned a checkpoint of this log of the same size with a different root hash: a split view", ErrWitnessConflict, name)
	case http.StatusUnprocessableEntity:
		ev.Err = fmt.Errorf("%w: %s (422) rejected the consistency proof from the checkpoint it cosigned last: the log's history differs from the one it saw", ErrWitnessConflict, name)
	case http.StatusNotFound:
		ev.Err = fmt.Errorf("%w: %s (404) does not know this log's origin: add the log (origin and key) to the witness's configuration", ErrWitnessRejected, name)
	case http.StatusForbidden:
		ev.Err = fmt.Errorf("%w: %s (403) does not trust this log's key: give the witness the log's verifier key", ErrWitnessRejected, name)
	default:
		ev.Err = fmt.Errorf("%w: %s answered HTTP %d", ErrWitnessRejected, name, resp.StatusCode)
	}
	w.record(ev)
	return resp, nil
}

func (w *witnessWatch) record(ev WitnessEvent) {
	w.mu.Lock()
	w.last[ev.Witness] = ev
	if ev.Err != nil {
		for _, class := range []error{ErrWitnessUnreachable, ErrWitnessConflict, ErrWitnessRejected} {
			if errors.Is(ev.Err, class) {
				w.counts[class]++
			}
		}
	}
	w.mu.Unlock()
	if w.on != nil {
		w.on(ev)
	}
}

// failures joins the last failure of each witness whose last answer was
// one.
func (w *witnessWatch) failures() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(w.last)) {
		if e := w.last[name].Err; e != nil {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

func (w *witnessWatch) snapshot() (map[error]uint64, []WitnessEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	counts := map[error]uint64{}
	for k, v := range w.counts {
		counts[k] = v
	}
	var last []WitnessEvent
	for _, name := range slices.Sorted(maps.Keys(w.last)) {
		last = append(last, w.last[name])
	}
	return counts, last
}

// requestSize reads the size of the checkpoint in an add-checkpoint
// request body ("old N", proof lines, a blank line, the checkpoint).
func requestSize(req *http.Request) uint64 {
	if req.GetBody == nil {
		return 0
	}
	rc, err := req.GetBody()
	if err != nil {
		return 0
	}
	defer rc.Close()
	body, err := io.ReadAll(io.LimitReader(rc, tlog.MaxCheckpointBytes+8<<10))
	if err != nil {
		return 0
	}
	_, cp, ok := strings.Cut(string(body), "\n\n")
	if !ok {
		return 0
	}
	lines := strings.SplitN(cp, "\n", 3)
	if len(lines) < 2 {
		return 0
	}
	n, _ := strconv.ParseUint(lines[1], 10, 64)
	return n
}
