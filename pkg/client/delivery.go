package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
)

// SealedRun is a run whose queued close a flush delivered, and the id of
// the VPEC the service issued for it (empty if the service did not say).
type SealedRun struct {
	RunID  string `json:"run_id"`
	VPECID string `json:"vpec_id"`
}

// FlushResult is what Flush delivered.
type FlushResult struct {
	// Delivered counts the entries delivered (opens, records, closes).
	Delivered int `json:"delivered"`
	// Sealed lists the runs whose close was delivered, in order.
	Sealed []SealedRun `json:"sealed"`
}

// PendingQueueCount is the number of entries (run opens, records, closes)
// waiting in the local queue.
func (p *Pipeline) PendingQueueCount() (int, error) {
	if err := p.enter(); err != nil {
		return 0, err
	}
	defer p.exit()
	return p.q.count(), nil
}

// FlushQueue delivers every queued entry in order and returns how many were
// delivered (a duplicate the service already held counts as delivered).
// It tries even while the service is believed down. Each request is bounded
// by Options.Timeout; the whole flush by ctx only. It stops at the first
// unreachable answer (the error wraps ErrUnavailable); entries the service
// refuses for good are moved to the dead-letter file and reported by a
// *RejectedError (errors.Is(err, ErrRejected)) after the rest is delivered.
// Flush does the same and names each run it sealed.
func (p *Pipeline) FlushQueue(ctx context.Context) (int, error) {
	res, err := p.Flush(ctx)
	return res.Delivered, err
}

// Flush is FlushQueue reporting each run whose queued close it delivered,
// with the id of the VPEC the service issued (fetch it with FetchVPEC).
func (p *Pipeline) Flush(ctx context.Context) (FlushResult, error) {
	var res FlushResult
	if err := p.enter(); err != nil {
		return res, err
	}
	defer p.exit()
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case p.flushSem <- struct{}{}:
	case <-ctx.Done():
		return res, fmt.Errorf("svc client: flush: %w", ctx.Err())
	}
	defer func() { <-p.flushSem }()
	var err error
	res.Delivered, err = p.flushLocked(ctx, nil, &res.Sealed)
	for i := range res.Sealed {
		if s := &res.Sealed[i]; s.VPECID == "" {
			// The service had sealed the run before (a duplicate close):
			// ask it which VPEC it issued.
			s.VPECID, _ = p.issuedID(ctx, s.RunID)
		}
	}
	return res, err
}

// autoFlush delivers queued entries at the start of a call, when the
// service is believed up, within half the call's budget. It never waits
// for another flusher.
func (p *Pipeline) autoFlush(ctx context.Context) {
	if p.down.Load() || p.q.count() == 0 {
		return
	}
	select {
	case p.flushSem <- struct{}{}:
	default:
		return
	}
	defer func() { <-p.flushSem }()
	budget := p.timeout / 2
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2)
	}
	fctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	if _, err := p.flushLocked(fctx, nil, nil); err != nil && !unreachable(err) {
		p.reportFlushError(err)
	}
}

// backgroundFlush drains the queue after the service came back, so a
// backlog is delivered without waiting for (or slowing) the host's calls.
// It runs on the prober's goroutine and stops when the Pipeline closes.
func (p *Pipeline) backgroundFlush() {
	if p.q.count() == 0 {
		return
	}
	select {
	case p.flushSem <- struct{}{}:
	default:
		return // a call is flushing
	}
	defer func() { <-p.flushSem }()
	if _, err := p.flushLocked(p.ctx, nil, nil); err != nil && !unreachable(err) {
		p.reportFlushError(err)
	}
}

func (p *Pipeline) reportFlushError(err error) {
	if p.onFlushErr != nil && err != nil {
		p.onFlushErr(err)
	}
}

// flushFor delivers queued entries until none of run runID is left.
func (p *Pipeline) flushFor(ctx context.Context, runID string) error {
	if p.q.pendingFor(runID) == 0 {
		return nil
	}
	if p.down.Load() {
		return fmt.Errorf("%w: %d entries of run %s wait in the local queue", ErrUnavailable, p.q.pendingFor(runID), runID)
	}
	select {
	case p.flushSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for the queue: %w", ErrUnavailable, ctx.Err())
	}
	defer func() { <-p.flushSem }()
	_, err := p.flushLocked(ctx, func() bool { return p.q.pendingFor(runID) == 0 }, nil)
	if n := p.q.pendingFor(runID); n > 0 {
		if err == nil {
			err = ErrUnavailable
		}
		return fmt.Errorf("svc client: %d entries of run %s could not be delivered: %w", n, runID, err)
	}
	// The run's entries are through; report refusals on the way.
	p.reportFlushError(err)
	return nil
}

