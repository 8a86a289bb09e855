//go:build cgo

package modelgen

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/tokenizer"
)

// initORT loads the pinned ONNX Runtime; without it the test fails unless
// SVC_SKIP_ORT=1 says the machine cannot have it (as pkg/ml/inference).
func initORT(t *testing.T) {
	t.Helper()
	path, err := inference.LibraryPath("")
	if err == nil {
		err = inference.Init(path)
	}
	if err != nil {
		if errors.Is(err, inference.ErrNoRuntime) && os.Getenv("SVC_SKIP_ORT") == "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// runIDs runs model on one [1, len(ids)] int64 input and returns the
// [1, classes] probabilities.
func runIDs(t *testing.T, model []byte, ids []int64, classes int) []float32 {
	t.Helper()
	in, err := ort.NewTensor(ort.NewShape(1, int64(len(ids))), ids)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Destroy()
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(1, int64(classes)))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Destroy()
	s, err := ort.NewAdvancedSessionWithONNXData(model, []string{InputName}, []string{OutputName}, []ort.Value{in}, []ort.Value{out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), out.GetData()...)
}

func checkProbabilities(t *testing.T, p []float32, classes int) {
	t.Helper()
	if len(p) != classes {
		t.Fatalf("got %d probabilities, want %d", len(p), classes)
	}
	sum := 0.0
	for _, v := range p {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0 || v > 1 {
			t.Fatalf("probability %v out of range in %v", v, p)
		}
		sum += float64(v)
	}
	if math.Abs(sum-1) > 1e-5 {
		t.Fatalf("probabilities %v sum to %v", p, sum)
	}
}

func TestRunWithONNXRuntime(t *testing.T) {
	initORT(t)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"defaults", Config{}},
		{"3 classes seed 5", Config{Classes: 3, Seed: 5}},
		{"4 layers hidden 256 seq 128", Config{Layers: 4, Hidden: 256, Heads: 4, SeqLen: 128}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg.WithDefaults()
			model, vocab, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("model %d bytes, vocabulary %d tokens", len(model), len(vocab))
			texts := []string{
				"my ssn is 078-05-1120 call me",
				"hello dear team, the meeting is tomorrow",
				"",
			}
			var outs [][]float32
			for _, text := range texts {
				ids := tokenize(t, vocab, text, cfg.SeqLen)
				p := runIDs(t, model, ids, cfg.Classes)
				checkProbabilities(t, p, cfg.Classes)
				t.Logf("%q -> %v", text, p)
				outs = append(outs, p)
			}
			for i := 1; i < len(outs); i++ {
				if equalFloats(outs[0], outs[i]) {
					t.Errorf("inputs %q and %q gave identical outputs %v", texts[0], texts[i], outs[0])
				}
			}
			// Same input, same output.
			again := runIDs(t, model, tokenize(t, vocab, texts[0], cfg.SeqLen), cfg.Classes)
			if !equalFloats(outs[0], again) {
				t.Errorf("same input gave %v then %v", outs[0], again)
			}
		})
	}
}

func equalFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// runTorch runs a torch-style model on [batch, seq] input_ids and
// attention_mask (row-major) and returns the [batch, classes] logits.
func runTorch(t *testing.T, model []byte, ids, mask []int64, batch, classes int) []float32 {
	t.Helper()
	seq := int64(len(ids) / batch)
	in, err := ort.NewTensor(ort.NewShape(int64(batch), seq), ids)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Destroy()
	m, err := ort.NewTensor(ort.NewShape(int64(batch), seq), mask)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Destroy()
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(batch), int64(classes)))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Destroy()
	s, err := ort.NewAdvancedSessionWithONNXData(model, []string{InputName, MaskName}, []string{LogitsName},
		[]ort.Value{in, m}, []ort.Value{out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), out.GetData()...)
}

func checkLogits(t *testing.T, l []float32, n int) {
	t.Helper()
	if len(l) != n {
		t.Fatalf("got %d logits, want %d", len(l), n)
	}
	for _, v := range l {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %v not finite in %v", v, l)
		}
	}
}

// unpadded tokenizes text with room to spare and drops the padding.
func unpadded(t *testing.T, vocab []string, text string) []int64 {
	ids := tokenize(t, vocab, text, 1024)
	n := 0
	for n < len(ids) && ids[n] != 0 {
		n++
	}
	return ids[:n]
}

