//go:build cgo

package headref

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/zk/head"
)

// TestORTMatchesPureGo runs a generated 768-256-2 head through ONNX
// Runtime (the model must load and run there; without a runtime the test
// fails unless SVC_SKIP_ORT=1, as in pkg/ml/inference) and checks its logits equal the pure-Go float evaluation, and the
// quantisation report against them.
func TestORTMatchesPureGo(t *testing.T) {
	lib, err := inference.LibraryPath("")
	if err != nil {
		if errors.Is(err, inference.ErrNoRuntime) && os.Getenv("SVC_SKIP_ORT") == "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	b, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{768, 256, 2}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	m, err := head.LoadONNX(b)
	if err != nil {
		t.Fatal(err)
	}
	corpus := head.RandomCorpus(768, 64, 4)
	ref, source, err := Logits(b, m, corpus, lib)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(source, "onnxruntime") {
		t.Fatalf("source %q, want onnxruntime", source)
	}
	for k, x := range corpus {
		f, _ := m.Eval(x)
		for j := range f {
			if math.Abs(f[j]-ref[k][j]) > 1e-4 {
				t.Fatalf("sample %d logit %d: ORT %g, pure Go %g", k, j, ref[k][j], f[j])
			}
		}
	}
	q, _, err := head.Quantize(m, corpus)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := head.CompareLogits(q, corpus, ref)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("against %s: %+v", source, rep)
	if rep.ArgmaxAgreement < 0.95 || rep.MaxLogitError > 0.05*rep.MaxLogit {
		t.Errorf("quantised head disagrees with ORT: %+v", rep)
	}
}

// TestExplicitLibraryMissing checks an explicit runtime path that does
// not exist is an error, not a silent fallback to the pure-Go reference.
func TestExplicitLibraryMissing(t *testing.T) {
	b, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{8, 4, 2}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := head.LoadONNX(b)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Logits(b, m, head.RandomCorpus(8, 2, 1), "/nonexistent/libonnxruntime.so")
	if !errors.Is(err, inference.ErrNoRuntime) {
		t.Fatalf("err = %v, want ErrNoRuntime", err)
	}
}
