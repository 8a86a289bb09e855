package logwriter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/transparency-dev/tessera/client"
)

// cosigner sends each new checkpoint of the log to the witness policy's
// witnesses over the C2SP tlog-witness protocol, apart from Tessera's
// publishing (so a slow or absent witness never holds up sequencing or
// publishing), and keeps the newest checkpoint whose cosignatures satisfy
// the policy, for receipts and for the served checkpoint.
type cosigner struct {
	l         *Log
	pv        *tlog.Verifier
	witnesses []*witnessClient
	on        func(WitnessEvent)
	timeout   time.Duration
	retry     time.Duration
	republish time.Duration

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced when the state below changes
	best      []byte        // newest checkpoint that satisfies the policy
	bestSize  uint64        // its size; 0 with best nil
	tried     uint64        // size of the newest checkpoint whose attempt finished
	triedNote []byte        // that attempt's checkpoint, cosigned as far as it got
	triedErr  error         // why it did not satisfy the policy (nil if it did)
	last      map[string]WitnessEvent
	counts    map[error]uint64
}

func newCosigner(l *Log, p *tlog.WitnessPolicy, hc *http.Client, on func(WitnessEvent), timeout, retry, republish time.Duration) (*cosigner, error) {
	pv, err := tlog.NewVerifier(l.key, p)
	if err != nil {
		return nil, err
	}
	c := &cosigner{l: l, pv: pv, on: on, timeout: timeout, retry: retry, republish: republish,
		changed: make(chan struct{}), last: map[string]WitnessEvent{}, counts: map[error]uint64{}}
	for _, w := range p.Witnesses() {
		v, ok := p.Verifier(w.Name)
		if !ok {
			return nil, fmt.Errorf("witness policy: no key for witness %s", w.Name)
		}
		c.witnesses = append(c.witnesses, &witnessClient{name: w.Name, url: w.URL, v: v, hc: hc, sem: make(chan struct{}, 1)})
	}
	return c, nil
}

// run attempts each new checkpoint, retries one that did not satisfy the
// policy every retry interval, and sends an unchanged one again every
// republish interval, until ctx ends.
func (c *cosigner) run(ctx context.Context, poll time.Duration) {
	t := time.NewTicker(poll)
	defer t.Stop()
	var lastNote []byte
	var lastAt time.Time
	lastOK := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cp, size, err := c.l.latest(ctx)
		if err != nil {
			continue
		}
		since := time.Since(lastAt)
		if bytes.Equal(cp, lastNote) && (lastOK || since < c.retry) && since < c.republish {
			continue
		}
		note, err := c.attempt(ctx, cp, size)
		if ctx.Err() != nil {
			return
		}
		lastNote, lastAt, lastOK = cp, time.Now(), err == nil
		c.record(note, size, err)
	}
}

// attempt sends cp to every witness at once and returns as soon as the
// cosignatures received satisfy the policy, or once every witness has
// answered or WitnessTimeout has passed (then with the reason).
func (c *cosigner) attempt(ctx context.Context, cp []byte, size uint64) ([]byte, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	var pbMu sync.Mutex
	var pb *client.ProofBuilder
	proof := func(ctx context.Context, from, to uint64) ([][]byte, error) {
		pbMu.Lock()
		defer pbMu.Unlock()
		if pb == nil {
			var err error
			if pb, err = client.NewProofBuilder(ctx, to, c.l.reader.ReadTile); err != nil {
				return nil, err
			}
		}
		return pb.ConsistencyProof(ctx, from, to)
	}
	latest := func() uint64 {
		_, s, err := c.l.latest(ctx)
		if err != nil {
			return size
		}
		return max(s, size)
	}
	type result struct {
		lines []string
		ev    WitnessEvent
	}
	results := make(chan result, len(c.witnesses))
	var wg sync.WaitGroup
	for _, w := range c.witnesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines, ev := w.cosign(actx, cp, size, latest, proof)
			c.event(ev)
			results <- result{lines, ev}
		}()
	}
	go func() { wg.Wait(); cancel() }() // the stragglers' answers still count as events

	note := cp
	var errs []error
	for range c.witnesses {
		r := <-results
		if r.ev.Err != nil {
			errs = append(errs, r.ev.Err)
		}
		if len(r.lines) == 0 {
			continue
		}
		with, err := tlog.SortSignatures([]byte(string(note) + strings.Join(r.lines, "\n") + "\n"))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrWitnessRejected, r.ev.Witness, err))
			continue
		}
		note = with
		if _, err := c.pv.VerifyCheckpoint(note); err == nil {
			return note, nil
		}
	}
	_, perr := c.pv.VerifyCheckpoint(note)
	if perr == nil {
		return note, nil
	}
	if len(errs) == 0 && ctx.Err() == nil {
		errs = append(errs, fmt.Errorf("the witnesses that answered had cosigned a newer checkpoint of this log already"))
	}
	return note, errors.Join(append([]error{perr}, errs...)...)
}

func (c *cosigner) event(ev WitnessEvent) {
	c.mu.Lock()
	c.last[ev.Witness] = ev
	for _, class := range []error{ErrWitnessUnreachable, ErrWitnessConflict, ErrWitnessRejected} {
		if errors.Is(ev.Err, class) {
			c.counts[class]++
		}
	}
	c.mu.Unlock()
	if c.on != nil {
		c.on(ev)
	}
}

func (c *cosigner) record(note []byte, size uint64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && size >= c.bestSize {
		c.best, c.bestSize = note, size
	}
	if size >= c.tried {
		c.tried, c.triedNote, c.triedErr = size, note, err
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// state is a snapshot of the cosigner's results.
type cosignState struct {
	best      []byte
	bestSize  uint64
	tried     uint64
	triedNote []byte
	triedErr  error
	changed   <-chan struct{}
}

// covering returns the checkpoint a receipt for index is built against
// from these results: the newest cosigned one if it covers index, else
// the last one tried if it does (with why it lacks cosignatures); ok is
// false when neither covers index yet.
func (s cosignState) covering(index uint64) (cp []byte, cause error, ok bool) {
	switch {
	case s.bestSize > index:
		return s.best, nil, true
	case s.tried > index:
		return s.triedNote, s.triedErr, true
	}
	return nil, nil, false
}

func (c *cosigner) state() cosignState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cosignState{c.best, c.bestSize, c.tried, c.triedNote, c.triedErr, c.changed}
}

func (c *cosigner) snapshot() (map[error]uint64, []WitnessEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var last []WitnessEvent
	for _, name := range slices.Sorted(maps.Keys(c.last)) {
		last = append(last, c.last[name])
	}
	return maps.Clone(c.counts), last
}
