//go:build cgo

package modelgen

import (
	"errors"
	"math"
	"os"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-gov/svc/pkg/inference"
)

// initORT loads the pinned ONNX Runtime; without it the test fails unless
// SVC_SKIP_ORT=1 says the machine cannot have it (as pkg/inference).
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
				ids := Tokenize(vocab, text, cfg.SeqLen)
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
			again := runIDs(t, model, Tokenize(vocab, texts[0], cfg.SeqLen), cfg.Classes)
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
