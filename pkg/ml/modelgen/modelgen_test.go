package modelgen

import (
	"bytes"
	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGenerateDeterministic(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"defaults", Config{}},
		{"explicit defaults", Config{Layers: 2, Hidden: 64, Heads: 4, SeqLen: 32, Classes: 2, Seed: 1}},
		{"small", Config{Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8, Classes: 3, Seed: 7}},
		{"torch defaults", Config{Style: StyleTorch}},
		{"torch small", Config{Style: StyleTorch, Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8, Classes: 3, Seed: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, va, err := Generate(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, vb, err := Generate(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Fatal("same config gave different model bytes")
			}
			if !slices.Equal(va, vb) {
				t.Fatal("same config gave different vocabularies")
			}
		})
	}
	// Explicit defaults equal zero-value defaults.
	a, _, _ := Generate(Config{})
	b, _, _ := Generate(tests[1].cfg)
	if !bytes.Equal(a, b) {
		t.Error("explicit defaults differ from Config{}")
	}
}

func TestGenerateSeedMatters(t *testing.T) {
	tests := []struct{ a, b Config }{
		{Config{Seed: 1}, Config{Seed: 2}},
		{Config{Seed: 3}, Config{Seed: 4}},
		{Config{Style: StyleTorch, Seed: 1}, Config{Style: StyleTorch, Seed: 2}},
	}
	for _, tt := range tests {
		a, _, err := Generate(tt.a)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := Generate(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(a, b) {
			t.Errorf("seeds %d and %d gave identical models", tt.a.Seed, tt.b.Seed)
		}
		if len(a) != len(b) {
			t.Errorf("seeds %d and %d gave sizes %d and %d", tt.a.Seed, tt.b.Seed, len(a), len(b))
		}
	}
}

func TestGenerateSize(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		max  int
	}{
		{"defaults", Config{}, 300 << 10},
		{"tiny", Config{Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8}, 40 << 10},
		{"torch defaults", Config{Style: StyleTorch}, 400 << 10},
		{"torch tiny", Config{Style: StyleTorch, Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8}, 64 << 10},
	}
	for _, tt := range tests {
		m, _, err := Generate(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", tt.name, len(m))
		if len(m) >= tt.max {
			t.Errorf("%s: model is %d bytes, want < %d", tt.name, len(m), tt.max)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"heads do not divide hidden", Config{Hidden: 10, Heads: 4}},
		{"negative layers", Config{Layers: -1}},
		{"sequence too short", Config{SeqLen: 1}},
		{"vocabulary too small", Config{Vocab: 10}},
		{"unknown style", Config{Style: "tf"}},
	}
	for _, tt := range tests {
		if _, _, err := Generate(tt.cfg); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestVocabulary(t *testing.T) {
	v := Vocabulary()
	want := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	if !slices.Equal(v[:5], want) {
		t.Fatalf("specials = %v", v[:5])
	}
	if len(v) < 200 || len(v) > 1000 {
		t.Errorf("vocabulary has %d tokens", len(v))
	}
	seen := map[string]bool{}
	for _, tok := range v {
		if seen[tok] {
			t.Errorf("duplicate token %q", tok)
		}
		seen[tok] = true
		if tok != strings.ToLower(tok) && !strings.HasPrefix(tok, "[") {
			t.Errorf("token %q not lowercase", tok)
		}
	}
	for _, tok := range []string{"ssn", "phone", "email", "##ing", "##7", "z", "-", "@", ".", "[", "\\", "~"} {
		if !seen[tok] {
			t.Errorf("missing %q", tok)
		}
	}
	_, gv, err := Generate(Config{Vocab: len(v) + 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(gv) != len(v)+3 || gv[len(v)] != "[unused0]" {
		t.Errorf("padded vocabulary tail = %v", gv[len(v):])
	}
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	cfg := Config{Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8}
	if err := WriteDir(dir, cfg); err != nil {
		t.Fatal(err)
	}
	model, vocab, _ := Generate(cfg)
	got, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, model) {
		t.Error("model.onnx differs from Generate")
	}
	v, err := os.ReadFile(filepath.Join(dir, "vocab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(v) != strings.Join(vocab, "\n")+"\n" {
		t.Error("vocab.txt differs from Generate")
	}
}

func TestFloat16(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},
		{1e6, 0x7c00},
		{float32(math.Ldexp(1, -24)), 0x0001}, // smallest subnormal
		{float32(math.Ldexp(1, -14)), 0x0400}, // smallest normal
		{1e-9, 0x0000},
		{1 + float32(math.Ldexp(1, -11)), 0x3c00}, // tie to even
		{1 + 3*float32(math.Ldexp(1, -11)), 0x3c02},
	}
	for _, tt := range tests {
		if got := onnxmodel.Float16Bits(tt.in); got != tt.want {
			t.Errorf("onnxmodel.Float16Bits(%g) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
	for _, f := range []float32{0.02, -0.013, 0.0001, -3e-6, 0.07} {
		back := onnxmodel.Float16Value(onnxmodel.Float16Bits(f))
		if rel := math.Abs(float64(back-f)) / math.Abs(float64(f)); rel > 1e-3 && math.Abs(float64(back-f)) > 6e-8 {
			t.Errorf("round trip %g -> %g", f, back)
		}
	}
}

// The package's defaults are the caller's to change: each call returns a
// new slice, so a config built from one never changes the next.
func TestDefaultsAreCopies(t *testing.T) {
	styles := Styles()
	styles[0] = "changed"
	if got := Styles(); got[0] != StyleBERT {
		t.Errorf("Styles: %v after a caller changed its copy", got)
	}
	dims := DefaultMLPHeadDims()
	dims[0] = 1
	if got := DefaultMLPHeadDims(); !slices.Equal(got, []int{768, 256, 2}) {
		t.Errorf("DefaultMLPHeadDims: %v after a caller changed its copy", got)
	}
}
