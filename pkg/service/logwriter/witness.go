package logwriter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/tlog"
	"golang.org/x/mod/sumdb/note"
)

// WitnessEvent is the outcome of sending one checkpoint to one witness
// (C2SP tlog-witness add-checkpoint, with the protocol's retries).
type WitnessEvent struct {
	// Witness is the witness's key name; URL its add-checkpoint endpoint.
	Witness, URL string
	// CheckpointSize is the size of the checkpoint sent.
	CheckpointSize uint64
	// Status is the last HTTP status, 0 when there was no answer.
	Status int
	// Time is when the outcome was known.
	Time time.Time
	// Err is nil when the witness cosigned, or when it had already
	// cosigned a larger checkpoint of this log than the one sent (another
	// process of the log sent it one; Stale is then true). Otherwise it
	// matches one of ErrWitnessUnreachable, ErrWitnessConflict,
	// ErrWitnessRejected.
	Err error
	// Stale reports a witness ahead of the checkpoint sent.
	Stale bool
}

// maxWitnessAnswer bounds a witness's answer body.
const maxWitnessAnswer = 64 << 10

// witnessClient is the log's view of one witness: where to send
// checkpoints, the key its cosignatures verify with, and the size of the
// checkpoint it last cosigned (0 until it says; the protocol tells a
// client that guessed wrong).
type witnessClient struct {
	name string
	url  string
	v    note.Verifier
	hc   *http.Client
	sem  chan struct{} // one request at a time per witness
	size uint64        // guarded by sem
}

// cosign sends checkpoint cp (size entries, sorted signature lines) to the
// witness with a consistency proof from the size it last cosigned, and
// returns its cosignature lines. latest reports the size of the log's
// latest checkpoint, proof builds consistency proofs.
func (w *witnessClient) cosign(ctx context.Context, cp []byte, size uint64, latest func() uint64,
	proof func(ctx context.Context, from, to uint64) ([][]byte, error)) ([]string, WitnessEvent) {
	ev := WitnessEvent{Witness: w.name, URL: w.url, CheckpointSize: size}
	done := func(err error) ([]string, WitnessEvent) {
		ev.Time, ev.Err = time.Now(), err
		return nil, ev
	}
	select {
	case w.sem <- struct{}{}:
		defer func() { <-w.sem }()
	case <-ctx.Done():
		return done(fmt.Errorf("%w: %s: still answering the previous checkpoint: %v", ErrWitnessUnreachable, w.name, context.Cause(ctx)))
	}
	for try := 0; try < 3; try++ {
		old := w.size
		if old > size {
			old = 0 // ask it again: it says its size
		}
		var body bytes.Buffer
		fmt.Fprintf(&body, "old %d\n", old)
		if old > 0 && old < size {
			p, err := proof(ctx, old, size)
			if err != nil {
				return done(fmt.Errorf("witness %s: consistency proof %d→%d from the log's tiles: %w", w.name, old, size, err))
			}
			body.Write(tlog.MarshalProof(p))
		}
		body.WriteByte('\n')
		body.Write(cp)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, &body)
		if err != nil {
			return done(fmt.Errorf("%w: %s: %v", ErrWitnessRejected, w.name, err))
		}
		resp, err := w.hc.Do(req)
		if err != nil {
			return done(fmt.Errorf("%w: %s at %s: %v", ErrWitnessUnreachable, w.name, w.url, err))
		}
		answer, rerr := io.ReadAll(io.LimitReader(resp.Body, maxWitnessAnswer))
		resp.Body.Close()
		ev.Status = resp.StatusCode
		if rerr != nil {
			return done(fmt.Errorf("%w: %s: reading the answer: %v", ErrWitnessUnreachable, w.name, rerr))
		}
		switch resp.StatusCode {
		case http.StatusOK:
			lines, err := w.cosignatures(cp, answer)
			if err != nil {
				return done(err)
			}
			w.size = size
			ev.Time = time.Now()
			return lines, ev
		case http.StatusConflict:
			if resp.Header.Get("Content-Type") != "text/x.tlog.size" {
				return done(fmt.Errorf("%w: %s (409) has cosigned a checkpoint of this log of the same size with a different root hash: a split view", ErrWitnessConflict, w.name))
			}
			theirs, err := strconv.ParseUint(strings.TrimSuffix(string(answer), "\n"), 10, 64)
			if err != nil {
				return done(fmt.Errorf("%w: %s answered 409 with an unreadable size %q", ErrWitnessRejected, w.name, clip(answer)))
			}
			if theirs > size {
				if theirs <= latest() {
					ev.Stale = true // another process sent it a newer checkpoint
					return done(nil)
				}
				return done(fmt.Errorf("%w: %s has cosigned %d entries of this log, more than its latest checkpoint's %d: the log was rolled back or forked", ErrWitnessConflict, w.name, theirs, latest()))
			}
			if theirs == old {
				return done(fmt.Errorf("%w: %s answered 409 with the size it was sent (%d)", ErrWitnessRejected, w.name, theirs))
			}
			w.size = theirs // and send it again with a proof from there
		case http.StatusUnprocessableEntity:
			return done(fmt.Errorf("%w: %s (422) rejected the consistency proof from the checkpoint it cosigned last (%d entries): the log's history differs from the one it saw", ErrWitnessConflict, w.name, old))
		case http.StatusNotFound:
			return done(fmt.Errorf("%w: %s (404) does not know this log's origin: add the log (origin and key) to the witness's configuration", ErrWitnessRejected, w.name))
		case http.StatusForbidden:
			return done(fmt.Errorf("%w: %s (403) does not trust this log's key: give the witness the log's verifier key", ErrWitnessRejected, w.name))
		default:
			return done(fmt.Errorf("%w: %s answered HTTP %d", ErrWitnessRejected, w.name, resp.StatusCode))
		}
	}
	return done(fmt.Errorf("%w: %s kept answering 409 with other sizes", ErrWitnessRejected, w.name))
}

// cosignatures checks a 200 answer: signature lines of which at least
// one, by the witness's key, verifies over cp's text. It returns the
// witness's lines.
func (w *witnessClient) cosignatures(cp, answer []byte) ([]string, error) {
	n, err := note.Open(append(bytes.Clone(cp), answer...), note.VerifierList(w.v))
	if err != nil {
		return nil, fmt.Errorf("%w: %s answered with a cosignature that does not verify with its key: %v", ErrWitnessRejected, w.name, err)
	}
	var lines []string
	for _, s := range n.Sigs {
		if s.Name == w.v.Name() && s.Hash == w.v.KeyHash() {
			lines = append(lines, "\u2014 "+s.Name+" "+s.Base64)
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: %s answered without its cosignature", ErrWitnessRejected, w.name)
	}
	return lines, nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}
