package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/doctest"
)

// TestReceiptByHand runs VERIFYING.md's "Checking a log receipt by hand"
// block on every receipt vector: the valid receipt passes, and each
// receipt that must fail (another VPEC, another log, another index, a
// forged or missing cosignature) stops the block with an error.
func TestReceiptByHand(t *testing.T) {
	requireTools(t)
	blocks, err := doctest.Parse("VERIFYING.md", mustRead(t, "VERIFYING.md"))
	if err != nil {
		t.Fatal(err)
	}
	var script string
	for _, b := range blocks {
		if strings.Contains(b.Text, "receipt verified by hand") {
			script = b.Text
		}
	}
	const valid = "receipt=$dir/receipt.json"
	if !strings.Contains(script, valid) {
		t.Fatalf("VERIFYING.md has no receipt block reading %q", valid)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		receipt string
		ok      bool
	}{
		{"receipt.json", true},
		{"receipt-other-vpec.json", false},
		{"receipt-other-log.json", false},
		{"receipt-other-index.json", false},
		{"receipt-forged-cosignature.json", false},
		{"receipt-missing-cosignature.json", false},
	} {
		t.Run(c.receipt, func(t *testing.T) {
			work := t.TempDir()
			if err := os.Symlink(filepath.Join(repo, "testdata"), filepath.Join(work, "testdata")); err != nil {
				t.Fatal(err)
			}
			s := strings.Replace(script, valid, "receipt=$dir/"+c.receipt, 1)
			cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+s)
			cmd.Dir = work
			out, err := cmd.CombinedOutput()
			if (err == nil) != c.ok {
				t.Errorf("error %v, want ok=%v\n%s", err, c.ok, out)
			}
			if c.ok && !strings.Contains(string(out), "receipt verified by hand: index 5 of 8") {
				t.Errorf("output:\n%s", out)
			}
		})
	}
}
