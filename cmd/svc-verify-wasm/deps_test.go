package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the packages the in-browser verifier must never link,
// directly or not (a path ending in "/..." forbids the tree): the page
// promises no network request after it loads, so no HTTP stack; and it is
// the verification library only, so no database, service, client,
// inference, command-line, circuit or prover code.
var forbidden = []struct{ path, why string }{
	{"net/http/...", "the offline verifier page never uses the network"},
	{"net/smtp", "the offline verifier page never uses the network"},
	{"net/rpc/...", "the offline verifier page never uses the network"},
	{"os/exec", "the page runs no program"},
	{"database/sql/...", "the page reads no database"},
	{"modernc.org/...", "the embedded SQLite engine belongs to svc serve"},
	{"github.com/jackc/...", "the PostgreSQL driver belongs to svc serve"},
	{"github.com/svc-gov/svc/pkg/service/server/...", "the service is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/service/dashboard/...", "the dashboard is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/service/store/...", "the stores are not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/client/...", "the service client is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/service/notify/...", "e-mail is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/ml/inference/...", "inference (ONNX Runtime, cgo) is svc's replay audit"},
	{"github.com/svc-gov/svc/pkg/app/cli/...", "the page renders the report itself; no command-line code"},
	{"github.com/spf13/...", "no command-line code"},
	{"go.opentelemetry.io/...", "tracing (OpenTelemetry) belongs to svc serve and the client"},
	{"github.com/prometheus/...", "metrics (Prometheus) belong to svc serve"},
	{"github.com/svc-gov/svc/pkg/zk", "svc's provers and circuits: the page links pkg/zk/zkverify only"},
	{"github.com/svc-gov/svc/pkg/zk/head", "the mlp_head circuit and its prover: the page links pkg/zk/zkverify only"},
	{"github.com/svc-gov/svc/pkg/zk/conditions", "the condition circuits: the page links pkg/zk/zkverify only"},
	{"github.com/svc-gov/svc/pkg/zk/ceremony/...", "setup ceremonies are not verification"},
	{"github.com/consensys/gnark/frontend/cs/r1cs", "gnark's circuit compiler belongs to svc's provers"},
	{"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup", "gnark's setup ceremony is not verification"},
	{"github.com/consensys/gnark/std/...", "gnark's circuit gadgets are not verification"},
}

// pending are forbidden edges still to be removed, each allowed only
// while the one package named imports it (as in cmd/svc-verify's
// deps_test.go); once it does not, this test fails until the allowance is
// deleted. None: zkverify verifies with gnark-crypto alone, so gnark's
// semver (database/sql/driver) and GKR bookkeeping are gone.
var pending = map[string]string{}

// allowedSvc are the only svc packages the page may link: the
// verification library and what it is built on.
var allowedSvc = map[string]bool{
	"github.com/svc-gov/svc/cmd/svc-verify-wasm": true,
	"github.com/svc-gov/svc/pkg/app/webverify":   true,
	"github.com/svc-gov/svc/pkg/core/verify":     true, // the verifier: one file per check
	"github.com/svc-gov/svc/pkg/core/vpec":       true, // the VPEC format
	"github.com/svc-gov/svc/pkg/core/issue":      true, // issue.Summarize: the summary check recomputes the issuer's summary
	"github.com/svc-gov/svc/pkg/core/api":        true, // api.EnvironmentOf: the environment an api_key_id selects (summary check)
	"github.com/svc-gov/svc/pkg/core/names":      true,
	"github.com/svc-gov/svc/pkg/core/gap":        true,
	"github.com/svc-gov/svc/pkg/core/stage":      true,
	"github.com/svc-gov/svc/pkg/core/profile":    true,
	"github.com/svc-gov/svc/pkg/core/signing":    true,
	"github.com/svc-gov/svc/pkg/core/timestamp":  true,
	"github.com/svc-gov/svc/pkg/core/canonical":  true,
	"github.com/svc-gov/svc/pkg/core/commitment": true,
	"github.com/svc-gov/svc/pkg/core/disclosure": true,
	"github.com/svc-gov/svc/pkg/core/document":   true,
	"github.com/svc-gov/svc/pkg/core/merkle":     true,
	"github.com/svc-gov/svc/pkg/zk/zkverify":     true,
	"github.com/svc-gov/svc/pkg/core/tlog":       true, // the transparency check: receipts, checkpoints, witness policies
	"github.com/svc-gov/svc/pkg/core/trustroot":  true, // trust roots: keys with purposes and windows
	"github.com/svc-gov/svc/internal/fsutil":     true,
}

