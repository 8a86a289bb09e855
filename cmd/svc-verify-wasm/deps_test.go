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
// inference or command-line code.
var forbidden = []struct{ path, why string }{
	{"net/http/...", "the offline verifier page never uses the network"},
	{"net/smtp", "the offline verifier page never uses the network"},
	{"database/sql/...", "the page reads no database"},
	{"modernc.org/...", "the embedded SQLite engine belongs to svc serve"},
	{"github.com/jackc/...", "the PostgreSQL driver belongs to svc serve"},
	{"github.com/svc-gov/svc/pkg/server/...", "the service is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/dashboard/...", "the dashboard is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/store/...", "the stores are not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/client/...", "the service client is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/notify/...", "e-mail is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/inference/...", "inference (ONNX Runtime, cgo) is svc's replay audit"},
	{"github.com/svc-gov/svc/pkg/cli/...", "the page renders the report itself; no command-line code"},
	{"github.com/spf13/...", "no command-line code"},
}

// allowedSvc are the only svc packages the page may link: the
// verification library and what it is built on.
var allowedSvc = map[string]bool{
	"github.com/svc-gov/svc/cmd/svc-verify-wasm": true,
	"github.com/svc-gov/svc/pkg/webverify":       true,
	"github.com/svc-gov/svc/pkg/vpec":            true,
	"github.com/svc-gov/svc/pkg/profile":         true,
	"github.com/svc-gov/svc/pkg/signing":         true,
	"github.com/svc-gov/svc/pkg/timestamp":       true,
	"github.com/svc-gov/svc/pkg/canonical":       true,
	"github.com/svc-gov/svc/pkg/commitment":      true,
	"github.com/svc-gov/svc/pkg/disclosure":      true,
	"github.com/svc-gov/svc/pkg/document":        true,
	"github.com/svc-gov/svc/pkg/merkle":          true,
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
		{[]string{"fmt", "syscall/js", "github.com/svc-gov/svc/pkg/vpec"}, 0},
		{[]string{"net/http"}, 1},
		{[]string{"net/http/httptrace", "net/smtp"}, 2},
		{[]string{"github.com/svc-gov/svc/pkg/server"}, 2}, // forbidden and not allowed
		{[]string{"github.com/svc-gov/svc/pkg/calibration"}, 1},
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
	cmd := exec.Command(gobin, "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), "syscall/js") || !strings.Contains(string(out), "github.com/svc-gov/svc/pkg/vpec\n") {
		t.Fatalf("go list -deps printed an unexpected list:\n%s", out)
	}
	for _, v := range violations(deps) {
		t.Errorf("the WebAssembly verifier links %s", v)
	}
}
