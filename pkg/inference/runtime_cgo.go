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
// copied). It is not safe for concurrent use.
type Session struct {
	s       *ort.DynamicAdvancedSession
	inputs  []string
	outputs []string
	// prealloc holds reusable output tensors by input length, the least
	// recently used dropped first.
	prealloc map[int]*outputs
	runs     uint64
	views    []Output
}

// outputs are preallocated output tensors and when they were last used.
type outputs struct {
	values []ort.Value
	used   uint64
}

// maxShapes bounds the input lengths a session keeps output tensors for.
const maxShapes = 8

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
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, inNames, outNames, o)
	if err != nil {
		return nil, fmt.Errorf("inference: session: %w", err)
	}
	return &Session{s: s, inputs: inNames, outputs: outNames, prealloc: map[int]*outputs{}}, nil
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
// done before it returns). An error from fn is returned as is.
func (s *Session) All(inputs [][]int64, fn func(outs []Output) error) error {
	if len(inputs) != len(s.inputs) {
		return fmt.Errorf("inference: %d inputs given, the session takes %d (%v)", len(inputs), len(s.inputs), s.inputs)
	}
	in := make([]ort.Value, len(inputs))
	defer func() {
		for _, v := range in {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	n := len(inputs[0])
	for i, data := range inputs {
		if len(data) != n {
			return fmt.Errorf("inference: input %s has length %d, %s has %d", s.inputs[i], len(data), s.inputs[0], n)
		}
		t, err := ort.NewTensor(ort.NewShape(1, int64(n)), data)
		if err != nil {
			return fmt.Errorf("inference: input tensor %s: %w", s.inputs[i], err)
		}
		in[i] = t
	}
	s.runs++
	var out []ort.Value
	cached, reused := s.prealloc[n]
	if reused {
		cached.used, out = s.runs, cached.values
	} else {
		out = make([]ort.Value, len(s.outputs))
	}
	if err := s.s.Run(in, out); err != nil {
		if !reused {
			destroy(out)
		}
		return fmt.Errorf("inference: run: %w", err)
	}
	if len(s.views) != len(out) {
		s.views = make([]Output, len(out))
	}
	for i, v := range out {
		s.views[i] = Output{Name: s.outputs[i]}
		switch t := v.(type) {
		case *ort.Tensor[float32]:
			s.views[i].F32 = t.GetData()
		case *ort.Tensor[float64]:
			s.views[i].F64 = t.GetData()
			if s.views[i].F64 == nil {
				s.views[i].F64 = []float64{} // empty, but marked double
			}
		default:
			if !reused {
				destroy(out)
			}
			return fmt.Errorf("inference: output %s is not a float tensor", s.outputs[i])
		}
	}
	err := fn(s.views)
	clear(s.views) // the tensors may be destroyed or rewritten from here on
	if !reused {
		// The first run at this length let ONNX Runtime allocate (and the
		// binding copy) the outputs; later runs write into tensors of the
		// shapes it reported.
		s.keep(n, out)
	}
	return err
}

// keep replaces auto-allocated outputs by preallocated ones of the same
// shapes for later runs at input length n.
func (s *Session) keep(n int, auto []ort.Value) {
	defer destroy(auto)
	if len(s.prealloc) >= maxShapes {
		oldest := -1
		for k, v := range s.prealloc {
			if oldest < 0 || v.used < s.prealloc[oldest].used {
				oldest = k
			}
		}
		destroy(s.prealloc[oldest].values)
		delete(s.prealloc, oldest)
	}
	pre := make([]ort.Value, len(auto))
	for i, v := range auto {
		var t ort.Value
		var err error
		if _, ok := v.(*ort.Tensor[float64]); ok {
			t, err = ort.NewEmptyTensor[float64](v.GetShape())
		} else {
			t, err = ort.NewEmptyTensor[float32](v.GetShape())
		}
		if err != nil {
			destroy(pre)
			return
		}
		pre[i] = t
	}
	s.prealloc[n] = &outputs{values: pre, used: s.runs}
}

func destroy(values []ort.Value) {
	for _, v := range values {
		if v != nil {
			v.Destroy()
		}
	}
}

// Close releases the session and its output tensors.
func (s *Session) Close() error {
	for k, v := range s.prealloc {
		destroy(v.values)
		delete(s.prealloc, k)
	}
	return s.s.Destroy()
}
