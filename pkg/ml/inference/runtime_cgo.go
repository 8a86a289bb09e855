//go:build cgo

package inference

import (
	"fmt"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

var initOnce struct {
	sync.Mutex
	done bool
	path string
}

// Init loads the ONNX Runtime library at path and creates its environment,
// once per process; later calls with another path are an error.
func Init(path string) error {
	initOnce.Lock()
	defer initOnce.Unlock()
	if initOnce.done {
		if path != initOnce.path {
			return fmt.Errorf("inference: ONNX Runtime already loaded from %s", initOnce.path)
		}
		return nil
	}
	ort.SetSharedLibraryPath(path)
	if err := ort.InitializeEnvironment(); err != nil {
		return fmt.Errorf("%w: load %s: %v", ErrNoRuntime, path, err)
	}
	initOnce.done, initOnce.path = true, path
	return nil
}

// Version is the loaded ONNX Runtime's version.
func Version() string { return ort.GetVersion() }

// RunFloat runs a model with one float32 input and one float32 output of
// known shapes and returns the output values.
func RunFloat(model []byte, inName string, inShape []int64, in []float32, outName string, outShape []int64) ([]float32, error) {
	input, err := ort.NewTensor(ort.NewShape(inShape...), in)
	if err != nil {
		return nil, fmt.Errorf("inference: input tensor: %w", err)
	}
	defer input.Destroy()
	output, err := ort.NewEmptyTensor[float32](ort.NewShape(outShape...))
	if err != nil {
		return nil, fmt.Errorf("inference: output tensor: %w", err)
	}
	defer output.Destroy()
	s, err := ort.NewAdvancedSessionWithONNXData(model, []string{inName}, []string{outName}, []ort.Value{input}, []ort.Value{output}, nil)
	if err != nil {
		return nil, fmt.Errorf("inference: session: %w", err)
	}
	defer s.Destroy()
	if err := s.Run(); err != nil {
		return nil, fmt.Errorf("inference: run: %w", err)
	}
	return append([]float32(nil), output.GetData()...), nil
}

// Session is a loaded model with int64 inputs of shape [1, n] and named
// float outputs, reused across runs. Output tensors are allocated once per
// input length and reused (ONNX Runtime writes into them; nothing is
// copied). Each, EachTyped, All, Hold and Close must be called from one
// goroutine at a time; Held.Release may be called from any.
//
// Output sets: the first run at an input length lets ONNX Runtime allocate
// the outputs (the binding copies them into Go memory) and records their
// shapes; later runs at that length write into preallocated sets of those
// shapes. The session keeps idle sets for at most maxShapes input lengths
// (the least recently used length's dropped first), at most HoldDepth sets
// per length, and at most HoldDepth sets are held (Hold) at a time over all
// lengths: a Hold beyond that waits for a Release. So a session's output
// memory is bounded by (maxShapes + 1) × HoldDepth sets.
type Session struct {
	s       *ort.DynamicAdvancedSession
	inputs  []string
	outputs []string
	depth   int

	mu   sync.Mutex
	cond *sync.Cond // signalled when a held set is released
	// pools holds the output sets by input length.
	pools  map[int]*pool
	held   int // sets held now (Hold without Release), all lengths
	runs   uint64
	closed bool
}

// pool is the output sets of one input length: the shapes and element
// types ONNX Runtime reported for it, and the idle preallocated sets.
type pool struct {
	shapes  []ort.Shape
	f64     []bool
	free    [][]ort.Value
	used    uint64
	dropped bool // evicted or closed: sets released to it are destroyed
}

// maxShapes bounds the input lengths a session keeps output sets for.
const maxShapes = 8

// DefaultHoldDepth is the number of output sets a session lets callers
// hold at a time when Options.HoldDepth is 0: two, double buffering (one
// set read by the caller while ONNX Runtime writes the next).
const DefaultHoldDepth = 2

// NewSession loads model once for runs on the int64 inputs inNames
// returning outNames, with the execution opts selects.
func NewSession(model []byte, inNames, outNames []string, opts Options) (*Session, error) {
	o, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("inference: session options: %w", err)
	}
	defer o.Destroy()
	threads := opts.Threads
	if opts.Reference {
		threads = 1
		if err := o.SetGraphOptimizationLevel(ort.GraphOptimizationLevelDisableAll); err != nil {
			return nil, fmt.Errorf("inference: optimisation level: %w", err)
		}
	}
	if threads > 0 {
		if err := o.SetIntraOpNumThreads(threads); err != nil {
			return nil, fmt.Errorf("inference: threads: %w", err)
		}
		if err := o.SetInterOpNumThreads(1); err != nil {
			return nil, fmt.Errorf("inference: threads: %w", err)
		}
	}
	if opts.NoSpin {
		for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
			if err := o.AddSessionConfigEntry(key, "0"); err != nil {
				return nil, fmt.Errorf("inference: %s: %w", key, err)
			}
		}
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, inNames, outNames, o)
	if err != nil {
		return nil, fmt.Errorf("inference: session: %w", err)
	}
	depth := opts.HoldDepth
	if depth <= 0 {
		depth = DefaultHoldDepth
	}
	sess := &Session{s: s, inputs: inNames, outputs: outNames, depth: depth, pools: map[int]*pool{}}
	sess.cond = sync.NewCond(&sess.mu)
	return sess, nil
}

