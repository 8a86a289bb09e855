package client_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/commitment"
)

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
		stages   int
	}{
		{"json", `{"name":"pii","version":"1.0.0","stages":[{"stage_name":"pii_detection","proof_ceiling":"execution","regulatory_references":["HIPAA"]}]}`, true, 1},
		{"yaml", "name: pii\nversion: 1.0.0\nstages:\n  - stage_name: pii_detection\n    proof_ceiling: execution\n    regulatory_references: [HIPAA]\n", true, 1},
		{"json with leading space", "  \n{\"name\":\"pii\",\"version\":\"1.0.0\",\"stages\":[]}", true, 0},
		{"unknown field in yaml", "name: pii\nversion: 1.0.0\nstages: []\nowner: me\n", false, 0},
		{"unknown field in json", `{"name":"pii","version":"1.0.0","stages":[],"owner":"me"}`, false, 0},
		{"duplicate key in json", `{"name":"pii","name":"x","version":"1.0.0","stages":[]}`, false, 0},
		{"yaml non-string keys", "name: pii\n1: x\n", false, 0},
		{"not yaml", "name: [unclosed\n", false, 0},
		{"broken json", `{"name":`, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := client.ParseManifest([]byte(tc.in))
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && (m.Name != "pii" || len(m.Stages) != tc.stages) {
				t.Errorf("manifest %+v", m)
			}
		})
	}
}

// FuzzParseManifest: any bytes give a manifest or an error, never a panic;
// a manifest parsed from YAML parses the same from its JSON form.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"name":"pii","version":"1.0.0","stages":[]}`))
	f.Add([]byte("name: pii\nversion: 1.0.0\nstages:\n  - stage_name: a\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		client.ParseManifest(data)
	})
}

func TestModelFileHash(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(file, []byte("onnx bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := commitment.String([]byte("onnx bytes"))
	for _, path := range []string{file, dir} {
		if h, err := client.ModelFileHash(path); err != nil || h != want {
			t.Errorf("ModelFileHash(%s) = %s, %v; want %s", path, h, err, want)
		}
	}
	if _, err := client.ModelFileHash(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing model hashed")
	}
}
