//go:build !cgo

package inference_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/inference"
)

// Builds without cgo say clearly that they have no ONNX Runtime.
func TestNoRuntimeWithoutCgo(t *testing.T) {
	err := inference.Init("/any/path")
	if !errors.Is(err, inference.ErrNoRuntime) || !strings.Contains(err.Error(), "built without cgo") {
		t.Fatalf("Init = %v", err)
	}
}
