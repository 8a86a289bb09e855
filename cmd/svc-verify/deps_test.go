package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the import paths svc-verify must never link, directly or
// not, like the rules of Go's own go/build/deps_test.go: the verifier is
// small and network-free, so it links no HTTP stack, no database driver,
// no service, client or inference code and no ONNX Runtime binding. A path
// ending in "/..." forbids the path and everything under it.
var forbidden = []struct{ path, why string }{
	{"net/http/...", "svc-verify never uses the network"},
	{"database/sql/...", "svc-verify reads no database"},
	{"modernc.org/sqlite/...", "the embedded SQLite engine belongs to svc serve"},
	{"modernc.org/libc/...", "the embedded SQLite engine belongs to svc serve"},
	{"github.com/jackc/pgx/...", "the PostgreSQL driver belongs to svc serve"},
	{"github.com/svc-gov/svc/pkg/service/server/...", "the service is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/service/store/...", "the stores are not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/client/...", "the service client is not part of the verifier"},
	{"github.com/svc-gov/svc/pkg/ml/inference/...", "inference (ONNX Runtime, cgo) is svc's replay audit"},
	{"github.com/yalue/onnxruntime_go/...", "ONNX Runtime is svc's replay audit"},
	{"github.com/svc-gov/svc/pkg/app/cli", "pkg/app/cli builds the whole svc tree; svc-verify uses pkg/app/cli/verifycmd"},
	{"github.com/spf13/viper/...", "viper links net/http; svc-verify reads its config with clicore.FileConfig"},
	{"github.com/svc-gov/svc/pkg/service/keys/...", "signing keys (HSM, KMS) belong to svc; the verifier reads pkg/core/trustroot"},
	{"github.com/miekg/pkcs11/...", "PKCS#11 (cgo) is for signing only"},
	{"github.com/aws/...", "AWS KMS signing belongs to svc"},
	{"github.com/sigstore/sigstore/pkg/signature/kms/...", "Vault transit signing belongs to svc"},
	{"github.com/hashicorp/...", "Vault transit signing belongs to svc"},
	{"golang.org/x/oauth2/...", "Cloud KMS signing belongs to svc"},
	{"go.opentelemetry.io/...", "tracing (OpenTelemetry) belongs to svc serve and the client"},
	{"github.com/prometheus/...", "metrics (Prometheus) belong to svc serve"},
	{"github.com/consensys/gnark", "gnark (circuits, provers) is svc's; zkverify verifies Groth16 with gnark-crypto alone, and gnark's package initialisation was most of svc-verify's start-up"},
	{"github.com/consensys/gnark/...", "gnark (circuits, provers, logger, profiler) is svc's; zkverify verifies Groth16 with gnark-crypto alone"},
	{"github.com/svc-gov/svc/pkg/zk", "pkg/zk is the proving side; svc-verify verifies with pkg/zk/zkverify"},
	{"github.com/svc-gov/svc/pkg/zk/head", "the head circuit is the proving side"},
	{"github.com/svc-gov/svc/pkg/zk/conditions", "the condition circuits are the proving side"},
	{"github.com/google/pprof/...", "linked only by gnark's profiler; its package initialisation costs start-up"},
	{"github.com/rs/zerolog/...", "gnark's logger; svc-verify logs nothing"},
	{"google.golang.org/protobuf/...", "linked only by gnark's profiler and the prover"},
	{"github.com/consensys/gnark-crypto/ecc/bn254/fr/poseidon2", "its package initialisation parses the round constants of every width (ms of start-up); pkg/core/commitment has its own width-2 permutation"},
	{"github.com/consensys/gnark-crypto/ecc/bls12-377/...", "no other curve than BN254: their package initialisation costs start-up"},
	{"github.com/consensys/gnark-crypto/ecc/bls12-381/...", "no other curve than BN254"},
	{"github.com/consensys/gnark-crypto/ecc/bw6-761/...", "no other curve than BN254"},
}

// pending are forbidden edges still to be removed, each allowed only while
// the one package named imports it; once it does not, this test fails
// until the allowance is deleted.
var pending = map[string]string{}

// violations returns one line per package of deps that a rule forbids.
func violations(deps []string) []string {
	var out []string
	for _, d := range deps {
		for _, f := range forbidden {
			p, tree := strings.CutSuffix(f.path, "/...")
			if d == p || (tree && strings.HasPrefix(d, p+"/")) {
				out = append(out, fmt.Sprintf("%s (rule %s: %s)", d, f.path, f.why))
				break
			}
		}
	}
	return out
}

func TestViolations(t *testing.T) {
	cases := []struct {
		deps []string
		want int
	}{
		{[]string{"fmt", "net", "net/url", "crypto/x509"}, 0},
		{[]string{"net/http"}, 1},
		{[]string{"net/http/httptrace"}, 1},
		{[]string{"net/httpx"}, 0},
		{[]string{"modernc.org/sqlite/lib", "github.com/jackc/pgx/v5/pgconn"}, 2},
		{[]string{"github.com/svc-gov/svc/pkg/service/server", "github.com/svc-gov/svc/pkg/serverless"}, 1},
		{[]string{"github.com/svc-gov/svc/pkg/app/cli", "github.com/svc-gov/svc/pkg/app/cli/verifycmd"}, 1},
		{[]string{"github.com/yalue/onnxruntime_go"}, 1},
		{[]string{"github.com/svc-gov/svc/pkg/service/keys", "github.com/miekg/pkcs11", "github.com/svc-gov/svc/pkg/core/trustroot"}, 2},
	}
	for _, c := range cases {
		if got := violations(c.deps); len(got) != c.want {
			t.Errorf("violations(%q) = %q, want %d", c.deps, got, c.want)
		}
	}
}

// TestDependencies lists what svc-verify links, with and without cgo, and
// fails on any forbidden package.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	// go test puts the go command that runs it first on PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	for _, cgo := range []string{"0", "1"} {
		cmd := exec.Command(gobin, "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		cmd.Args = append(cmd.Args[:2], "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("CGO_ENABLED=%s go list -deps: %v", cgo, err)
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
		if len(deps) < 10 {
			t.Fatalf("CGO_ENABLED=%s go list -deps printed %d packages", cgo, len(deps))
		}
		skip := map[string]bool{}
		for pkg, by := range pending {
			got := importers[pkg]
			switch {
			case len(got) == 0:
				t.Errorf("pending[%q] is no longer needed: delete it", pkg)
			case len(got) == 1 && got[0] == by:
				t.Logf("CGO_ENABLED=%s: still pending: %s imports %s", cgo, by, pkg)
				for _, d := range deps {
					if d == pkg || strings.HasPrefix(d, pkg+"/") {
						skip[d] = true
					}
				}
			}
		}
		var left []string
		for _, d := range deps {
			if !skip[d] {
				left = append(left, d)
			}
		}
		for _, v := range violations(left) {
			t.Errorf("CGO_ENABLED=%s: svc-verify imports %s (imported by %s)", cgo, v, strings.Join(importers[strings.Fields(v)[0]], ", "))
		}
	}
}
