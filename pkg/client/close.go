package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// VPECResult is the result of closing a run.
type VPECResult struct {
	// VPEC is the credential.
	VPEC vpec.VPEC
	// Raw is the document exactly as issued (the service's answer), or
	// the locally built document when Offline.
	Raw []byte
	// Offline is true when the service was unreachable: VPEC is then
	// built locally from the records this client made, unsigned (schema
	// vpec.OfflineSchema, signature members empty), with a
	// system_unavailable gap (High) and is_clean false. The close is
	// queued; once delivered, the service seals the run and issues its
	// own VPEC (see Pipeline.FetchVPEC).
	Offline bool

	// receipt is the VPEC's transparency log receipt, fetched in the
	// background after an online close (receipt.go); nil when Offline.
	receipt *receiptState
}

// Close seals the run and returns its VPEC. Queued entries of the run are
// delivered first. If the service is unreachable (or the run's queued
// entries cannot all be delivered within Options.Timeout), the close is
// queued and Close returns an Offline VPECResult built locally, with a
// system_unavailable gap; no error. Either way the run is sealed: a later
// Record or Close fails with ErrRunSealed.
func (r *Run) Close(ctx context.Context) (*VPECResult, error) {
	p := r.p
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	parent := ctx
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return nil, fmt.Errorf("svc client: close run %s: %w", r.id, ErrRunSealed)
	}
	if !p.down.Load() {
		err := p.flushFor(ctx, r.id)
		if err == nil {
			var data []byte
			data, err = r.closeOnline(ctx, parent)
			if err == nil {
				res := &VPECResult{Raw: data}
				if err := json.Unmarshal(data, &res.VPEC); err != nil {
					return nil, fmt.Errorf("svc client: close run %s: answer: %w", r.id, err)
				}
				r.sealed = true
				// The receipt comes about one checkpoint interval later:
				// fetched in the background, never holding up the host
				// (unless Options.WaitForReceipt, within Options.Timeout).
				res.receipt = p.fetchReceipt(res.VPEC.VPECID)
				if p.waitReceipt {
					wctx, wcancel := p.callCtx(parent)
					_, _ = res.AwaitReceipt(wctx)
					wcancel()
				}
				return res, nil
			}
			if errors.Is(err, ErrRunSealed) {
				r.sealed = true
				return nil, fmt.Errorf("svc client: close run %s: %w", r.id, err)
			}
			p.noteFailure(err)
		}
		if !unreachable(err) {
			return nil, fmt.Errorf("svc client: close run %s: %w", r.id, err)
		}
	}
	if err := p.q.append(kindClose, r.id, r.closeBody()); err != nil {
		return nil, fmt.Errorf("svc client: close run %s: the service is unreachable and the queue failed: %w", r.id, err)
	}
	r.sealed = true
	res, err := r.offlineVPEC()
	if err != nil {
		return nil, err
	}
	return res, nil
}

// CloseBytesPerSecond is the slowest rate at which the client expects the
// service to close a run (read, sign, time-stamp and send its records):
// once a close's first Options.Timeout has passed without an answer while
// the service still answers, the client waits up to Options.Timeout plus
// the run's record bytes at this rate for the VPEC (a 100 MB run: 5 s +
// 100 s) before it falls back to an offline VPEC.
const CloseBytesPerSecond = 1 << 20

// closeOnline sends the close with a fresh Idempotency-Key. If no answer
// comes (the close may have been issued and its response lost), it sends
// the close again with the same key, which the service answers with the
// VPEC it issued (or issues it now); if the service answers that retry with
// 409 run_sealed (a service without idempotent closes), the VPEC is
// fetched through the run (GET run, then GET vpec). A 409 to the first
// attempt is returned as is: the run was closed by someone else.
//
// ctx bounds the close by Options.Timeout. When it ends without an
// answer, closeOnline asks the service for the run (GET run, within
// Options.Timeout of parent): if it answers, the service is up and
// working on a close that takes longer than Options.Timeout (a large
// run), so the close is sent again with its key, bounded by parent and by
// Options.Timeout plus the run's record_bytes at CloseBytesPerSecond
// (closeWait), instead of falling back to an offline VPEC while the
// service is still working.
func (r *Run) closeOnline(ctx, parent context.Context) ([]byte, error) {
	data, err := r.closeWithKey(ctx)
	if err == nil || !unreachable(err) || parent.Err() != nil {
		return data, err
	}
	wait, ok := r.closeWait(parent)
	if !ok {
		return nil, err
	}
	long, cancel := context.WithTimeout(parent, wait)
	defer cancel()
	return r.closeWithKey(long)
}

