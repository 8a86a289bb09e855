package calibration

// The executions of a calibration's passes: one at a time, or pipelined
// over Options.Workers goroutines (Measure chooses).

import (
	"iter"
	"sync"

	"github.com/svc-gov/svc/pkg/ml/tokenizer"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// pass is one calibration pass: its input and the results of its
// executions (the reference's and each production execution's).
type pass struct {
	text   []byte
	enc    tokenizer.Encoding
	ref    *trace.Trace
	stats  map[string]trace.ValueStats
	refErr error
	prod   []*trace.Trace
	errs   []error
	done   sync.WaitGroup
}

func newPass(m *trace.Model, text []byte, executions int) *pass {
	return &pass{text: text, enc: m.Encode(text), prod: make([]*trace.Trace, executions), errs: make([]error, executions)}
}

func (p *pass) reference(t *trace.Tracer) {
	p.ref, p.stats, p.refErr = t.TraceDetail(p.enc, p.text)
}

func (p *pass) production(i int, t *trace.Tracer) {
	p.prod[i], p.errs[i] = t.TraceEncoded(p.enc, p.text)
}

// measureSequential runs each pass's executions one after another on the
// calling goroutine and takes its results.
func measureSequential(m *trace.Model, texts iter.Seq[[]byte], ref *trace.Tracer, prod []*trace.Tracer, take func(int, *pass) error) error {
	k := 0
	for text := range texts {
		p := newPass(m, text, len(prod))
		p.reference(ref)
		for i, t := range prod {
			if p.refErr == nil {
				p.production(i, t)
			}
		}
		if err := take(k, p); err != nil {
			return err
		}
		k++
	}
	return nil
}

// measurePipelined runs the passes through one goroutine per production
// execution and one per reference tracer, a few passes in flight, and
// takes the results on the calling goroutine in pass order. Each tracer is
// used by one goroutine only.
func measurePipelined(m *trace.Model, texts iter.Seq[[]byte], refs, prod []*trace.Tracer, take func(int, *pass) error) error {
	window := len(refs) + 2
	passes := make(chan *pass, window) // to take, in order
	refQ := make(chan *pass, window)
	prodQ := make([]chan *pass, len(prod))
	quit := make(chan struct{})
	var workers sync.WaitGroup
	for _, t := range refs {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for p := range refQ {
				select {
				case <-quit:
				default:
					p.reference(t)
				}
				p.done.Done()
			}
		}()
	}
	for i, t := range prod {
		prodQ[i] = make(chan *pass, window)
		workers.Add(1)
		go func() {
			defer workers.Done()
			for p := range prodQ[i] {
				select {
				case <-quit:
				default:
					p.production(i, t)
				}
				p.done.Done()
			}
		}()
	}
	workers.Add(1)
	go func() { // feeds the passes in order, at most window in flight
		defer workers.Done()
		defer close(passes)
		defer close(refQ)
		for _, q := range prodQ {
			defer close(q)
		}
		for text := range texts {
			p := newPass(m, text, len(prod))
			p.done.Add(1 + len(prod))
			select {
			case passes <- p:
			case <-quit:
				return
			}
			refQ <- p
			for _, q := range prodQ {
				q <- p
			}
		}
	}()
	var err error
	k := 0
	for p := range passes {
		p.done.Wait()
		if err = take(k, p); err != nil {
			break
		}
		k++
	}
	close(quit)
	for range passes { // unblock the feeder
	}
	workers.Wait()
	return err
}
