package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/internal/doctest"
)

// TestCIExamplesAreTheDocs: docs/CI.md's two jobs are examples/ci's
// record.sh and gate.sh, byte for byte, so the scripts testdata/script's
// ci.txtar runs twice in one workspace are the ones the docs show.
func TestCIExamplesAreTheDocs(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(docsRoot, "docs", "CI.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := doctest.Parse("docs/CI.md", md)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range blocks {
		if b.Files == "examples/ci" {
			got = append(got, b.Text)
		}
	}
	want := []string{"record.sh", "gate.sh"}
	if len(got) != len(want) {
		t.Fatalf("docs/CI.md has %d blocks with files=examples/ci, want %d (%v)", len(got), len(want), want)
	}
	for i, name := range want {
		file, err := os.ReadFile(filepath.Join(docsRoot, "examples", "ci", name))
		if err != nil {
			t.Fatal(err)
		}
		if got[i] != string(file) {
			t.Errorf("docs/CI.md's block %d is not examples/ci/%s: copy the file into the block", i+1, name)
		}
	}
}
