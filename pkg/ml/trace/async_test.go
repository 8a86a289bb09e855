//go:build cgo

package trace_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// asyncInputs are texts of several token lengths (the torch-style model
// has a dynamic length: several output sets per length).
func asyncInputs(n int) [][]byte {
	words := strings.Fields("my name is jane roe and my ssn is 078-05-1120 please call me back tomorrow at the office")
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([][]byte, n)
	for i := range out {
		k := 1 + rng.IntN(len(words))
		w := slices.Clone(words[:k])
		rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		out[i] = []byte(fmt.Sprintf("%d %s", i, strings.Join(w, " ")))
	}
	return out
}

// TestStartSameTrace: the asynchronous trace (Start, then Wait) is the
// synchronous one, field for field and bit for bit (same Merkle root, same
// operator values), for many inputs, both modes, both model styles and
// in-graph statistics, with several traces in flight at once and their
// Waits on other goroutines in another order; Output and Probabilities
// are available before Wait and equal the trace's.
func TestStartSameTrace(t *testing.T) {
	inputs := asyncInputs(24)
	for _, style := range []string{modelgen.StyleBERT, modelgen.StyleTorch} {
		m, _ := ortest.Model(t, modelgen.Config{Style: style})
		for _, mode := range []string{trace.Production, trace.Full} {
			for _, inGraph := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/ingraph=%v", style, mode, inGraph)
				opts := trace.TracerOptions{InGraph: inGraph}
				sync1, err := trace.NewTracerWith(m, mode, inference.Options{Threads: 1}, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer sync1.Close()
				async, err := trace.NewTracerWith(m, mode, inference.Options{Threads: 1}, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer async.Close()
				want := make([]*trace.Trace, len(inputs))
				for i, in := range inputs {
					if want[i], err = sync1.Trace(in); err != nil {
						t.Fatal(err)
					}
				}
				pending := make([]*trace.Pending, len(inputs))
				for i, in := range inputs {
					if pending[i], err = async.Start(m.Encode(in), in); err != nil {
						t.Fatal(err)
					}
					if got := pending[i].Probabilities(); !slices.Equal(got, want[i].Probabilities) {
						t.Fatalf("%s: input %d: probabilities at Start %v, the trace's %v", name, i, got, want[i].Probabilities)
					}
					if got := pending[i].Output(); !slices.Equal(got, want[i].Output) {
						t.Fatalf("%s: input %d: output at Start %v, the trace's %v", name, i, got, want[i].Output)
					}
				}
				var wg sync.WaitGroup
				for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(len(inputs)) {
					wg.Go(func() {
						for range 2 { // concurrent and repeated Waits return the same trace
							got, err := pending[i].Wait()
							if err != nil {
								t.Error(err)
								return
							}
							if got.MerkleRoot != want[i].MerkleRoot || !reflect.DeepEqual(got, want[i]) {
								t.Errorf("%s: input %d: asynchronous trace (root %s) differs from the synchronous one (root %s)", name, i, got.MerkleRoot, want[i].MerkleRoot)
							}
						}
					})
				}
				wg.Wait()
			}
		}
	}
}

// TestStartNeverWaited: traces never waited for release their output
// tensors themselves: Start goes on past the hold depth without a single
// Wait, and when they are done no output set is held.
func TestStartNeverWaited(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{Style: modelgen.StyleTorch})
	tr, err := trace.NewTracer(m, trace.Full, inference.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var done []<-chan struct{}
	for _, in := range asyncInputs(4 * inference.DefaultHoldDepth) {
		p, err := tr.Start(m.Encode(in), in)
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, p.Done())
	}
	for _, d := range done {
		<-d
	}
	if n := tr.HeldSets(); n != 0 {
		t.Fatalf("%d output sets still held after every trace finished", n)
	}
}

// TestStartAfterClose: a trace in flight when its tracer closes still
// completes (its tensors are freed after it, not under it).
func TestStartAfterClose(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{})
	tr, err := trace.NewTracer(m, trace.Full, inference.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := []byte("call me back tomorrow")
	want, err := tr.Trace(in)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tr.Start(m.Encode(in), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if got.MerkleRoot != want.MerkleRoot {
		t.Fatalf("root %s after Close, want %s", got.MerkleRoot, want.MerkleRoot)
	}
}

// TestStartHoldsUntilRead: while Start's goroutines have not read their
// tensors yet, further Starts do not write into them: they wait (hold
// depth 2), and every trace comes out as the synchronous one. An early
// release of the tensors (before the statistics are taken) fails here.
func TestStartHoldsUntilRead(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{Style: modelgen.StyleTorch})
	ref, err := trace.NewTracer(m, trace.Full, inference.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	tr, err := trace.NewTracer(m, trace.Full, inference.Options{Threads: 1, HoldDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	inputs := asyncInputs(6)
	for i := range inputs {
		inputs[i] = []byte("same length input number " + string(rune('a'+i)))
	}
	gate := make(chan struct{})
	defer trace.SetStartHook(func() { <-gate })()
	pending := make([]*trace.Pending, len(inputs))
	started := make(chan error)
	go func() {
		for i, in := range inputs {
			var err error
			if pending[i], err = tr.Start(m.Encode(in), in); err != nil {
				started <- err
				return
			}
		}
		started <- nil
	}()
	select {
	case err := <-started:
		t.Fatalf("all %d Starts returned (%v) while every trace's goroutine still waited to read its tensors", len(inputs), err)
	case <-time.After(200 * time.Millisecond):
	}
	close(gate)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		want, err := ref.Trace(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pending[i].Wait()
		if err != nil {
			t.Fatal(err)
		}
		if got.MerkleRoot != want.MerkleRoot {
			t.Fatalf("input %d: asynchronous root %s, synchronous %s", i, got.MerkleRoot, want.MerkleRoot)
		}
	}
}
