package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/internal/doctest"
)

// TestCIExamplesAreTheDocs: docs/CI.md's two jobs are examples/ci's
// record.sh and gate.sh, byte for byte, so the scripts testdata/script's
// ci.txtar runs (the job twice in one workspace, the gate on a VPEC that
// fails it and on one that passes) are the ones the docs show.
func TestCIExamplesAreTheDocs(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(docsRoot, "docs", "CI.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := doctest.Parse("docs/CI.md", md)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"record.sh", "gate.sh"} {
		file, err := os.ReadFile(filepath.Join(docsRoot, "examples", "ci", name))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, b := range blocks {
			found = found || b.Text == string(file)
		}
		if !found {
			t.Errorf("docs/CI.md has no block that is examples/ci/%s: copy the file into its block", name)
		}
	}
}
