package dashboard

import "sync"

// DefaultVerifyBytes is Config.VerifyBytes unless Config says otherwise.
const DefaultVerifyBytes = 512 << 20

// inflight admits work weighted by bytes: the VPEC pages and downloads
// that verify or re-encode a VPEC hold its size while they run, and a
// request that would take the total past max is refused (503) rather
// than queued, so concurrent views of large VPECs cannot exhaust memory.
// One request is always admitted when none runs, whatever its size.
type inflight struct {
	mu    sync.Mutex
	bytes int64
	max   int64
}

// try takes n bytes if they fit, reporting whether it did.
func (f *inflight) try(n int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bytes > 0 && f.bytes+n > f.max {
		return false
	}
	f.bytes += n
	return true
}

// release gives back n bytes taken by try.
func (f *inflight) release(n int64) {
	f.mu.Lock()
	f.bytes -= n
	f.mu.Unlock()
}
