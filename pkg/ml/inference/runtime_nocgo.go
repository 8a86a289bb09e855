//go:build !cgo

package inference

import "fmt"

// Init reports that this build has no ONNX Runtime: it was built without
// cgo (as svc-verify and cross-compiled svc binaries are).
func Init(path string) error {
	return fmt.Errorf("%w: this build has no ONNX Runtime (built without cgo, as svc-verify is); use svc built with cgo for inference, calibration and trace audits", ErrNoRuntime)
}

// Version is empty in builds without ONNX Runtime.
func Version() string { return "" }

// RunFloat reports ErrNoRuntime in builds without cgo.
func RunFloat(model []byte, inName string, inShape []int64, in []float32, outName string, outShape []int64) ([]float32, error) {
	return nil, Init("")
}

// Session is unavailable in builds without cgo.
type Session struct{}

// NewSession reports ErrNoRuntime in builds without cgo.
func NewSession(model []byte, inNames, outNames []string, opts Options) (*Session, error) {
	return nil, Init("")
}

// Each reports ErrNoRuntime in builds without cgo.
func (s *Session) Each(inputs [][]int64, fn func(name string, data []float32)) error {
	return Init("")
}

// EachTyped reports ErrNoRuntime in builds without cgo.
func (s *Session) EachTyped(inputs [][]int64, fn func(name string, data []float32), fn64 func(name string, data []float64)) error {
	return Init("")
}

// All reports ErrNoRuntime in builds without cgo.
func (s *Session) All(inputs [][]int64, fn func(outs []Output) error) error {
	return Init("")
}

// Hold reports ErrNoRuntime in builds without cgo.
func (s *Session) Hold(inputs [][]int64) (*Held, error) {
	return nil, Init("")
}

// HeldSets is 0 in builds without cgo.
func (s *Session) HeldSets() int { return 0 }

// Held is unavailable in builds without cgo.
type Held struct{}

// Outputs is nil in builds without cgo.
func (h *Held) Outputs() []Output { return nil }

// Release does nothing in builds without cgo.
func (h *Held) Release() {}

// DefaultHoldDepth is the number of output sets a session lets callers
// hold at a time when Options.HoldDepth is 0.
const DefaultHoldDepth = 2

// Close does nothing in builds without cgo.
func (s *Session) Close() error { return nil }
