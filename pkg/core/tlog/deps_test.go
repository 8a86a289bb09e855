package tlog_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: the verification package links no HTTP stack, no cgo,
// not the Tessera log engine and no svc package but the JSON ones, as the
// offline verifier (svc-verify, CGO_ENABLED=0) and the WebAssembly page
// (GOOS=js) build it, so both stay small and network-free. The log
// writer and the monitor are other packages.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	forbidden := map[string]string{
		"net/http":                            "verification never uses the network",
		"runtime/cgo":                         "svc-verify is built with CGO_ENABLED=0",
		"database/sql":                        "verification reads no database",
		"github.com/transparency-dev/tessera": "the log engine belongs to the log writer and the monitor",
	}
	allowedSvc := map[string]bool{
		"github.com/svc-gov/svc/pkg/core/tlog":      true,
		"github.com/svc-gov/svc/pkg/core/canonical": true,
		"github.com/svc-gov/svc/pkg/core/document":  true,
	}
	for _, env := range [][]string{{"CGO_ENABLED=0"}, {"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}} {
		cmd := exec.Command(gobin, "list", "-deps", ".")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v go list -deps: %v", env, err)
		}
		deps := strings.Fields(string(out))
		if !strings.Contains(string(out), "\ngithub.com/transparency-dev/merkle/proof\n") {
			t.Fatalf("%v go list -deps printed an unexpected list:\n%s", env, out)
		}
		for _, d := range deps {
			for f, why := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%v: pkg/core/tlog links %s (%s)", env, d, why)
				}
			}
			if strings.HasPrefix(d, "github.com/svc-gov/svc/") && !allowedSvc[d] {
				t.Errorf("%v: pkg/core/tlog links %s, not one of the verification packages", env, d)
			}
		}
	}
}
