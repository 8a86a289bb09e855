package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// BatchItem is one record of a RecordBatch: the arguments of Run.Record.
type BatchItem struct {
	Check      string
	ManifestID string
	Result     vpec.CheckResult
	Input      []byte
	Options    []RecordOption
}

// MaxBatchBytes is the most body bytes the client puts in one batch
// request: half the service's default body limit (1 MiB), so that a batch
// the client builds is never refused for its size by a default service.
const MaxBatchBytes = 512 << 10

// RecordBatch records several check executions of the run at once, in
// order: each as Run.Record would record it (commitments computed here,
// chained onto the run), sent with the batch API (POST
// /api/v1/runs/{run_id}/records:batch, in requests of at most
// api.MaxBatchRecords records and MaxBatchBytes bytes), or one by one to a
// service without it. The results are in the items' order. Fail-open as
// Record: if the service is unreachable, or entries of the run wait in the
// queue, the records are queued (Queued true, no error). If the service
// refuses a batch, nothing of that request is stored and the error is an
// *APIError whose Field names the record (records[i].<field>, i counted
// within that request); records of earlier requests stay recorded and
// their results are returned with the error. ErrInvalidRecord for items
// that break the record rules (nothing is sent then), ErrRunSealed after
// Close.
func (r *Run) RecordBatch(ctx context.Context, items []BatchItem) ([]*RecordResult, error) {
	recs, res, err := r.recordBatch(ctx, items)
	for _, rec := range recs {
		r.p.emit(rec, r.id, r.workflowID)
	}
	return res, err
}

// built is a record made for a batch, with what it changes in the run.
type built struct {
	rec  *vpec.Record
	body []byte
	next [32]byte
	disc *disclosed
}

func (r *Run) recordBatch(ctx context.Context, items []BatchItem) ([]*vpec.Record, []*RecordResult, error) {
	p := r.p
	if err := p.enter(); err != nil {
		return nil, nil, err
	}
	defer p.exit()
	if len(items) == 0 {
		return nil, nil, nil
	}
	type prepared struct {
		c recordConfig
		h hashes
	}
	preps := make([]prepared, len(items))
	for i, it := range items {
		c, h, err := prepareRecord(it.Check, it.ManifestID, it.Input, it.Options)
		if err != nil {
			return nil, nil, fmt.Errorf("svc client: batch item %d: %w", i, err)
		}
		preps[i] = prepared{c, h}
	}
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return nil, nil, fmt.Errorf("svc client: record a batch on run %s: %w", r.id, ErrRunSealed)
	}
	bs := make([]built, len(items))
	seq, prev := r.seq, r.prev
	for i, it := range items {
		rec, body, next, err := r.buildRecord(ctx, it.Check, it.ManifestID, it.Result, &preps[i].c, preps[i].h, seq+1, prev)
		if err != nil {
			return nil, nil, fmt.Errorf("svc client: batch item %d: %w", i, err)
		}
		bs[i] = built{rec, body, next, preps[i].c.disc}
		seq, prev = rec.Sequence, next
	}
	p.autoFlush(ctx)
	var recs []*vpec.Record
	var out []*RecordResult
	// commit adds records to the run's local state, in order.
	commit := func(b built, res *RecordResult) {
		if b.disc != nil && b.disc.split != nil {
			res.AllDisclosures = b.disc.split.All
		}
		r.seq, r.prev, r.lastCommitment = b.rec.Sequence, b.next, b.rec.CommitmentHash
		r.bodies = append(r.bodies, b.body)
		recs, out = append(recs, b.rec), append(out, res)
	}
	for _, chunk := range chunkBatch(len(bs), func(i int) int { return len(bs[i].body) }) {
		part := bs[chunk[0]:chunk[1]]
		queued := p.down.Load() || p.q.pendingFor(r.id) > 0
		var results []RecordResult
		if !queued {
			bodies := make([][]byte, len(part))
			for i, b := range part {
				bodies[i] = b.body
			}
			var err error
			results, err = p.sendBatch(ctx, r.id, bodies)
			if err != nil {
				for i := range results { // stored one by one before the refusal
					res := results[i]
					commit(part[i], &res)
				}
				part = part[len(results):]
			}
			switch {
			case err == nil:
				for i := range results {
					if results[i].RecordID != part[i].rec.RecordID {
						queued = true // not the service's answer: queue; delivery is idempotent
					}
				}
			case unreachable(err):
				p.noteFailure(err)
				queued = true
			case errors.Is(err, ErrRunSealed):
				r.sealed = true
				return recs, out, fmt.Errorf("svc client: record a batch on run %s: %w", r.id, err)
			default:
				return recs, out, fmt.Errorf("svc client: record a batch of %d on run %s: %w", len(part), r.id, err)
			}
		}
		for i, b := range part {
			if !queued {
				res := results[i]
				commit(b, &res)
				continue
			}
			if err := p.q.append(kindRecord, r.id, b.body); err != nil {
				return recs, out, fmt.Errorf("svc client: record %s: the service is unreachable and the queue failed: %w", b.rec.Check, err)
			}
			commit(b, queuedResult(b.rec))
		}
	}
	return recs, out, nil
}

