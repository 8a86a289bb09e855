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

// Session is a loaded model with one int64 input and named float outputs,
// reused across runs. It is not safe for concurrent use.
type Session struct {
	s       *ort.DynamicAdvancedSession
	outputs []string
}

// NewSession loads model once for runs on inName returning outNames.
// threads > 0 bounds ONNX Runtime's intra-op threads.
func NewSession(model []byte, inName string, outNames []string, threads int) (*Session, error) {
	var opts *ort.SessionOptions
	if threads > 0 {
		o, err := ort.NewSessionOptions()
		if err != nil {
			return nil, fmt.Errorf("inference: session options: %w", err)
		}
		defer o.Destroy()
		if err := o.SetIntraOpNumThreads(threads); err != nil {
			return nil, fmt.Errorf("inference: threads: %w", err)
		}
		opts = o
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{inName}, outNames, opts)
	if err != nil {
		return nil, fmt.Errorf("inference: session: %w", err)
	}
	return &Session{s: s, outputs: outNames}, nil
}

// Each runs the model on token ids and calls fn with each output in turn,
// without copying it: data is valid only during the call.
func (s *Session) Each(ids []int64, fn func(name string, data []float32)) error {
	input, err := ort.NewTensor(ort.NewShape(1, int64(len(ids))), ids)
	if err != nil {
		return fmt.Errorf("inference: input tensor: %w", err)
	}
	defer input.Destroy()
	outputs := make([]ort.Value, len(s.outputs))
	defer func() {
		for _, o := range outputs {
			if o != nil {
				o.Destroy()
			}
		}
	}()
	if err := s.s.Run([]ort.Value{input}, outputs); err != nil {
		return fmt.Errorf("inference: run: %w", err)
	}
	for i, v := range outputs {
		t, ok := v.(*ort.Tensor[float32])
		if !ok {
			return fmt.Errorf("inference: output %s is not a float tensor", s.outputs[i])
		}
		fn(s.outputs[i], t.GetData())
	}
	return nil
}

// Close releases the session.
func (s *Session) Close() error { return s.s.Destroy() }
