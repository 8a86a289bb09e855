package trace

import (
	"slices"

	"github.com/svc-gov/svc/pkg/ml/tokenizer"
)

// Pending is a trace whose inference has run but whose statistics and
// Merkle root are still being computed on another goroutine (Start). The
// model's output is available at once; Wait returns the trace.
type Pending struct {
	output, probs []float64
	done          chan struct{}
	tr            *Trace
	err           error
}

// Start is TraceEncoded off the caller's critical path: it runs the
// inference, copies the model's output, and returns while the statistics
// of the traced values and the Merkle root are computed on a new
// goroutine, so the caller can act on the output (and run the next
// inference) meanwhile. Wait returns the trace, the same in every field
// and bit as TraceEncoded's for the same input.
//
// The goroutine reads the traced tensors in place: they stay held
// (inference.Session.Hold) until it is done, and it releases them itself,
// whether or not Wait is ever called, so a Pending that is dropped leaks
// nothing. At most inference.Options.HoldDepth runs (default 2) are held
// at a time: a Start beyond that waits for the oldest goroutine to finish.
// Start, like every Tracer method, must not be called concurrently with
// another; Wait may be, from any goroutine.
func (t *Tracer) Start(enc tokenizer.Encoding, input []byte) (*Pending, error) {
	tr, h, err := t.start(enc, input)
	if err != nil {
		return nil, err
	}
	p := &Pending{output: slices.Clone(tr.Output), probs: slices.Clone(tr.Probabilities), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if startHook != nil {
			startHook()
		}
		_, err := t.finish(tr, h.Outputs(), false)
		h.Release()
		if err != nil {
			p.err = err
			return
		}
		p.tr = tr
	}()
	return p, nil
}

// startHook, when set (tests), runs on Start's goroutine before it reads
// the held tensors.
var startHook func()

// Output returns the model's output (a copy).
func (p *Pending) Output() []float64 { return slices.Clone(p.output) }

// Probabilities returns the class probabilities of the model's output (a
// copy): the trace's Probabilities.
func (p *Pending) Probabilities() []float64 { return slices.Clone(p.probs) }

// Wait waits until the trace is complete and returns it: every call
// returns the same *Trace (do not modify it) or the same error.
func (p *Pending) Wait() (*Trace, error) {
	<-p.done
	return p.tr, p.err
}

// Done is closed when the trace is complete (Wait returns at once).
func (p *Pending) Done() <-chan struct{} { return p.done }
