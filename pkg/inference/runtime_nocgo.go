//go:build !cgo

package inference

import "fmt"

// Init reports that this build has no ONNX Runtime: it was built without
// cgo (as svc-verify and cross-compiled svc binaries are).
func Init(path string) error {
	return fmt.Errorf("%w: this build of svc has no ONNX Runtime (built without cgo); use a build with cgo for inference commands", ErrNoRuntime)
}

// Version is empty in builds without ONNX Runtime.
func Version() string { return "" }

// RunFloat reports ErrNoRuntime in builds without cgo.
func RunFloat(model []byte, inName string, inShape []int64, in []float32, outName string, outShape []int64) ([]float32, error) {
	return nil, Init("")
}

// RunInt64 reports ErrNoRuntime in builds without cgo.
func RunInt64(model []byte, inName string, ids []int64, outNames []string) (map[string][]float32, error) {
	return nil, Init("")
}
