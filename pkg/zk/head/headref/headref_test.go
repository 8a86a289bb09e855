package headref

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/modelgen"
	"github.com/svc-gov/svc/pkg/zk/head"
)

// TestORTMatchesPureGo runs a generated 768-256-2 head through ONNX
// Runtime (when SVC_ORT_LIB names it: the model must load and run there)
// and checks its logits equal the pure-Go float evaluation, and the
// quantisation report against them.
func TestORTMatchesPureGo(t *testing.T) {
	lib := os.Getenv("SVC_ORT_LIB")
	if lib == "" {
		t.Skip("SVC_ORT_LIB not set (scripts/install-ort.sh)")
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
