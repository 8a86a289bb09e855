// Package inference runs ONNX models with ONNX Runtime (through cgo and
// github.com/yalue/onnxruntime_go). Builds without cgo compile too: there
// every call reports ErrNoRuntime.
package inference

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// RuntimeVersion is the pinned ONNX Runtime version (scripts/install-ort.sh).
const RuntimeVersion = "1.24.3"

// LibraryName is the shared library's file name.
const LibraryName = "libonnxruntime.so.1"

// ErrNoRuntime reports that ONNX Runtime is not available to this build or
// on this machine.
var ErrNoRuntime = errors.New("ONNX Runtime not available")

// Options select how a session executes.
//
// The production execution is ONNX Runtime's default: every graph
// optimisation on (node fusions such as MatMul+Add, GELU and LayerNorm
// fusion), Threads intra-op threads (0: ONNX Runtime's default). The
// reference execution (Reference true) is the unoptimised graph, node by
// node as the model file states it, on one thread: what calibration
// measures drift against and what an auditor replays.
//
// HoldDepth is the number of output sets a session lets callers hold at a
// time (Session.Hold; 0: DefaultHoldDepth, 2).
//
// NoSpin stops the session's thread pools busy-waiting for work between
// and within runs (ONNX Runtime's session.intra_op.allow_spinning and
// session.inter_op.allow_spinning set to 0): for sessions that share the
// cores with other work, such as calibration's concurrent executions. It
// changes when threads sleep, not what they compute: the outputs are the
// same bits.
type Options struct {
	Threads   int
	Reference bool
	HoldDepth int
	NoSpin    bool
}

// LibraryPath resolves the ONNX Runtime library: explicit (a --ort-lib
// flag) if set, else $SVC_ORT_LIB, else the cache directory where
// scripts/install-ort.sh puts it. The file must exist.
func LibraryPath(explicit string) (string, error) {
	candidates := []string{explicit, os.Getenv("SVC_ORT_LIB")}
	if dir := os.Getenv("SVC_ORT_DIR"); dir != "" {
		candidates = append(candidates, filepath.Join(dir, LibraryName))
	}
	if cache, err := os.UserCacheDir(); err == nil {
		candidates = append(candidates, filepath.Join(cache, "svc", "onnxruntime", RuntimeVersion, LibraryName))
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if _, err := os.Stat(c); err == nil {
			return c, nil
		} else if c == explicit {
			return "", fmt.Errorf("%w: %s: %v", ErrNoRuntime, c, err)
		}
	}
	return "", fmt.Errorf("%w: no %s found: run scripts/install-ort.sh (ONNX Runtime %s), or pass --ort-lib / set SVC_ORT_LIB", ErrNoRuntime, LibraryName, RuntimeVersion)
}

// Output is one output of a run, as Session.All and Held.Outputs pass it: its name and
// its data, F32 for a float tensor or F64 for a double one (the other is
// nil). The data is ONNX Runtime's buffer, valid only during the call
// (All) or until Release (Held).
type Output struct {
	Name string
	F32  []float32
	F64  []float64
}
