package server

import "sync"

// boundedMap is a mutex-guarded map that forgets everything when it grows
// past max entries: a cache for values that never go stale (records are
// immutable; a run's identity and org never change).
type boundedMap[V any] struct {
	mu  sync.Mutex
	m   map[string]V
	max int
}

func (b *boundedMap[V]) get(k string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

func (b *boundedMap[V]) put(k string, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= b.max {
		b.m = make(map[string]V)
	}
	b.m[k] = v
}

func (b *boundedMap[V]) del(k string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, k)
}

// chainTip is the last record a process stored for a run.
type chainTip struct {
	seq   int64
	chain string
}
