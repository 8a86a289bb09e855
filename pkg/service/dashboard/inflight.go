package dashboard

import "sync"

// DefaultVerifyBytes is Config.VerifyBytes unless Config says otherwise.
const DefaultVerifyBytes = 512 << 20

// Budget admits work weighted by bytes: the requests that hold a whole
// VPEC in memory (the dashboard's VPEC pages and downloads, and in svc
// serve the API's VPEC downloads and attestations) take its size while
// they run, and a request that would take the total past the maximum is
// refused (503) rather than queued, so concurrent reads of large VPECs
// cannot exhaust memory. One request is always admitted when none runs,
// whatever its size. Requests of sandbox keys together hold at most half
// the maximum (one is always admitted when no other sandbox request
// runs), so sandbox traffic cannot hold the whole budget. Safe for
// concurrent use.
type Budget struct {
	mu      sync.Mutex
	bytes   int64
	sandbox int64
	max     int64
}

// NewBudget returns a budget of max bytes (DefaultVerifyBytes if max <= 0).
func NewBudget(max int64) *Budget {
	if max <= 0 {
		max = DefaultVerifyBytes
	}
	return &Budget{max: max}
}

// Max is the budget's size in bytes.
func (f *Budget) Max() int64 { return f.max }

// Take takes n bytes for a request (of a sandbox key when sandbox is
// set) if they fit, reporting whether it did; give them back with
// Release.
func (f *Budget) Take(n int64, sandbox bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bytes > 0 && f.bytes+n > f.max {
		return false
	}
	if sandbox && f.sandbox > 0 && f.sandbox+n > f.max/2 {
		return false
	}
	f.bytes += n
	if sandbox {
		f.sandbox += n
	}
	return true
}

// Release gives back n bytes taken by Take with the same sandbox flag.
func (f *Budget) Release(n int64, sandbox bool) {
	f.mu.Lock()
	f.bytes -= n
	if sandbox {
		f.sandbox -= n
	}
	f.mu.Unlock()
}
