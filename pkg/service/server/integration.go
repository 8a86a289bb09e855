package server

import (
	"sync"
	"time"
)

// maxPendingIntegration bounds the log entries whose integration time is
// tracked at once: past it (no checkpoint for a long while) the oldest
// are dropped from the metric, never from the log.
const maxPendingIntegration = 1 << 16

// integration tracks when this process appended the log entries no
// checkpoint it has seen covers yet, for svc_log_integration_duration_seconds.
type integration struct {
	mu      sync.Mutex
	pending []pendingEntry // in index order
}

type pendingEntry struct {
	index uint64
	at    time.Time
}

func (g *integration) add(index uint64, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) >= maxPendingIntegration {
		g.pending = g.pending[1:]
	}
	// Appends finish out of index order under concurrency: keep the
	// slice sorted (a new entry is almost always last).
	i := len(g.pending)
	for i > 0 && g.pending[i-1].index > index {
		i--
	}
	g.pending = append(g.pending, pendingEntry{})
	copy(g.pending[i+1:], g.pending[i:])
	g.pending[i] = pendingEntry{index, at}
}

// covered removes and returns the append times of the entries below size.
func (g *integration) covered(size uint64) []time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for n < len(g.pending) && g.pending[n].index < size {
		n++
	}
	out := make([]time.Time, n)
	for i := range n {
		out[i] = g.pending[i].at
	}
	g.pending = g.pending[n:]
	return out
}

// CheckpointPublished tells the server the log published a checkpoint of
// size entries at time at: every entry this process appended below size
// is integrated, and its time from append to this checkpoint goes to
// svc_log_integration_duration_seconds. svc serve calls it from the log's
// checkpoint watch.
func (s *Server) CheckpointPublished(size uint64, at time.Time) {
	for _, t := range s.integr.covered(size) {
		s.metrics.LogIntegrated(at.Sub(t))
	}
}
