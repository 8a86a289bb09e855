// Package scripts holds the tests of the shell scripts in this directory.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// probe is a module with fuzz targets under svc's module path (so
// fuzz.sh instruments it): FuzzFine never fails, FuzzFinds fails on
// inputs the fuzzer reaches in well under a second. FUNC is written func
// in the probe: fuzz.sh finds targets by "func Fuzz" at the start of a
// line, and this package has none of its own.
var probe = map[string]string{
	"go.mod": "module github.com/svc-gov/svc/fuzzprobe\n\ngo 1.24\n",
	"probe.go": `package probe

// Odd reports whether s starts with "xyz".
func Odd(s string) bool { return len(s) >= 3 && s[0] == 'x' && s[1] == 'y' && s[2] == 'z' }
`,
	"probe_test.go": `package probe

import "testing"

FUNC FuzzFine(f *testing.F) {
	f.Add("a")
	f.Fuzz(func(t *testing.T, s string) { _ = Odd(s) })
}
`,
}

const finds = `
FUNC FuzzFinds(f *testing.F) {
	f.Add("a")
	f.Fuzz(func(t *testing.T, s string) {
		if Odd(s) {
			t.Fatalf("found %q", s)
		}
	})
}
`

// runFuzz runs fuzz.sh in a copy of probe (with extra appended to its
// test file) and returns its output and error.
func runFuzz(t *testing.T, extra string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range probe {
		if name == "probe_test.go" {
			text = strings.ReplaceAll(text+extra, "FUNC ", "func ")
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FUZZTIME=300000x", "GOFLAGS=", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), dir, err
}

// TestFuzzScript: scripts/fuzz.sh runs every Fuzz target of a package
// from the binary it builds, exits 0 when none fails, and when one fails
// exits non-zero, prints the failure and leaves the failing input under
// the package's testdata/fuzz, as go test -fuzz does.
func TestFuzzScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and fuzzes a probe module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, _, err := runFuzz(t, "")
	if err != nil || !strings.Contains(out, "fuzz: github.com/svc-gov/svc/fuzzprobe FuzzFine (300000x)") || !strings.Contains(out, "fuzz: 1 targets ran") {
		t.Fatalf("a passing target: %v\n%s", err, out)
	}
	out, dir, err := runFuzz(t, finds)
	if err == nil || !strings.Contains(out, "--- FAIL: FuzzFinds") || !strings.Contains(out, `found "xyz`) {
		t.Fatalf("a failing target: exit %v, want a failure naming FuzzFinds\n%s", err, out)
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, "testdata", "fuzz", "FuzzFinds", "*")); len(kept) != 1 {
		t.Errorf("failing inputs kept under testdata/fuzz/FuzzFinds: %v, want one\n%s", kept, out)
	}
}
