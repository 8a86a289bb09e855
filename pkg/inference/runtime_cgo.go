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

// RunInt64 runs a model on one int64 input (e.g. token ids of shape
// [1, len(ids)]) and returns the named float outputs, allocated by ONNX
// Runtime.
func RunInt64(model []byte, inName string, ids []int64, outNames []string) (map[string][]float32, error) {
	input, err := ort.NewTensor(ort.NewShape(1, int64(len(ids))), ids)
	if err != nil {
		return nil, fmt.Errorf("inference: input tensor: %w", err)
	}
	defer input.Destroy()
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{inName}, outNames, nil)
	if err != nil {
		return nil, fmt.Errorf("inference: session: %w", err)
	}
	defer s.Destroy()
	outputs := make([]ort.Value, len(outNames))
	if err := s.Run([]ort.Value{input}, outputs); err != nil {
		return nil, fmt.Errorf("inference: run: %w", err)
	}
	res := make(map[string][]float32, len(outNames))
	for i, v := range outputs {
		t, ok := v.(*ort.Tensor[float32])
		if !ok {
			for _, o := range outputs {
				if o != nil {
					o.Destroy()
				}
			}
			return nil, fmt.Errorf("inference: output %s is not a float tensor", outNames[i])
		}
		res[outNames[i]] = append([]float32(nil), t.GetData()...)
		t.Destroy()
	}
	return res, nil
}
