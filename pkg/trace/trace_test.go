//go:build cgo

package trace_test

import (
	"os"
	"testing"

	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/modelgen"
	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/trace"
)

func TestTraceGeneratedModel(t *testing.T) {
	path, err := inference.LibraryPath("")
	if err != nil {
		if os.Getenv("SVC_SKIP_ORT") == "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if err := inference.Init(path); err != nil {
		t.Fatal(err)
	}
	model, vocab, err := modelgen.Generate(modelgen.Config{})
	if err != nil {
		t.Fatal(err)
	}
	text := "my ssn is 078-05-1120 call me"
	ids := modelgen.Tokenize(vocab, text, 32)
	full, err := trace.Run(model, modelgen.InputName, ids, []byte(text), trace.Full)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := trace.Run(model, modelgen.InputName, ids, []byte(text), trace.Production)
	if err != nil {
		t.Fatal(err)
	}
	if full.OperatorCount < 50 || prod.OperatorCount != 6 || full.MerkleRoot == prod.MerkleRoot {
		t.Fatalf("full %d ops, production %d ops (want 2 layers x 2 + 1 LayerNorm + output = 6)", full.OperatorCount, prod.OperatorCount)
	}
	counts := map[string]int{}
	for _, o := range full.Operators {
		counts[o.Class]++
		if o.RMS < 0 || o.RMS != o.RMS {
			t.Fatalf("operator %s: rms %v", o.Node, o.RMS)
		}
	}
	for _, c := range []string{profile.Linear, profile.LayerNorm, profile.Softmax, profile.GELU} {
		if counts[c] == 0 {
			t.Errorf("no %s operators recognised: %v", c, counts)
		}
	}
	if err := full.Verify(); err != nil {
		t.Fatal(err)
	}
	// Deterministic: the same input gives the same root; another input, another root.
	again, _ := trace.Run(model, modelgen.InputName, ids, []byte(text), trace.Full)
	other, _ := trace.Run(model, modelgen.InputName, modelgen.Tokenize(vocab, "hello world", 32), []byte("hello world"), trace.Full)
	if again.MerkleRoot != full.MerkleRoot || other.MerkleRoot == full.MerkleRoot {
		t.Fatal("trace roots are not a function of the input")
	}
	// A doctored mean breaks the root.
	full.Operators[3].Mean += 1e-6
	if err := full.Verify(); err == nil {
		t.Fatal("a doctored operator mean kept the Merkle root")
	}
	if len(prod.Output) != 2 {
		t.Fatalf("output %v", prod.Output)
	}
}
