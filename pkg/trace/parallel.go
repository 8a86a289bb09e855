package trace

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/svc-gov/svc/pkg/inference"
)

// parallelMin is the number of traced elements from which a trace's
// statistics are computed on several goroutines: below it, waking a
// goroutine costs more than it saves (one element takes about 0.2 ns).
// Tests lower it.
var parallelMin = 1 << 16

// eachParallel calls fn(i) for every output index i, spread over up to
// workers goroutines (at most GOMAXPROCS; 0 or 1: this one) when the
// outputs are large enough to gain from it, and returns when every call
// has. Each output's statistics are computed by one call, in the same
// order as sequentially, so the values are bit-identical whatever the
// split: parallelism changes only when they are ready.
func eachParallel(outs []inference.Output, workers int, fn func(i int)) {
	total := 0
	for _, o := range outs {
		total += len(o.F32)
	}
	workers = min(workers, runtime.GOMAXPROCS(0), len(outs))
	if workers <= 1 || total < parallelMin {
		for i := range outs {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(outs) {
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
