package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/tlog"
)

// closeFlights are the closes in progress in this process, one per run:
// only the request that holds a run's flight seals the run and builds its
// VPEC. A close of the same run with the same (bound) Idempotency-Key
// waits for that request and gets its answer. Any other close (another
// key, or none) gets 409 run_sealed, without reading a record, as soon as
// the flight's request has sealed the run or taken up its own seal; if
// that request turns out not to issue (it lost the seal to a close in
// another process, or the run was refused and opened again), the close
// waits for it to end and tries again. So N racing closes of a run cost
// one VPEC build, not N.
type closeFlights struct {
	mu sync.Mutex
	m  map[string]*closeFlight
}

// closeFlight is one close in progress; done is closed once body and err
// are set.
type closeFlight struct {
	key  string // the close's bound key (boundCloseKey), "" without one
	done chan struct{}
	body []byte
	err  error
	// logged and logIndex are the VPEC's place in the transparency log,
	// set by the owner before finish when it knows it (translog.go); entry
	// is the VPEC's leaf, for a waiter that asks for the index the owner
	// did not wait for.
	logged   bool
	logIndex uint64
	entry    *tlog.Entry
	// issuing is closed once the owner is the run's issuer: it sealed the
	// run, or is completing the seal made with its own key.
	issuing     chan struct{}
	issuingOnce sync.Once

	mu      sync.Mutex
	waiters int // requests still waiting for the answer, the owner included
	cancel  context.CancelFunc
	// abandoned is set when the last waiting request went away before the
	// answer, which cancelled the build: a request with the same key that
	// comes after does not take its error, it closes again.
	abandoned bool
}

// errFlightAbandoned is what wait returns to a request that joined a
// close whose build was cancelled because every request waiting for it
// had gone away (the client timed out and retried): it closes again.
var errFlightAbandoned = errors.New("the close in progress was abandoned by its client")

// enter returns run's flight, and true if the caller starts it (it then
// owns it: start, then finish).
func (c *closeFlights) enter(run, key string) (*closeFlight, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.m[run]; ok {
		return f, false
	}
	if c.m == nil {
		c.m = map[string]*closeFlight{}
	}
	f := &closeFlight{key: key, done: make(chan struct{}), issuing: make(chan struct{}), waiters: 1}
	c.m[run] = f
	return f, true
}

// start returns the context the owner builds under: it outlives the
// owner's request while another request waits for the answer, and is
// cancelled when the last one goes away (a close nobody waits for is
// abandoned, its timestamp request with it).
func (f *closeFlight) start(req context.Context) context.Context {
	ctx, cancel := context.WithCancel(context.WithoutCancel(req))
	f.mu.Lock()
	f.cancel = cancel
	f.mu.Unlock()
	context.AfterFunc(req, f.leave)
	return ctx
}

// issue marks the owner as the run's issuer.
func (f *closeFlight) issue() { f.issuingOnce.Do(func() { close(f.issuing) }) }

// await waits until the owner of f is the run's issuer (true), or f ends
// (false), or ctx does (its error).
func (f *closeFlight) await(ctx context.Context) (bool, error) {
	select {
	case <-f.issuing:
		return true, nil
	case <-f.done:
		return false, nil
	case <-ctx.Done():
		return false, fmt.Errorf("wait for the close in progress: %w", ctx.Err())
	}
}

// leave is a waiting request going away.
func (f *closeFlight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.waiters--; f.waiters == 0 && f.cancel != nil {
		f.abandoned = true
		f.cancel()
	}
}

// finish records the owner's answer and lets the waiters have it.
func (c *closeFlights) finish(run string, f *closeFlight, body []byte, err error) {
	c.mu.Lock()
	delete(c.m, run)
	c.mu.Unlock()
	f.body, f.err = body, err
	close(f.done)
	f.mu.Lock()
	if f.cancel != nil {
		f.cancel()
	}
	f.mu.Unlock()
}

// wait waits for f's answer, or for ctx to end.
func (f *closeFlight) wait(ctx context.Context) ([]byte, error) {
	f.mu.Lock()
	if f.abandoned {
		f.mu.Unlock()
		// Its build is cancelled: wait for it to end, then close again.
		select {
		case <-f.done:
			return nil, errFlightAbandoned
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the close in progress: %w", ctx.Err())
		}
	}
	f.waiters++
	f.mu.Unlock()
	stop := context.AfterFunc(ctx, f.leave)
	select {
	case <-f.done:
		if stop() {
			f.leave()
		}
		return f.body, f.err
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the close in progress: %w", ctx.Err())
	}
}

// boundCloseKey binds a close's Idempotency-Key to the API key that sent
// it: the key stored with the seal and compared on retries, so that
// another API key replaying the same Idempotency-Key gets 409, never the
// first key's VPEC. "" without an Idempotency-Key.
func boundCloseKey(apiKeyID, idem string) string {
	if idem == "" {
		return ""
	}
	// "/" is in no API key id and no Idempotency-Key: the pair is unambiguous.
	return apiKeyID + "/" + idem
}

// closingError is the 409 of a close racing another close of the run in
// this process that it cannot join (another key, or none).
func closingError(runID string) error {
	return &httpError{http.StatusConflict, api.CodeRunSealed,
		"run " + runID + " is being closed by another request: if that close was yours, retry it with its Idempotency-Key (with the same API key) to get its VPEC; otherwise open a new run", ""}
}

// refuseBody refuses a close sent with a body (docs/API.md: a close takes
// none; its only input is the Idempotency-Key header), rather than
// silently ignoring what the client meant to send.
func refuseBody(r *http.Request) error {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if r.ContentLength < 0 {
		var b [1]byte
		if n, _ := r.Body.Read(b[:]); n == 0 {
			return nil
		}
	}
	return badRequest("", "a close takes no body (got %s): send POST /api/v1/runs/{run_id}/close without one, and the close's Idempotency-Key as a header", bodyLength(r))
}

func bodyLength(r *http.Request) string {
	if r.ContentLength > 0 {
		return fmt.Sprintf("%d bytes", r.ContentLength)
	}
	return "a chunked body"
}
