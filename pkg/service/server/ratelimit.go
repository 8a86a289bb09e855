package server

import (
	"math"
	"sync"
	"time"
)

// RateLimit bounds the requests of one API key: a token bucket refilled at
// PerSecond and holding at most Burst.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// The rate limit of pk_sb_ keys unless configured otherwise: requests per
// second, and the burst.
const (
	DefaultSandboxRate  = 20
	DefaultSandboxBurst = 40
)

// limiter keeps one bucket per key id. Each server process keeps its own
// buckets: with N processes behind a balancer a key gets up to N times the
// rate (documented in docs/API.md).
type limiter struct {
	mu      sync.Mutex
	limit   RateLimit
	buckets map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(l RateLimit, now func() time.Time) *limiter {
	return &limiter{limit: l, buckets: map[string]*bucket{}, now: now}
}

// allow takes a token for key; when none is left it returns false and how
// long until one is.
func (l *limiter) allow(key string) (bool, time.Duration) {
	if l == nil || l.limit.PerSecond <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: float64(l.limit.Burst), last: now}
		l.buckets[key] = b
		if len(l.buckets) > 100000 { // bound memory: forget idle keys
			for k, v := range l.buckets {
				if now.Sub(v.last) > time.Minute {
					delete(l.buckets, k)
				}
			}
		}
	}
	b.tokens = math.Min(float64(l.limit.Burst), b.tokens+now.Sub(b.last).Seconds()*l.limit.PerSecond)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.limit.PerSecond * float64(time.Second))
	return false, wait
}
