//go:build cgo

package trace_test

import (
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

func TestTraceGeneratedModel(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{})
	text := []byte("my ssn is 078-05-1120, call me")
	full, err := trace.Run(m, text, trace.Full)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := trace.Run(m, text, trace.Production)
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
	again, _ := trace.Run(m, text, trace.Full)
	other, _ := trace.Run(m, []byte("hello world"), trace.Full)
	if again.MerkleRoot != full.MerkleRoot || other.MerkleRoot == full.MerkleRoot {
		t.Fatal("trace roots are not a function of the input")
	}
	if len(prod.Output) != 2 || len(prod.Probabilities) != 2 || prod.Tokens < 5 || prod.Truncated {
		t.Fatalf("output %v probabilities %v tokens %d truncated %v", prod.Output, prod.Probabilities, prod.Tokens, prod.Truncated)
	}
	// The trace file round-trips through the strict parser.
	doc, err := document.MarshalIndent(full)
	if err != nil {
		t.Fatal(err)
	}
	back, err := trace.Parse(doc)
	if err != nil || back.MerkleRoot != full.MerkleRoot {
		t.Fatalf("parse: %v", err)
	}
	// A doctored mean breaks the root, and the parser refuses the file.
	full.Operators[3].Mean += 1e-6
	if err := full.Verify(); err == nil {
		t.Fatal("a doctored operator mean kept the Merkle root")
	}
	doc, _ = document.MarshalIndent(full)
	if _, err := trace.Parse(doc); err == nil || !strings.Contains(err.Error(), "merkle_root") {
		t.Fatalf("doctored trace parsed: %v", err)
	}
}

// TestTruncation: an input longer than the model's sequence is truncated
// and the trace says so.
func TestTruncation(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{})
	tr, err := trace.Run(m, []byte(strings.Repeat("word ", 100)), trace.Production)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Truncated || tr.Tokens != 32 {
		t.Fatalf("tokens %d truncated %v", tr.Tokens, tr.Truncated)
	}
}

// TestTraceTorchStyle traces a model in the patterns of a torch.onnx
// export of a Hugging Face DistilBERT classifier: tokenizer.json, inputs
// input_ids and attention_mask of dynamic length, decomposed LayerNorm,
// bias-first Adds, the Erf GELU, a Gemm classifier returning logits.
func TestTraceTorchStyle(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{Style: modelgen.StyleTorch})
	if m.SeqLen != 0 || m.MaxLen != 32 || len(m.Graph.Inputs) != 2 {
		t.Fatalf("seq %d max %d inputs %v", m.SeqLen, m.MaxLen, m.Graph.Inputs)
	}
	short, err := trace.Run(m, []byte("Hello, world!"), trace.Production)
	if err != nil {
		t.Fatal(err)
	}
	long, err := trace.Run(m, []byte(strings.Repeat("call me maybe ", 20)), trace.Production)
	if err != nil {
		t.Fatal(err)
	}
	if enc := m.Encode([]byte("Hello, world!")); short.Tokens != int64(enc.Tokens) || len(enc.IDs) != enc.Tokens || short.Truncated || long.Tokens != 32 || !long.Truncated {
		t.Fatalf("tokens %d/%v and %d/%v", short.Tokens, short.Truncated, long.Tokens, long.Truncated)
	}
	// Production mode: the terminal node of each decomposed LayerNorm
	// (embeddings + 2 per layer) and the classifier.
	if short.OperatorCount != 6 {
		t.Fatalf("production traced %d operators: %+v", short.OperatorCount, short.Operators)
	}
	for _, o := range short.Operators[:5] {
		if o.Class != profile.LayerNorm || o.OpType != "Add" {
			t.Fatalf("production operator %+v is not a LayerNorm terminal", o)
		}
	}
	if last := short.Operators[5]; last.OpType != "Gemm" || last.Class != profile.Linear {
		t.Fatalf("last operator %+v", last)
	}
	// Logits become probabilities.
	if len(short.Output) != 2 || len(short.Probabilities) != 2 || short.Probabilities[0]+short.Probabilities[1] < 0.999 {
		t.Fatalf("output %v probabilities %v", short.Output, short.Probabilities)
	}
	full, err := trace.Run(m, []byte("Hello, world!"), trace.Full)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, o := range full.Operators {
		counts[o.Class]++
	}
	// 5 LayerNorms of 9 nodes; 2 layers of 6 Linear MatMul+Add pairs and
	// 2 attention MatMuls, plus 2 Gemm; 2 GELUs of 5 nodes; 2 Softmax.
	if counts[profile.LayerNorm] != 45 || counts[profile.GELU] != 10 || counts[profile.Softmax] != 2 || counts[profile.Linear] < 20 {
		t.Fatalf("classes %v", counts)
	}
}

// TestOutputReuse: a tracer reuses preallocated outputs per input length
// (keeping a few lengths, the least recently used dropped first). Traces of
// twelve lengths, taken twice in different orders and by a fresh tracer,
// are identical.
func TestOutputReuse(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{Style: modelgen.StyleTorch})
	var texts [][]byte
	for n := 1; n <= 12; n++ {
		texts = append(texts, []byte(strings.Repeat("call me ", n)))
	}
	tr, err := trace.NewTracer(m, trace.Production, inference.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	first := map[string]string{}
	for _, text := range texts {
		got, err := tr.Trace(text)
		if err != nil {
			t.Fatal(err)
		}
		first[string(text)] = got.MerkleRoot
	}
	for i := len(texts) - 1; i >= 0; i-- {
		for _, text := range [][]byte{texts[i], texts[len(texts)-1-i]} {
			got, err := tr.Trace(text)
			if err != nil {
				t.Fatal(err)
			}
			if got.MerkleRoot != first[string(text)] {
				t.Fatalf("%d tokens: root changed on reuse", got.Tokens)
			}
		}
	}
	for _, text := range texts {
		fresh, err := trace.Run(m, text, trace.Production)
		if err != nil {
			t.Fatal(err)
		}
		if fresh.MerkleRoot != first[string(text)] {
			t.Fatalf("%q: a fresh tracer gives another root", text)
		}
	}
}
