package cli_test

import (
	"bytes"
	"encoding/json"
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

// TestVerifyCircuitKeyWindow: verify-circuit holds a circuit entry's key
// to its circuit-signing window at the entry's published_at, as the
// zk_proofs check does, and names the refusal in its verdict.
func TestVerifyCircuitKeyWindow(t *testing.T) {
	dir := filepath.Join(vectorsDir, testvectors.TrustDir)
	entry := filepath.Join(vectorsDir, testvectors.ThresholdCircuitFile)
	cache := t.TempDir()
	for _, c := range []struct {
		root, verdict string
		exit          int
	}{
		{"trust-root-circuit.json", "VALID", 0},
		{"trust-root-circuit-key-expired.json", "INVALID — CIRCUIT KEY EXPIRED", 1},
		{"trust-root-circuit-key-not-yet-valid.json", "INVALID — CIRCUIT KEY NOT YET VALID", 1},
		{"trust-root-circuit-key-compromised.json", "INVALID — CIRCUIT KEY COMPROMISED", 1},
		{"trust-root.json", "INVALID — CIRCUIT KEY WRONG PURPOSE", 1},
	} {
		t.Run(c.root, func(t *testing.T) {
			out, code := run(t, cache, "svc-verify", "verify-circuit", entry, "--trust-root", filepath.Join(dir, c.root), "--output", "json")
			var r struct {
				Verdict string `json:"verdict"`
				Error   string `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if code != c.exit || r.Verdict != c.verdict {
				t.Fatalf("exit %d %q (%s), want %d %q", code, r.Verdict, r.Error, c.exit, c.verdict)
			}
			if c.exit != 0 && !strings.Contains(r.Error, "992625da2c2d48bd") {
				t.Errorf("the error does not name the key: %s", r.Error)
			}
		})
	}
}
