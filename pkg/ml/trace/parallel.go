package trace

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/svc-gov/svc/pkg/ml/inference"
)

// parallelMin is the number of traced elements from which a trace's
// statistics are computed on several goroutines: below it, waking a
// goroutine costs more than it saves (one element takes about 0.2 ns).
// Tests lower it.
var parallelMin = 1 << 16

// eachParallel calls fn(i) for every job index i < jobs, spread over up to
// workers goroutines (at most GOMAXPROCS; 0 or 1: this one) when the jobs
// cover enough elements to gain from it, and returns when every call has.
// Each tensor's statistics are computed by one call, in the same order as
// sequentially, so the values are bit-identical whatever the split:
// parallelism changes only when they are ready.
func eachParallel(jobs, elements, workers int, fn func(i int)) {
	workers = min(workers, runtime.GOMAXPROCS(0), jobs)
	if workers <= 1 || elements < parallelMin {
		for i := range jobs {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= jobs {
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

// pairBySize returns the indices of the float outputs in pairs of similar
// length (the longest two first), the last alone if their number is odd:
// statsPair sums a pair's common blocks in one loop. It also returns the
// float elements in all.
func pairBySize(outs []inference.Output) (pairs [][2]int, elements int) {
	var idx []int
	for i, o := range outs {
		if o.F64 == nil {
			idx = append(idx, i)
			elements += len(o.F32)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return len(outs[b].F32) - len(outs[a].F32) })
	for k := 0; k < len(idx); k += 2 {
		p := [2]int{idx[k], -1}
		if k+1 < len(idx) {
			p[1] = idx[k+1]
		}
		pairs = append(pairs, p)
	}
	return pairs, elements
}
