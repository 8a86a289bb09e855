package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/testvectors"
)

// TestTrustVectorsThroughBinaries runs the transparency log and trust root
// vectors (testdata/vectors/trust) through both binaries: the exit code,
// the verdict line, exactly the checks that must fail (--output json),
// and for a refused trust root update the refusal's code on stderr.
func TestTrustVectorsThroughBinaries(t *testing.T) {
	dir := filepath.Join(vectorsDir, testvectors.TrustDir)
	m, err := testvectors.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Vectors) < 20 {
		t.Fatalf("%d trust vectors; expected the full set", len(m.Vectors))
	}
	cache := t.TempDir()
	for _, v := range m.Vectors {
		for _, bin := range []string{"svc", "svc-verify"} {
			t.Run(bin+"/"+v.Name, func(t *testing.T) {
				args := append([]string{"verify", filepath.Join(dir, v.File)}, v.TrustArgs(dir)...)
				if v.TrustRootRefusal != "" {
					stderr, code := runStderr(t, cache, bin, args...)
					if code != v.Exit || !strings.Contains(stderr, "("+v.TrustRootRefusal+")") {
						t.Fatalf("exit %d, want %d naming %s:\n%s", code, v.Exit, v.TrustRootRefusal, stderr)
					}
					return
				}
				checkVerdict(t, cache, bin, args, v, true)
			})
		}
	}
}

// runStderr runs bin and returns its standard error and exit code.
func runStderr(t *testing.T, cache, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "SVC_CONFIG=", "NO_COLOR=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stderr.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return stderr.String(), 0
}
