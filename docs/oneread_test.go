package docs_test

// These tests hold the three verifiers (svc-verify, the by-hand recipe and
// the Python second implementation) to one reading of docs/ where an
// independent implementer found two (issue 21, "One reading of the docs").

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/document"
)

// TestTooLargeOneVerdict: a VPEC above 256 MiB is UNREADABLE — TOO LARGE
// (exit 2) for the recipe and the Python verifier, as for svc-verify
// (pkg/cli/verifycmd TestVerifyTooLarge), neither reading it whole.
// Found: the recipe had no limit at all.
func TestTooLargeOneVerdict(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(document.MaxSize + 1); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	t.Run("by hand", func(t *testing.T) {
		requireTools(t)
		out, code := runScript(t, big, bundle)
		if code != 2 || !strings.HasSuffix(out, "UNREADABLE (by hand)\n") || !strings.Contains(out, "(TOO LARGE)") {
			t.Fatalf("exit %d, want 2, UNREADABLE (by hand) and TOO LARGE; output:\n%s", code, out)
		}
	})
	t.Run("python", func(t *testing.T) {
		python3(t)
		r := runSecondImpl(t, []pyJob{{File: big, TrustRoot: bundle}})[0]
		if r.Verdict != "UNREADABLE — TOO LARGE" || r.Exit != 2 {
			t.Fatalf("second implementation: %q (exit %d), want UNREADABLE — TOO LARGE (exit 2)", r.Verdict, r.Exit)
		}
	})
}
