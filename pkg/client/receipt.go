package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
)

// Errors of receipts, matchable with errors.Is.
var (
	// ErrReceiptPending: the VPEC's transparency log receipt has not been
	// fetched yet (no checkpoint covered its entry so far, or the fetch is
	// still running). VPECResult.AwaitReceipt waits for it.
	ErrReceiptPending = errors.New("svc client: the VPEC's transparency log receipt is not fetched yet")
	// ErrNoReceipt: the VPEC has no receipt to fetch: it is an offline
	// VPEC, or the service runs without a transparency log.
	ErrNoReceipt = errors.New("svc client: no transparency log receipt for this VPEC")
)

// ReceiptFetchLimit bounds how long the client keeps trying, in the
// background, to fetch a closed VPEC's receipt.
const ReceiptFetchLimit = 2 * time.Minute

// receiptWaitParam is the wait each receipt request asks the service for.
const receiptWaitParam = "10s"

// receiptState is a VPEC's receipt, fetched in the background.
type receiptState struct {
	done chan struct{} // closed once data or err is final
	once sync.Once
	data []byte
	err  error
}

func (s *receiptState) finish(data []byte, err error) {
	s.once.Do(func() {
		s.data, s.err = data, err
		close(s.done)
	})
}

// Receipt returns the VPEC's transparency log receipt (svc.tlog.receipt/v1,
// docs/TRANSPARENCY.md) if the client has fetched it, without waiting:
// ErrReceiptPending while the background fetch runs, ErrNoReceipt for an
// offline VPEC or a service without a log, or the fetch's error. Store the
// receipt beside the VPEC (svc vpec get names it vpec.receipt.json); it is
// not part of the VPEC's signed bytes.
func (r *VPECResult) Receipt() ([]byte, error) {
	if r.receipt == nil {
		return nil, ErrNoReceipt
	}
	select {
	case <-r.receipt.done:
		return r.receipt.data, r.receipt.err
	default:
		return nil, ErrReceiptPending
	}
}

// AwaitReceipt waits, until ctx ends, for the background fetch of the
// VPEC's receipt and returns it (see Receipt).
func (r *VPECResult) AwaitReceipt(ctx context.Context) ([]byte, error) {
	if r.receipt == nil {
		return nil, ErrNoReceipt
	}
	select {
	case <-r.receipt.done:
		return r.receipt.data, r.receipt.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (%w)", ErrReceiptPending, context.Cause(ctx))
	}
}

// fetchReceipt starts fetching the receipt of the VPEC vpecID in the
// background (never blocking the caller; failures are kept, not raised)
// and returns its state. The fetch asks the service to wait for a
// checkpoint, again until ReceiptFetchLimit, and stops when the Pipeline
// closes. The caller holds p.enter().
func (p *Pipeline) fetchReceipt(vpecID string) *receiptState {
	s := &receiptState{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.ctx, ReceiptFetchLimit)
		defer cancel()
		path := "/api/v1/vpecs/" + url.PathEscape(vpecID) + "/receipt?wait=" + receiptWaitParam
		for backoff := 500 * time.Millisecond; ; backoff = min(2*backoff, 10*time.Second) {
			// Each request: the service's wait plus Options.Timeout.
			rctx, rcancel := context.WithTimeout(ctx, 10*time.Second+p.timeout)
			data, _, err := p.call(rctx, http.MethodGet, path, nil)
			rcancel()
			var ae *APIError
			switch {
			case err == nil:
				s.finish(data, nil)
				return
			case errors.As(err, &ae) && ae.Status == http.StatusNotImplemented:
				s.finish(nil, fmt.Errorf("%w: %w", ErrNoReceipt, err))
				return
			case errors.As(err, &ae) && ae.Status < 500 && ae.Code != api.CodeRateLimited:
				s.finish(nil, fmt.Errorf("svc client: receipt of %s: %w", vpecID, err))
				return
			}
			select {
			case <-ctx.Done():
				s.finish(nil, fmt.Errorf("svc client: receipt of %s: %w (last: %w)", vpecID, ErrReceiptPending, err))
				return
			case <-time.After(backoff):
			}
		}
	}()
	return s
}

// GetReceipt returns the transparency log receipt of the VPEC vpecID (GET
// /api/v1/vpecs/{id}/receipt), asking the service to wait up to wait
// (at most api.MaxReceiptWaitSeconds) for a checkpoint to cover it; the
// call is bounded by wait plus Options.Timeout. A receipt not ready in
// time is an *APIError with code receipt_pending; a service without a log
// gives ErrNoReceipt.
func (p *Pipeline) GetReceipt(ctx context.Context, vpecID string, wait time.Duration) ([]byte, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	wait = min(max(wait, 0), api.MaxReceiptWaitSeconds*time.Second)
	ctx, cancel := context.WithTimeout(ctx, wait+p.timeout)
	defer cancel()
	path := "/api/v1/vpecs/" + url.PathEscape(vpecID) + "/receipt"
	if wait > 0 {
		path += "?wait=" + wait.String()
	}
	data, _, err := p.call(ctx, http.MethodGet, path, nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotImplemented {
		return nil, fmt.Errorf("%w: %w", ErrNoReceipt, err)
	}
	if err != nil {
		return nil, fmt.Errorf("svc client: receipt of %s: %w", vpecID, err)
	}
	return data, nil
}

// LogInfo returns the caller's organisation's monitoring key for the
// transparency log, with the log's key (GET /api/v1/log/org-key). A
// service without a log gives ErrNoReceipt.
func (p *Pipeline) LogInfo(ctx context.Context) (*api.LogInfo, error) {
	var info api.LogInfo
	err := p.getJSON(ctx, http.MethodGet, "/api/v1/log/org-key", nil, &info)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotImplemented {
		return nil, fmt.Errorf("%w: %w", ErrNoReceipt, err)
	}
	if err != nil {
		return nil, err
	}
	return &info, nil
}
