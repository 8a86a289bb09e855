// Package ortest prepares ONNX Runtime for tests: it loads the pinned
// library (make test installs it) and generates models into temporary
// directories.
package ortest

import (
	"os"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// Init loads ONNX Runtime. Without the library the test fails, unless
// SVC_SKIP_ORT=1 says this machine cannot have it (then it skips).
func Init(tb testing.TB) {
	tb.Helper()
	path, err := inference.LibraryPath("")
	if err == nil {
		err = inference.Init(path)
	}
	if err != nil {
		if os.Getenv("SVC_SKIP_ORT") == "1" {
			tb.Skip(err)
		}
		tb.Fatal(err)
	}
}

// Model generates a model for cfg into a temporary directory, loads it and
// returns it with its directory. ONNX Runtime is initialised.
func Model(tb testing.TB, cfg modelgen.Config) (*trace.Model, string) {
	tb.Helper()
	Init(tb)
	dir := tb.TempDir()
	if err := modelgen.WriteDir(dir, cfg); err != nil {
		tb.Fatal(err)
	}
	m, err := trace.LoadModel(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return m, dir
}
