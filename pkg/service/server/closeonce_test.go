package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skip(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs fn and returns the CPU time it took and the peak Go heap
// in use above what was in use before (sampled every millisecond).
func measure(t *testing.T, fn func()) (time.Duration, uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	start := cpuTime(t)
	fn()
	took := cpuTime(t) - start
	close(stop)
	<-sampled
	return took, peak - base
}

// closeResult is one close's answer.
type closeResult struct {
	key    string
	status int
	body   []byte
}

// TestRacingClosesBuildOnce: eight simultaneous closes of one run give
// one VPEC, and cost about what one close of a run that size costs (CPU
// and peak heap as ratios, at most 2x), because only the close that
// sealed the run builds its VPEC (found: each built the whole VPEC before
// finding out at store time: 33.9 s CPU and 1.9 GB against 4.8 s and 512
// MB for one close, 100 x 1 MB records). Without Idempotency-Keys one
// close gets 200 and seven 409 at once; with one key (a client retrying
// its close) all eight get the same VPEC; with several keys the winning
// key's closes get it and the others 409.
func TestRacingClosesBuildOnce(t *testing.T) {
	h := newHostile(t, nil, nil)
	const mb = 8
	h.closeRun(h.live, h.bigRun(h.live, 1)) // warm up: the first close of a process costs more
	one := h.bigRun(h.live, mb)
	var single []byte
	cpu1, heap1 := measure(t, func() { single, _ = h.closeRun(h.live, one) })
	t.Logf("one close of a %d MB run (VPEC %d bytes): %v CPU, %.1f MB peak heap", mb, len(single), cpu1, float64(heap1)/1e6)
	for i, keys := range [][]string{
		{"", "", "", "", "", "", "", ""},
		{"A", "A", "A", "A", "A", "A", "A", "A"},
		{"A", "A", "A", "B", "B", "B", "", ""},
	} {
		t.Run(fmt.Sprint(keys), func(t *testing.T) { racingCloses(t, h, keys, fmt.Sprint(i), mb, cpu1, heap1) })
	}
}

func racingCloses(t *testing.T, h *hostile, keys []string, trial string, mb int, cpu1 time.Duration, heap1 uint64) {
	race := h.bigRun(h.live, mb)
	res := make([]closeResult, len(keys))
	start := make(chan struct{})
	cpuN, heapN := measure(t, func() {
		var wg sync.WaitGroup
		for i, k := range keys {
			wg.Go(func() {
				req, _ := http.NewRequest("POST", h.url+"/api/v1/runs/"+race+"/close", nil)
				req.Header.Set("Authorization", "Bearer "+h.live)
				if k != "" {
					req.Header.Set("Idempotency-Key", "close-"+trial+"-"+k)
				}
				<-start
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("close %d: %v", i, err)
					return
				}
				defer resp.Body.Close()
				res[i] = closeResult{key: k, status: resp.StatusCode}
				if resp.StatusCode == 200 {
					// Keep only a prefix and the length: the test must not
					// hold eight copies itself.
					b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
					n, _ := io.Copy(io.Discard, resp.Body)
					res[i].body = append(b, fmt.Sprint(len(b)+int(n))...)
				} else {
					res[i].body, _ = io.ReadAll(resp.Body)
				}
			})
		}
		close(start)
		wg.Wait()
	})
	winner, winners := "", 0
	var doc []byte
	for i, r := range res {
		switch r.status {
		case 200:
			if winners > 0 && (r.key != winner || r.key == "") {
				t.Fatalf("closes with keys %q and %q both got 200", winner, r.key)
			}
			if doc != nil && !bytes.Equal(doc, r.body) {
				t.Fatalf("two closes with key %q got different VPECs", r.key)
			}
			winner, doc = r.key, r.body
			winners++
		case 409:
			if errCode(r.body) != "run_sealed" {
				t.Errorf("close %d (key %q): 409 %s", i, r.key, r.body)
			}
		default:
			t.Fatalf("close %d (key %q): %d %s", i, r.key, r.status, r.body)
		}
	}
	if winners == 0 {
		t.Fatalf("no close got 200: %+v", res)
	}
	for i, r := range res {
		if winner != "" && r.key == winner && r.status != 200 {
			t.Errorf("close %d with the winning key %q got %d %s", i, r.key, r.status, r.body)
		}
	}
	t.Logf("%d racing closes of a %d MB run (winner key %q, %d answers 200): %v CPU (%.2fx one close), %.1f MB peak heap (%.2fx)",
		len(keys), mb, winner, winners, cpuN, float64(cpuN)/float64(cpu1), float64(heapN)/1e6, float64(heapN)/float64(heap1))
	if cpuN > 2*cpu1 {
		t.Errorf("%d racing closes took %.2fx the CPU of one close, want at most 2x", len(keys), float64(cpuN)/float64(cpu1))
	}
	if heapN > 2*heap1 {
		t.Errorf("%d racing closes took %.2fx the peak heap of one close, want at most 2x", len(keys), float64(heapN)/float64(heap1))
	}
}