func ones(n int) []int64 {
	m := make([]int64, n)
	for i := range m {
		m[i] = 1
	}
	return m
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

func TestTorchRunWithONNXRuntime(t *testing.T) {
	initORT(t)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"defaults", Config{Style: StyleTorch}},
		{"3 classes seed 5", Config{Style: StyleTorch, Classes: 3, Seed: 5}},
		{"1 layer hidden 16 seq 8", Config{Style: StyleTorch, Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8}},
		{"4 layers hidden 256 seq 128", Config{Style: StyleTorch, Layers: 4, Hidden: 256, Heads: 4, SeqLen: 128}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg.WithDefaults()
			model, vocab, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("model %d bytes, vocabulary %d tokens", len(model), len(vocab))
			text := "my ssn is 078-05-1120, call me at +1 (555) 010-9999 or mail john.doe@example.com please"
			// Lengths 1, 7 and the maximum, padding masked out.
			inputs := []struct{ ids, mask []int64 }{
				{[]int64{2}, []int64{1}}, // [CLS] alone
				{tokenize(t, vocab, "call me", 7), nil},
				{tokenize(t, vocab, text, cfg.SeqLen), nil},
			}
			if n := cfg.SeqLen; n > 4 { // the maximum length, ending in padding
				inputs[2].ids = append(tokenize(t, vocab, text, n-3), 0, 0, 0)
			}
			for _, in := range inputs {
				if in.mask == nil {
					in.mask = make([]int64, len(in.ids))
					for i, id := range in.ids {
						if id != 0 {
							in.mask[i] = 1
						}
					}
				}
				l := runTorch(t, model, in.ids, in.mask, 1, cfg.Classes)
				checkLogits(t, l, cfg.Classes)
				t.Logf("length %d, mask %v -> %v", len(in.ids), in.mask, l)
			}
			// Padding invariance: the same text unpadded and padded to
			// 16 (or the maximum) with the padding masked out.
			short := unpadded(t, vocab, "hello dear team")
			padTo := min(16, cfg.SeqLen)
			padded := append(append([]int64(nil), short...), make([]int64, padTo-len(short))...)
			mask := append(ones(len(short)), make([]int64, padTo-len(short))...)
			a := runTorch(t, model, short, ones(len(short)), 1, cfg.Classes)
			b := runTorch(t, model, padded, mask, 1, cfg.Classes)
			checkLogits(t, a, cfg.Classes)
			d := maxDiff(a, b)
			t.Logf("%d tokens unpadded -> %v, padded to %d -> %v (max difference %g)", len(short), a, padTo, b, d)
			if d > 1e-4 {
				t.Errorf("padding changed the logits by %g: %v unpadded, %v padded", d, a, b)
			}
			// The mask matters: unmasked padding changes the logits.
			if c := runTorch(t, model, padded, ones(padTo), 1, cfg.Classes); maxDiff(a, c) == 0 {
				t.Errorf("attending to padding left the logits %v unchanged", a)
			}
			// A batch of two rows gives each row's own logits.
			other := tokenize(t, vocab, "the meeting is tomorrow at the office", padTo)
			batch := append(append([]int64(nil), padded...), other...)
			bmask := append(append([]int64(nil), mask...), ones(padTo)...)
			for i, v := range other {
				if v == 0 {
					bmask[padTo+i] = 0
				}
			}
			both := runTorch(t, model, batch, bmask, 2, cfg.Classes)
			checkLogits(t, both, 2*cfg.Classes)
			if d := maxDiff(both[:cfg.Classes], b); d > 1e-4 {
				t.Errorf("row 0 of a batch gave %v, alone %v", both[:cfg.Classes], b)
			}
			if equalFloats(both[:cfg.Classes], both[cfg.Classes:]) {
				t.Errorf("different texts gave identical logits %v", both[:cfg.Classes])
			}
			// Same input, same output.
			if again := runTorch(t, model, short, ones(len(short)), 1, cfg.Classes); !equalFloats(a, again) {
				t.Errorf("same input gave %v then %v", a, again)
			}
		})
	}
}

// tokenize encodes text for a generated vocabulary with the toolkit's
// WordPiece tokenizer.
func tokenize(t *testing.T, vocab []string, text string, seqLen int) []int64 {
	t.Helper()
	tok, err := tokenizer.FromVocab([]byte(strings.Join(vocab, "\n")), tokenizer.Options{Lowercase: true, StripAccents: true})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Encode(text, seqLen).IDs
}
