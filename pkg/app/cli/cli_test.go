package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/app/cli"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/service/dashboard"
)

const (
	vectorsDir = "../../../testdata/vectors"
	scriptsDir = "../../../testdata/script"
)

// TestMain makes svc and svc-verify available as real executables on PATH
// (this test binary, re-executed), for the scripts and the corpus test.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"svc":        func() { os.Exit(cli.Main(os.Args[1:], cli.SystemStreams())) },
		"svc-verify": func() { os.Exit(cli.VerifyMain(os.Args[1:], cli.SystemStreams())) },
	})
}

// TestScripts runs the txtar scripts in testdata/script against the binaries.
func TestScripts(t *testing.T) {
	vectors, err := filepath.Abs(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs("../../../examples")
	if err != nil {
		t.Fatal(err)
	}
	ortLib, _ := inference.LibraryPath("") // before the scripts get their own cache directory
	testscript.Run(t, testscript.Params{
		Dir: scriptsDir,
		Setup: func(e *testscript.Env) error {
			e.Setenv("VECTORS", vectors)
			e.Setenv("EXAMPLES", examples)
			// examples/local.sh --go runs `go run`: the caches of this
			// build, and no download.
			e.Setenv("GOMODCACHE", goEnv("GOMODCACHE"))
			e.Setenv("GOCACHE", goEnv("GOCACHE"))
			e.Setenv("GOFLAGS", "-mod=mod")
			e.Setenv("GOPROXY", "off")
			e.Setenv("SVC_ORT_LIB", ortLib)
			e.Setenv("NO_COLOR", "")
			e.Setenv("XDG_CONFIG_HOME", e.WorkDir+"/.config")
			e.Setenv("XDG_CACHE_HOME", e.WorkDir+"/.cache")
			return nil
		},
		// [verifypage]: this build embeds the offline verifier page (make
		// web ran before the test binary was built).
		Condition: func(cond string) (bool, error) {
			if cond == "verifypage" {
				return dashboard.EmbeddedVerifyPage(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exitcode N prog args...: run prog and require exit status N.
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exitcode N prog [args...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exitcode: %v", err)
				}
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("exitcode: %v", err)
				}
				if got != want {
					ts.Fatalf("%s exited %d, want %d", args[1], got, want)
				}
			},
		},
	})
}

// TestVectorsThroughBinaries runs every test vector through both real
// binaries and checks the exit code, the verdict line and, through
// --output json, exactly the checks that must fail.
func TestVectorsThroughBinaries(t *testing.T) {
	m, err := testvectors.Load(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	trust := filepath.Join(vectorsDir, m.TrustBundle)
	cache := t.TempDir()
	for _, v := range m.Vectors {
		for _, bin := range []string{"svc", "svc-verify"} {
			t.Run(bin+"/"+v.Name, func(t *testing.T) {
				cmd := "verify"
				if v.Kind == "profile" {
					cmd = "verify-profile"
				}
				args := []string{cmd, filepath.Join(vectorsDir, v.File), "--trust-root", trust}
				for _, p := range v.Profiles {
					args = append(args, "--profile", filepath.Join(vectorsDir, p))
				}
				for _, c := range v.Circuits {
					args = append(args, "--circuit", filepath.Join(vectorsDir, c))
				}
				checkVerdict(t, cache, bin, args, v, v.Kind == "vpec")
			})
		}
	}
}

// checkVerdict runs bin with args and checks v's exit code and verdict
// line; with withJSON, also --output json: the same exit code, verdict and
// exactly v's failing checks.
func checkVerdict(t *testing.T, cache, bin string, args []string, v testvectors.Vector, withJSON bool) {
	t.Helper()
	text, code := run(t, cache, bin, args...)
	if code != v.Exit {
		t.Fatalf("exit %d, want %d\n%s", code, v.Exit, text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, v.Verdict) {
		t.Errorf("verdict line %q, want %q", last, v.Verdict)
	}
	if !withJSON {
		return
	}
	out, code := run(t, cache, bin, append(args, "--output", "json")...)
	if code != v.Exit {
		t.Fatalf("--output json: exit %d, want %d", code, v.Exit)
	}
	var r verify.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--output json is not JSON: %v\n%s", err, out)
	}
	var failed []string
	for _, c := range r.Checks {
		if c.Status == verify.Fail {
			failed = append(failed, string(c.Name))
		}
	}
	want := slices.Clone(v.Fails)
	slices.Sort(want)
	slices.Sort(failed)
	if !slices.Equal(failed, want) || r.Verdict != v.Verdict {
		t.Errorf("json: failed %v verdict %q, want %v %q", failed, r.Verdict, want, v.Verdict)
	}
}

func run(t *testing.T, cache, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "SVC_CONFIG=", "NO_COLOR=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "goroutine ") {
		t.Fatalf("stderr shows a panic:\n%s", stderr.String())
	}
	return stdout.String(), 0
}

// TestGeneratedDocsUpToDate fails when docs/cli, docs/man or completions/
// differ from what the command trees generate: run `go run ./internal/gendocs`.
func TestGeneratedDocsUpToDate(t *testing.T) {
	tmp := t.TempDir()
	if err := cli.GenerateDocs(filepath.Join(tmp, "docs"), filepath.Join(tmp, "completions")); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"docs/cli", "docs/man", "completions"} {
		want := readTree(t, filepath.Join(tmp, sub))
		got := readTree(t, filepath.Join("../../..", sub))
		for name, w := range want {
			if g, ok := got[name]; !ok {
				t.Errorf("%s/%s is missing; run: go run ./internal/gendocs", sub, name)
			} else if g != w {
				t.Errorf("%s/%s is stale; run: go run ./internal/gendocs", sub, name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s/%s is no longer generated; run: go run ./internal/gendocs", sub, name)
			}
		}
	}
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = string(b)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// goEnv is `go env NAME`, or "" without a go command.
func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