// Each runs the model on one int64 sequence per input (all of one length)
// and calls fn with each output in turn, without copying it: data is
// valid only during the call. Every output must be a float tensor.
func (s *Session) Each(inputs [][]int64, fn func(name string, data []float32)) error {
	return s.EachTyped(inputs, fn, nil)
}

// EachTyped is Each for sessions whose outputs are float or double
// tensors: fn gets the float ones, fn64 the double ones (nil: double
// outputs are an error).
func (s *Session) EachTyped(inputs [][]int64, fn func(name string, data []float32), fn64 func(name string, data []float64)) error {
	return s.All(inputs, func(outs []Output) error {
		for _, o := range outs {
			switch {
			case o.F64 != nil && fn64 == nil:
				return fmt.Errorf("inference: output %s is not a float tensor", o.Name)
			case o.F64 != nil:
				fn64(o.Name, o.F64)
			default:
				fn(o.Name, o.F32)
			}
		}
		return nil
	})
}

// All runs the model like Each and calls fn once with every output, in
// the session's output order, without copying them: the slices are valid
// only during the call (fn may read them from several goroutines, all
// done before it returns). An error from fn is returned as is. It is Hold,
// fn and Release.
func (s *Session) All(inputs [][]int64, fn func(outs []Output) error) error {
	h, err := s.Hold(inputs)
	if err != nil {
		return err
	}
	defer h.Release()
	return fn(h.Outputs())
}

// Held is one run's output tensors, kept after the run until Release: the
// caller (or another goroutine) reads them while the session runs again
// into other sets.
type Held struct {
	s      *Session
	p      *pool // nil: the outputs ONNX Runtime allocated (first run at a length)
	values []ort.Value
	views  []Output

	once sync.Once
}

// Outputs returns every output of the held run, in the session's output
// order, without copying: the slices are valid until Release (any number
// of goroutines may read them).
func (h *Held) Outputs() []Output { return h.views }

// Release gives the output set back to the session, which will write a
// later run into it: the slices Outputs returned must not be read after.
// It may be called from any goroutine; calls after the first do nothing.
// A set that is never released stays held: once HoldDepth sets are, Hold
// waits forever.
func (h *Held) Release() {
	h.once.Do(func() {
		s := h.s
		s.mu.Lock()
		defer s.mu.Unlock()
		s.held--
		s.cond.Signal()
		clear(h.views)
		if h.p == nil || h.p.dropped || len(h.p.free) >= s.depth {
			destroy(h.values)
			return
		}
		h.p.free = append(h.p.free, h.values)
	})
}