// chunkBatch splits n records of sizes size(i) into [from, to) ranges of
// at most api.MaxBatchRecords records and MaxBatchBytes body bytes (a
// record larger than that alone is a range of its own).
func chunkBatch(n int, size func(i int) int) [][2]int {
	var out [][2]int
	from, bytes := 0, 0
	for i := range n {
		s := size(i) + 1 // its comma
		if i > from && (i-from >= api.MaxBatchRecords || bytes+s > MaxBatchBytes) {
			out = append(out, [2]int{from, i})
			from, bytes = i, 0
		}
		bytes += s
	}
	if n > from {
		out = append(out, [2]int{from, n})
	}
	return out
}

// errNoBatchAPI is what sendBatch returns when the service has no batch
// API (an older service answered 404 or 405 without a not_found code).
var errNoBatchAPI = errors.New("svc client: the service has no batch API")

// sendBatch sends record bodies of run runID with the batch API, or one by
// one once the service is known to lack it (then the results are those of
// the single appends; a single append's refusal stops it, and the results
// of the records stored before it are returned with the error). It
// returns one result per record.
func (p *Pipeline) sendBatch(ctx context.Context, runID string, bodies [][]byte) ([]RecordResult, error) {
	path := "/api/v1/runs/" + url.PathEscape(runID) + "/records"
	if !p.noBatch.Load() {
		res, err := p.postBatch(ctx, runID, bodies)
		if !errors.Is(err, errNoBatchAPI) {
			return res, err
		}
	}
	out := make([]RecordResult, len(bodies))
	for i, b := range bodies {
		data, _, err := p.call(ctx, http.MethodPost, path, b)
		if err == nil && json.Unmarshal(data, &out[i]) != nil {
			err = fmt.Errorf("%w: POST %s: the answer is not a record result", ErrUnavailable, path)
		}
		if err != nil {
			return out[:i], err
		}
	}
	return out, nil
}

// postBatch sends record bodies of run runID in one batch request and
// returns one result per record. An older service's answer (no batch
// API) sets p.noBatch and gives an error matching errNoBatchAPI.
func (p *Pipeline) postBatch(ctx context.Context, runID string, bodies [][]byte) ([]RecordResult, error) {
	path := "/api/v1/runs/" + url.PathEscape(runID) + "/records:batch"
	n := 0
	for _, b := range bodies {
		n += len(b) + 1
	}
	body := make([]byte, 0, n+16)
	body = append(body, `{"records":[`...)
	for i, b := range bodies {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, b...)
	}
	body = append(body, "]}"...)
	data, _, err := p.call(ctx, http.MethodPost, path, body)
	if noBatchAPI(err) {
		p.noBatch.Store(true)
		return nil, fmt.Errorf("%w: %w", errNoBatchAPI, err)
	}
	if err != nil {
		return nil, err
	}
	var res api.RecordBatchResult
	if json.Unmarshal(data, &res) != nil || len(res.Records) != len(bodies) {
		return nil, fmt.Errorf("%w: POST %s: the answer is not a batch result", ErrUnavailable, path)
	}
	return res.Records, nil
}

// noBatchAPI reports whether err is an older service's answer to the batch
// path: 405, or 404 that is not the API's not_found (an unknown run).
func noBatchAPI(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusMethodNotAllowed || (ae.Status == http.StatusNotFound && ae.Code != api.CodeNotFound))
}