// flushLocked delivers queued entries in order until the queue is empty,
// until() holds, the service is unreachable or ctx ends. The caller holds
// flushSem. Entries the service refuses for good go to the dead-letter
// file and are reported in a *RejectedError; delivery goes on after them.
// Each run whose close it delivers is appended to sealed, if not nil.
func (p *Pipeline) flushLocked(ctx context.Context, until func() bool, sealed *[]SealedRun) (n int, err error) {
	var rejected []RejectedEntry
	defer func() {
		if perr := p.q.persist(); perr != nil && err == nil {
			err = perr
		}
		if len(rejected) > 0 {
			rerr := &RejectedError{Entries: rejected, DeadLetterPath: p.q.deadLetterPath()}
			if err == nil {
				err = rerr
			} else {
				err = errors.Join(err, rerr)
			}
		}
		if n > 0 || len(rejected) > 0 {
			p.markUp()
		}
	}()
	var single int64 // entries ending at or before this offset go one by one
	for {
		if until != nil && until() {
			return n, nil
		}
		e, ok := p.q.head()
		if !ok {
			return n, nil
		}
		if e.Kind == kindRecord && e.end > single && !p.noBatch.Load() && !p.q.runFailed(e.RunID) {
			group := p.q.headRecords(e.RunID)
			if limit := p.batchSize(); len(group) > limit {
				group = group[:limit]
			}
			if len(group) > 1 {
				derr := p.deliverBatch(ctx, group)
				switch {
				case derr == nil:
					for _, g := range group {
						p.q.pop(g)
					}
					n += len(group)
					p.q.persist()
					p.growBatch(len(group))
					continue
				case errors.Is(derr, context.DeadlineExceeded) && ctx.Err() == nil:
					// The service takes longer than Timeout for this many
					// records (what it stored of them, the next batch
					// finds as duplicates): send half as many, so a slow
					// service still drains the queue instead of timing out
					// on the same batch at every flush.
					p.batchLimit.Store(int32(max(1, len(group)/2)))
					continue
				case unreachable(derr) || !permanent(derr) && !errors.Is(derr, errNoBatchAPI):
					if !unreachable(derr) {
						p.markUp()
					} else if !(n > 0 && ctx.Err() != nil) {
						p.noteFailure(derr)
					}
					return n, fmt.Errorf("svc client: flush stopped with %d entries left: %w", p.q.count(), derr)
				}
				// Refused (nothing of it stored) or no batch API: these
				// entries go one by one, each accepted, acknowledged as a
				// duplicate or dead-lettered on its own.
				single = group[len(group)-1].end
			}
		}
		var derr error
		var vpecID string
		if e.Kind != kindOpen && p.q.runFailed(e.RunID) {
			derr = fmt.Errorf("the run's queued open was rejected")
		} else {
			vpecID, derr = p.deliver(ctx, e)
		}
		switch {
		case derr == nil:
			p.q.pop(e)
			n++
			if e.Kind == kindClose && sealed != nil {
				*sealed = append(*sealed, SealedRun{RunID: e.RunID, VPECID: vpecID})
			}
			if e.Kind == kindClose || n%1000 == 0 {
				p.q.persist()
			}
		case permanent(derr) || (e.Kind != kindOpen && p.q.runFailed(e.RunID)):
			p.q.reject(e, derr)
			rejected = append(rejected, RejectedEntry{Kind: e.Kind, RunID: e.RunID, RecordID: e.recordID, Err: derr})
		default:
			switch {
			case !unreachable(derr):
				// The service answered (e.g. 401): it is up, but this
				// entry cannot go now; it stays at the head.
				p.markUp()
			case !(n > 0 && ctx.Err() != nil):
				// (Out of budget after progress is not an outage.)
				p.noteFailure(derr)
			}
			return n, fmt.Errorf("svc client: flush stopped with %d entries left: %w", p.q.count(), derr)
		}
	}
}

// batchSize is the most records the next batch request carries.
func (p *Pipeline) batchSize() int {
	if l := int(p.batchLimit.Load()); l > 0 {
		return l
	}
	return api.MaxBatchRecords
}

// growBatch doubles the batch limit after a batch of n records went
// through within the Timeout at the limit.
func (p *Pipeline) growBatch(n int) {
	if l := p.batchSize(); n >= l && l < api.MaxBatchRecords {
		p.batchLimit.Store(int32(min(api.MaxBatchRecords, 2*l)))
	}
}

// deliverBatch sends queued records of one run with the batch API.
func (p *Pipeline) deliverBatch(ctx context.Context, group []entry) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	bodies := make([][]byte, len(group))
	for i, g := range group {
		bodies[i] = g.Body
	}
	_, err := p.postBatch(ctx, group[0].RunID, bodies)
	return err
}

// deliver sends one queued entry; a duplicate counts as delivered. For a
// close it returns the id of the VPEC the service issued (empty when the
// service had sealed the run before and its answer does not say).
func (p *Pipeline) deliver(ctx context.Context, e entry) (vpecID string, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	run := "/api/v1/runs/" + url.PathEscape(e.RunID)
	switch e.Kind {
	case kindOpen:
		_, _, err = p.call(ctx, http.MethodPost, "/api/v1/runs", e.Body)
	case kindRecord:
		_, _, err = p.call(ctx, http.MethodPost, run+"/records", e.Body)
	case kindClose:
		var hdr map[string]string
		var qc queuedClose
		if len(e.Body) > 0 && json.Unmarshal(e.Body, &qc) == nil && qc.IdempotencyKey != "" {
			hdr = map[string]string{"Idempotency-Key": qc.IdempotencyKey}
		}
		var data []byte
		data, _, err = p.callWith(ctx, http.MethodPost, run+"/close", nil, hdr)
		switch {
		case err == nil:
			vpecID = issuedVPECID(data)
		case errors.Is(err, ErrRunSealed):
			err = nil
		}
	}
	return vpecID, err
}
