package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/tlog"
)

// logBehind tracks the appends of VPECs whose close answered before their
// leaf was in the transparency log (docs/TRANSPARENCY.md, "The close
// answers once the VPEC is stored"). The stored VPEC without a log index
// is the durable record that its leaf is owed: this process appends it in
// the background, and an append that fails is retried by KeepLogging, by
// a request for the VPEC's receipt, by a close retried with the same
// Idempotency-Key, and at the next start (AppendBacklog).
type logBehind struct {
	mu      sync.Mutex
	queue   []tlog.Entry // leaves waiting for the next batch
	running bool         // appendBehind is running
	// done has, per queued or appending leaf (org/vpec id), a channel
	// closed when its append ends, for a receipt request to wait on.
	done map[string]chan struct{}

	inflight atomic.Int64 // leaves queued or being appended
	failed   atomic.Bool  // an append failed since the last sweep
	// fault, set by tests (export_test.go), fails appends while it
	// returns an error.
	fault atomic.Pointer[func() error]
}

// Close query parameter values (POST /api/v1/runs/{id}/close?wait=...).
const (
	// waitLogIndex makes the close answer only once the VPEC's leaf is
	// durably in the log, with api.HeaderLogIndex.
	waitLogIndex = "log-index"
)

// closeWait reads a close's wait parameter: true for wait=log-index.
func closeWait(r *http.Request) (bool, error) {
	v, given, err := oneParam(r, "wait")
	switch {
	case err != nil:
		return false, err
	case !given:
		return false, nil
	case v == waitLogIndex:
		return true, nil
	default:
		return false, badRequest("wait", "wait=%q: a close takes wait=%s (answer once the VPEC's leaf is in the transparency log, with header %s) or no wait parameter (answer once the VPEC is stored; the receipt gives the index)", v, waitLogIndex, api.HeaderLogIndex)
	}
}

// logLater appends e's leaf, and records its index, in the background.
// It outlives the request: the client may go away once it has its VPEC.
func (s *Server) logLater(e tlog.Entry) {
	s.behind.inflight.Add(1)
	s.metrics.LogAppendPending(1)
	s.behind.mu.Lock()
	s.behind.queue = append(s.behind.queue, e)
	if s.behind.done == nil {
		s.behind.done = map[string]chan struct{}{}
	}
	if _, ok := s.behind.done[e.OrgID+"/"+e.VPECID]; !ok {
		s.behind.done[e.OrgID+"/"+e.VPECID] = make(chan struct{})
	}
	start := !s.behind.running
	s.behind.running = true
	s.behind.mu.Unlock()
	if start {
		go s.appendBehind()
	}
}

// appendBehind appends the queued leaves, a batch every batch window,
// until the queue stays empty for one. Waiting lets the closes of the
// next moments share one log batch: on the POSIX backend a batch costs
// about five synced writes however many leaves it holds, and those
// writes share the disk with the store's.
func (s *Server) appendBehind() {
	for {
		time.Sleep(s.cfg.Log.batchWindow())
		s.behind.mu.Lock()
		batch := s.behind.queue
		s.behind.queue = nil
		if len(batch) == 0 {
			s.behind.running = false
			s.behind.mu.Unlock()
			return
		}
		s.behind.mu.Unlock()
		var wg sync.WaitGroup
		for _, e := range batch {
			wg.Go(func() {
				defer func() {
					s.behind.finish(e)
					s.metrics.LogAppendPending(-1)
					s.behind.inflight.Add(-1)
				}()
				if _, err := s.appendEntry(context.Background(), e); err != nil {
					s.behind.failed.Store(true)
					s.metrics.LogAppendFailed()
					s.log.Warn("transparency log: appending a stored VPEC failed; it is appended again later (its receipt request, a close retry, the next sweep or start)",
						"vpec_id", e.VPECID, "error", err.Error())
				}
			})
		}
		wg.Wait()
	}
}

// queued returns the channel closed when the background append of the
// organisation's VPEC ends, or nil if none is queued or running.
func (b *logBehind) queued(orgID, vpecID string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ch, ok := b.done[orgID+"/"+vpecID]; ok {
		return ch
	}
	return nil
}

// finish ends the background append of e for those waiting on it.
func (b *logBehind) finish(e tlog.Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := e.OrgID + "/" + e.VPECID
	if ch, ok := b.done[k]; ok {
		close(ch)
		delete(b.done, k)
	}
}

// WaitLogged waits until every background append this process started
// has finished, or ctx ends. svc serve calls it after the server stopped
// serving and before it closes the log; what ctx cuts short is appended
// at the next start.
func (s *Server) WaitLogged(ctx context.Context) error {
	for s.behind.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("server: %d transparency log appends unfinished (the next start appends them): %w", s.behind.inflight.Load(), ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// OwedGrace is how old a stored VPEC without a log index must be before
// KeepLogging appends it though no append of this process failed: it is
// then owed by a process that died (several servers share the store), not
// queued in a live one.
const OwedGrace = 30 * time.Second

// KeepLogging appends, every interval until ctx ends, the stored VPECs
// left without a log index: all of them after a background append of this
// process failed, else those stored more than OwedGrace ago. svc serve
// runs it for the life of the server.
func (s *Server) KeepLogging(ctx context.Context, every time.Duration) {
	if s.cfg.Log == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		failed := s.behind.failed.Swap(false)
		before := s.cfg.Now().Add(-OwedGrace)
		if failed {
			before = time.Time{}
		}
		if n, err := s.appendOwed(ctx, before); err != nil {
			s.behind.failed.Store(failed)
			if ctx.Err() == nil {
				s.log.Warn("transparency log: stored VPECs still not appended; retrying", "appended", n, "error", err.Error())
			}
		} else if n > 0 {
			s.log.Info("transparency log: appended stored VPECs a failed append or a stopped process had left out", "vpecs", n)
		}
	}
}