// Hold runs the model on one int64 sequence per input (all of one length)
// like All, and returns the outputs held: ONNX Runtime writes the next run
// into another output set until this one is released. When HoldDepth sets
// are held (all input lengths together), Hold waits until one is
// released, so the caller must Release every Held (or have another
// goroutine do it) or it waits forever.
func (s *Session) Hold(inputs [][]int64) (*Held, error) {
	if len(inputs) != len(s.inputs) {
		return nil, fmt.Errorf("inference: %d inputs given, the session takes %d (%v)", len(inputs), len(s.inputs), s.inputs)
	}
	in := make([]ort.Value, len(inputs))
	defer destroy(in)
	n := len(inputs[0])
	for i, data := range inputs {
		if len(data) != n {
			return nil, fmt.Errorf("inference: input %s has length %d, %s has %d", s.inputs[i], len(data), s.inputs[0], n)
		}
		t, err := ort.NewTensor(ort.NewShape(1, int64(n)), data)
		if err != nil {
			return nil, fmt.Errorf("inference: input tensor %s: %w", s.inputs[i], err)
		}
		in[i] = t
	}
	h := &Held{s: s}
	out, err := s.take(h, n)
	if err != nil {
		return nil, err
	}
	h.values = out
	if err := s.s.Run(in, out); err != nil {
		h.Release()
		return nil, fmt.Errorf("inference: run: %w", err)
	}
	h.views = make([]Output, len(out))
	for i, v := range out {
		h.views[i] = Output{Name: s.outputs[i]}
		switch t := v.(type) {
		case *ort.Tensor[float32]:
			h.views[i].F32 = t.GetData()
		case *ort.Tensor[float64]:
			h.views[i].F64 = t.GetData()
			if h.views[i].F64 == nil {
				h.views[i].F64 = []float64{} // empty, but marked double
			}
		default:
			h.Release()
			return nil, fmt.Errorf("inference: output %s is not a float tensor", s.outputs[i])
		}
	}
	if h.p == nil {
		s.learn(n, out)
	}
	return h, nil
}

// take waits until fewer than depth sets are held and returns an output
// set for input length n for h: an idle one, a new one of the shapes
// recorded for n, or nil values (ONNX Runtime allocates; h.p stays nil)
// when none is recorded.
func (s *Session) take(h *Held, n int) ([]ort.Value, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("inference: session closed")
	}
	for s.held >= s.depth {
		s.cond.Wait()
	}
	s.held++
	s.runs++
	p := s.pools[n]
	if p == nil {
		return make([]ort.Value, len(s.outputs)), nil
	}
	p.used, h.p = s.runs, p
	if k := len(p.free); k > 0 {
		out := p.free[k-1]
		p.free = p.free[:k-1]
		return out, nil
	}
	out := make([]ort.Value, len(p.shapes))
	for i, shape := range p.shapes {
		var err error
		if p.f64[i] {
			out[i], err = ort.NewEmptyTensor[float64](shape)
		} else {
			out[i], err = ort.NewEmptyTensor[float32](shape)
		}
		if err != nil {
			destroy(out)
			s.held--
			s.cond.Signal()
			return nil, fmt.Errorf("inference: output tensor %s: %w", s.outputs[i], err)
		}
	}
	return out, nil
}

// learn records the shapes and types of the outputs ONNX Runtime allocated
// for input length n, so that later runs at n write into preallocated
// sets (the least recently used length is dropped beyond maxShapes).
func (s *Session) learn(n int, auto []ort.Value) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.pools[n] != nil {
		return
	}
	if len(s.pools) >= maxShapes {
		oldest := -1
		for k, p := range s.pools {
			if oldest < 0 || p.used < s.pools[oldest].used {
				oldest = k
			}
		}
		s.drop(oldest)
	}
	p := &pool{used: s.runs}
	for _, v := range auto {
		_, f64 := v.(*ort.Tensor[float64])
		p.shapes = append(p.shapes, v.GetShape().Clone())
		p.f64 = append(p.f64, f64)
	}
	s.pools[n] = p
}

// drop destroys the idle sets of input length n and forgets it; its held
// sets are destroyed when released. s.mu must be held.
func (s *Session) drop(n int) {
	p := s.pools[n]
	for _, set := range p.free {
		destroy(set)
	}
	p.free, p.dropped = nil, true
	delete(s.pools, n)
}

// HeldSets returns the number of output sets held now (Hold without
// Release).
func (s *Session) HeldSets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

func destroy(values []ort.Value) {
	for _, v := range values {
		if v != nil {
			v.Destroy()
		}
	}
}

// Close releases the session and its idle output tensors; sets still held
// are destroyed when released. Calls after the first do nothing.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	for n := range s.pools {
		s.drop(n)
	}
	s.closed = true
	s.mu.Unlock()
	return s.s.Destroy()
}
