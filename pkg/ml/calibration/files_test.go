package calibration_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/calibration"
)

func TestReadCorpus(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      bool
	}{
		{"lines", "one\ntwo\n", []string{"one", "two"}, false},
		{"trimmed and blank skipped", "  a b \n\n\t\r\nc\r\n", []string{"a b", "c"}, false},
		{"no final newline", "x", []string{"x"}, false},
		{"empty", "", nil, true},
		{"only blank", "\n \n\t\n", nil, true},
		{"line too long", strings.Repeat("a", calibration.MaxCorpusLine+1), nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := calibration.ReadCorpus(strings.NewReader(tc.in))
			if tc.err {
				if !errors.Is(err, calibration.ErrOptions) {
					t.Fatalf("err %v, want ErrOptions", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if string(got[i]) != tc.want[i] {
					t.Errorf("line %d %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestArchitecture(t *testing.T) {
	dir := t.TempDir()
	withCfg := filepath.Join(dir, "a")
	noType := filepath.Join(dir, "b")
	for d, cfg := range map[string]string{withCfg: `{"model_type":"distilbert"}`, noType: `{"hidden_size":4}`} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "config.json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "model.onnx"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		withCfg:                              "distilbert",
		filepath.Join(withCfg, "model.onnx"): "distilbert",
		noType:                               calibration.DefaultArchitecture,
		filepath.Join(dir, "missing"):        calibration.DefaultArchitecture,
	} {
		if got := calibration.Architecture(path); got != want {
			t.Errorf("Architecture(%s) = %q, want %q", path, got, want)
		}
	}
}

func TestDefaultProfileID(t *testing.T) {
	for _, class := range []string{"pii", "toxicity", "prompt-injection", "classifier"} {
		id := calibration.DefaultProfileID(class)
		if !profile.ValidID(id) {
			t.Errorf("DefaultProfileID(%q) = %q is not a valid profile id", class, id)
		}
	}
}