// closeWait is how long to wait for the VPEC of a close the service has
// not answered within Options.Timeout: Options.Timeout plus the run's
// record bytes at CloseBytesPerSecond, if the service answers GET run
// (within Options.Timeout); ok is false when it does not (it is
// unreachable: the caller falls back to an offline VPEC).
func (r *Run) closeWait(parent context.Context) (time.Duration, bool) {
	ctx, cancel := r.p.callCtx(parent)
	defer cancel()
	data, _, err := r.p.call(ctx, http.MethodGet, "/api/v1/runs/"+url.PathEscape(r.id), nil)
	var ar api.Run
	if err != nil || json.Unmarshal(data, &ar) != nil {
		return 0, false
	}
	return r.p.timeout + time.Duration(ar.RecordBytes)*time.Second/CloseBytesPerSecond, true
}

// closeWithKey sends the close with the Run's key until it is answered,
// retrying with the same key (see closeOnline) until ctx ends.
func (r *Run) closeWithKey(ctx context.Context) ([]byte, error) {
	p := r.p
	path := "/api/v1/runs/" + url.PathEscape(r.id) + "/close"
	hdr := map[string]string{"Idempotency-Key": r.idempotencyKey()}
	data, _, err := p.callWith(ctx, http.MethodPost, path, nil, hdr)
	if err == nil || !retryClose(err) {
		return data, err
	}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		data, _, rerr := p.callWith(ctx, http.MethodPost, path, nil, hdr)
		switch {
		case rerr == nil:
			return data, nil
		case errors.Is(rerr, ErrRunSealed):
			if v, ferr := r.fetchIssued(ctx); ferr == nil {
				return v, nil
			}
			return nil, rerr
		case !retryClose(rerr):
			return nil, rerr
		}
		if !unreachable(rerr) {
			err = rerr
		}
		select {
		case <-ctx.Done():
			return nil, err // still no answer
		case <-time.After(wait):
		}
	}
}

// idempotencyKey is the Run's close key: made at the first Close and
// kept, so that a Close the application calls again after an error (a
// failed timestamp authority, a lost answer) completes the same close.
func (r *Run) idempotencyKey() string {
	if r.closeKey == "" {
		r.closeKey = "close:" + strings.TrimPrefix(names.NewID("k"), "k")
	}
	return r.closeKey
}

// closeBody is the queued close's body: its idempotency key, sent as the
// Idempotency-Key header when the queue delivers it.
func (r *Run) closeBody() []byte {
	b, _ := json.Marshal(queuedClose{IdempotencyKey: r.idempotencyKey()})
	return b
}

// queuedClose is the body of a queued close entry.
type queuedClose struct {
	IdempotencyKey string `json:"idempotency_key"`
}

// retryClose reports whether a close that got err may be sent again with
// the same key: no answer, or the service could not finish it (a 5xx, e.g.
// 502 timestamp_failed: the run's records are sealed and the retry
// completes the close).
func retryClose(err error) bool {
	var ae *APIError
	return unreachable(err) || errors.As(err, &ae) && ae.Status >= 500
}

// fetchIssued returns the VPEC the service issued for the run, through
// GET run (its vpec_id) and GET vpec.
func (r *Run) fetchIssued(ctx context.Context) ([]byte, error) {
	data, _, err := r.p.call(ctx, http.MethodGet, "/api/v1/runs/"+url.PathEscape(r.id), nil)
	if err != nil {
		return nil, err
	}
	var ar api.Run
	if err := json.Unmarshal(data, &ar); err != nil {
		return nil, err
	}
	if ar.VPECID == "" {
		return nil, fmt.Errorf("run %s is sealed without a VPEC yet", r.id)
	}
	v, _, err := r.p.call(ctx, http.MethodGet, "/api/v1/vpecs/"+url.PathEscape(ar.VPECID), nil)
	return v, err
}