func violations(deps []string) []string {
	var out []string
	for _, d := range deps {
		for _, f := range forbidden {
			p, tree := strings.CutSuffix(f.path, "/...")
			if d == p || (tree && strings.HasPrefix(d, p+"/")) {
				out = append(out, d+" ("+f.why+")")
				break
			}
		}
		if strings.HasPrefix(d, "github.com/svc-gov/svc/") && !allowedSvc[d] {
			out = append(out, d+" (not one of the verification packages the page may link: add it to allowedSvc only if it is one)")
		}
	}
	return out
}

func TestViolations(t *testing.T) {
	for _, c := range []struct {
		deps []string
		want int
	}{
		{[]string{"fmt", "syscall/js", "github.com/svc-gov/svc/pkg/core/vpec"}, 0},
		{[]string{"net/http"}, 1},
		{[]string{"net/http/httptrace", "net/smtp"}, 2},
		{[]string{"github.com/svc-gov/svc/pkg/service/server"}, 2}, // forbidden and not allowed
		{[]string{"github.com/svc-gov/svc/pkg/ml/calibration"}, 1},
		{[]string{"github.com/svc-gov/svc/pkg/zk/zkverify", "github.com/consensys/gnark/backend/groth16/bn254"}, 0},
		{[]string{"database/sql/driver", "github.com/consensys/gnark/std/gkrapi/gkr"}, 2}, // allowed only as pending edges
		{[]string{"database/sql"}, 1},
		{[]string{"github.com/svc-gov/svc/pkg/zk"}, 2},                             // forbidden and not allowed
		{[]string{"github.com/consensys/gnark/std/rangecheck", "os/exec"}, 2},      // circuit gadget, program runner
		{[]string{"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"}, 1}, // ceremony
	} {
		if got := violations(c.deps); len(got) != c.want {
			t.Errorf("violations(%q) = %q, want %d", c.deps, got, c.want)
		}
	}
}

// TestDependencies lists what the WebAssembly verifier links when built
// as the page builds it (GOOS=js GOARCH=wasm) and fails on any forbidden
// package.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go list -deps: %v", err)
	}
	var deps []string
	importers := map[string][]string{} // package -> the packages importing it
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps = append(deps, f[0])
		for _, imp := range f[1:] {
			importers[imp] = append(importers[imp], f[0])
		}
	}
	has := map[string]bool{}
	for _, d := range deps {
		has[d] = true
	}
	if len(deps) < 10 || !has["syscall/js"] || !has["github.com/svc-gov/svc/pkg/core/verify"] || !has["github.com/svc-gov/svc/pkg/zk/zkverify"] {
		t.Fatalf("go list -deps printed an unexpected list:\n%s", out)
	}
	skip := map[string]bool{}
	for pkg, by := range pending {
		switch got := importers[pkg]; {
		case len(got) == 0:
			t.Errorf("pending[%q] is no longer needed: delete it", pkg)
		case len(got) == 1 && got[0] == by:
			skip[pkg] = true
		}
	}
	var left []string
	for _, d := range deps {
		if !skip[d] {
			left = append(left, d)
		}
	}
	for _, v := range violations(left) {
		t.Errorf("the WebAssembly verifier links %s (imported by %s)", v, strings.Join(importers[strings.Fields(v)[0]], ", "))
	}
}
