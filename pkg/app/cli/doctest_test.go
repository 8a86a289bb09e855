package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/doctest"
	"github.com/svc-gov/svc/pkg/app/cli"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
	"github.com/svc-gov/svc/pkg/ml/inference"
)

// The documentation test runs every shell block of README.md and docs/*.md
// as written (internal/doctest says how a block that cannot run is marked),
// each in a fresh directory made from one of these fixtures:
//
//	client  (the default) a service on loopback with organisation acme, on
//	        the default data directory; SVC_BASE_URL and SVC_API_KEY set;
//	        trust-bundle.pem, note.txt, pii-check.yaml, input.txt, pii-model/
//	        and examples/ (the repository's) in the directory
//	auditor client, plus what an auditor holds after a Bounded Inference
//	        check: vpec.json, profile.json, note.trace.json
//	vector  no service; vpec.json (also as clean.json) and trust-bundle.pem
//	        are the test vector the README's sample output shows
//	repo    no service; the repository's docs, testdata, examples and
//	        scripts directories (read-only use)
//	none    nothing; SVC_ADDR names a free loopback port, so a block's own
//	        `svc serve &` listens there
//
// So that the commands run unchanged on a test machine, /var/lib/svc is the
// fixture's data directory, localhost:8080, 127.0.0.1:8080 and
// https://svc.internal (the docs' remote service) its address,
// /tmp/ a directory of the test's, `make build` and `make ort` are satisfied
// already (the binaries on PATH, the library in SVC_ORT_LIB), and after a
// line that starts `svc serve` in the background the block waits until the
// port answers. Every command must succeed (bash -euo pipefail).

const (
	docsRoot     = "../../.."
	docsFixture  = "../../../testdata/doctest/fixture.sh"
	vectorForDoc = "vpec/valid/clean.json" // the vector README.md's sample output shows
	blockTimeout = 3 * time.Minute
)

var docFiles = []string{"README.md", "docs/API.md", "docs/BENCHMARKS.md", "docs/BOUNDED.md", "docs/CI.md",
	"docs/DASHBOARD.md", "docs/FORMATS.md", "docs/INTEROP.md", "docs/PROOFS.md", "docs/KEYS.md", "docs/OBSERVABILITY.md", "docs/OPERATIONS.md", "docs/TRANSPARENCY.md", "docs/VERIFYING.md"}

// TestDocsAccounted fails when a markdown file the documentation test does
// not read appears, or a shell block neither runs nor says why it cannot.
func TestDocsAccounted(t *testing.T) {
	all, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		rel := "docs/" + filepath.Base(p)
		if !slices.Contains(docFiles, rel) {
			t.Errorf("%s is not in docFiles: add it, so its shell blocks are run", rel)
		}
	}
	runs, skips := 0, 0
	for _, b := range docBlocks(t) {
		switch {
		case b.Runs():
			runs++
		case b.Skip != "":
			skips++
			t.Logf("%s: not run: %s", b.Name(), b.Skip)
		}
	}
	t.Logf("%d shell blocks run, %d marked as not runnable", runs, skips)
}

// TestDocs runs the documentation's shell blocks.
func TestDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("documentation test: runs every documented command (not in -short)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	ortLib, err := inference.LibraryPath("")
	if err != nil {
		t.Skipf("the documentation's Bounded Inference steps need ONNX Runtime (make ort): %v", err)
	}
	fx := &docFixture{ortLib: ortLib}
	t.Cleanup(func() {
		if fx.dir != "" {
			_ = os.RemoveAll(fx.dir)
		}
	})
	for _, b := range docBlocks(t) {
		if !b.Runs() {
			continue
		}
		t.Run(strings.ReplaceAll(b.Name(), "/", "_"), func(t *testing.T) {
			t.Parallel()
			runDocBlock(t, fx, b)
		})
	}
}

func docBlocks(t *testing.T) []doctest.Block {
	t.Helper()
	var out []doctest.Block
	for _, f := range docFiles {
		md, err := os.ReadFile(filepath.Join(docsRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := doctest.Parse(f, md)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			switch b.Setup {
			case "", "client", "auditor", "vector", "repo", "none":
			default:
				t.Fatalf("%s: unknown fixture setup=%s (want client, auditor, vector, repo or none)", b.Name(), b.Setup)
			}
			if b.Lang == "console" {
				if _, err := doctest.Console(b.Text); err != nil {
					t.Fatalf("%s: %v", b.Name(), err)
				}
			}
		}
		out = append(out, bs...)
	}
	return out
}

// docFixture makes the auditor fixture once, on first use.
type docFixture struct {
	ortLib string
	once   sync.Once
	dir    string
	err    error
}

func (fx *docFixture) get(t *testing.T) string {
	fx.once.Do(func() {
		dir, err := os.MkdirTemp("", "svc-doctest-fixture-")
		if err != nil {
			fx.err = err
			return
		}
		fx.dir = dir
		cmd := exec.Command("bash", docsFixture, dir)
		cmd.Env = append(docEnv(dir), "SVC_ORT_LIB="+fx.ortLib)
		if out, err := cmd.CombinedOutput(); err != nil {
			fx.err = fmt.Errorf("testdata/doctest/fixture.sh: %v\n%s", err, out)
		}
	})
	if fx.err != nil {
		t.Fatal(fx.err)
	}
	return fx.dir
}

// docEnv is the environment of a block: the test's PATH (with svc and
// svc-verify), and HOME and the XDG directories inside dir.
func docEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "TMPDIR" || k == "LANG" {
			env = append(env, kv)
		}
	}
	return append(env, "GOCACHE="+goEnv("GOCACHE"), "GOMODCACHE="+goEnv("GOMODCACHE"), "HOME="+dir+"/.doctest/home", "XDG_CONFIG_HOME="+dir+"/.doctest/config",
		"XDG_CACHE_HOME="+dir+"/.doctest/cache", "XDG_DATA_HOME="+dir+"/.doctest/data", "NO_COLOR=1",
		"GOFLAGS=-mod=mod", "GOPROXY=off")
}

func runDocBlock(t *testing.T, fx *docFixture, b doctest.Block) {
	work := t.TempDir()
	env := append(docEnv(work), "SVC_ORT_LIB="+fx.ortLib)
	data, addr := filepath.Join(work, "var-lib-svc"), freeLoopbackAddr(t)
	switch b.Setup {
	case "", "client", "auditor":
		if err := exec.Command("cp", "-a", fx.get(t)+"/.", work).Run(); err != nil {
			t.Fatal(err)
		}
		if b.Setup != "auditor" {
			for _, f := range []string{"vpec.json", "profile.json", "note.trace.json"} {
				if err := os.RemoveAll(filepath.Join(work, f)); err != nil {
					t.Fatal(err)
				}
			}
		}
		data = filepath.Join(work, ".doctest", "data", "svc") // the default data directory
		addr = startDocServer(t, work, data, env)
		key, err := os.ReadFile(filepath.Join(work, ".doctest", "env"))
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, strings.TrimSpace(string(key)), "SVC_BASE_URL=http://"+addr)
		examples, _ := filepath.Abs(filepath.Join(docsRoot, "examples"))
		if err := os.Symlink(examples, filepath.Join(work, "examples")); err != nil {
			t.Fatal(err)
		}
	case "vector":
		for src, dst := range map[string]string{
			filepath.Join(vectorsDir, vectorForDoc):               "vpec.json",
			filepath.Join(vectorsDir, "keys", "trust-bundle.pem"): "trust-bundle.pem",
		} {
			copyDocFile(t, src, filepath.Join(work, dst))
		}
		copyDocFile(t, filepath.Join(work, "vpec.json"), filepath.Join(work, "clean.json"))
	case "repo":
		for _, d := range []string{"docs", "testdata", "examples", "scripts"} {
			abs, err := filepath.Abs(filepath.Join(docsRoot, d))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(work, d)); err != nil {
				t.Fatal(err)
			}
		}
	case "none":
		env = append(env, "SVC_ADDR="+addr)
	}
	if b.Files != "" {
		if err := exec.Command("cp", "-a", filepath.Join(docsRoot, b.Files)+"/.", work).Run(); err != nil {
			t.Fatalf("%s: files=%s: %v", b.Name(), b.Files, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(work, ".doctest", "home"), 0o700); err != nil {
		t.Fatal(err)
	}
	script, wants := docScript(t, b, work, data, addr)
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = work, env
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: the block fails as written: %v\n--- block ---\n%s--- output ---\n%s", b.Name(), err, b.Text, tail(out, 4000))
	}
	for i, want := range wants {
		got, err := os.ReadFile(filepath.Join(work, ".doctest", fmt.Sprintf("out.%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want.Want {
			t.Errorf("%s: `%s` prints something else than the docs show (fix the docs, or mark the block no-compare if its output cannot be fixed)\n--- docs ---\n%s--- got ---\n%s",
				b.Name(), want.Cmd, want.Want, got)
		}
	}
}

// docRewrites maps the machine-specific parts of documented commands into
// the block's sandbox.
func docRewrite(text, work, data, addr string) string {
	return strings.NewReplacer(
		"/var/lib/svc", data,
		"localhost:8080", addr,
		"127.0.0.1:8080", addr,
		"https://svc.internal", "http://"+addr,
		"/tmp/", work+"/tmp/",
	).Replace(text)
}

var serveBackground = regexp.MustCompile(`(?m)^(\s*svc serve\b[^\n#|;]*&[ \t]*(#[^\n]*)?)$`)

const docPrelude = `set -euo pipefail
__doctest_wait_ready() {
	local host=${DOCTEST_ADDR%%:*} port=${DOCTEST_ADDR##*:}
	for _ in $(seq 200); do
		if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then return 0; fi
		sleep 0.05
	done
	echo "doctest: nothing listens on $DOCTEST_ADDR after the block's svc serve" >&2; return 1
}
make() {
	local t
	for t in "$@"; do
		case $t in
		build|ort|setup) [ -e bin ] || ln -s "$(dirname "$(command -v svc)")" bin ;; # the binaries (as bin/, and on PATH), the library in SVC_ORT_LIB
		demo) [ -e bin ] || ln -s "$(dirname "$(command -v svc)")" bin; SVC_BIN_DIR=$PWD/bin SVC_DEMO_DIR=$PWD/demo "$DOCTEST_REPO/scripts/demo.sh" ;;
		*) echo "doctest: make $t cannot run inside the documentation test: mark the block <!-- doctest: skip REASON -->" >&2; return 2 ;;
		esac
	done
}
trap 'jobs -p | xargs -r kill 2>/dev/null; wait 2>/dev/null || true' EXIT
mkdir -p tmp
`

// docScript returns the bash script that runs a block, and for a console
// block the commands whose output is compared (their outputs go to
// .doctest/out.N).
func docScript(t *testing.T, b doctest.Block, work, data, addr string) (string, []doctest.Command) {
	t.Helper()
	var s strings.Builder
	s.WriteString(docPrelude)
	repo, err := filepath.Abs(docsRoot)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&s, "export DOCTEST_ADDR=%s DOCTEST_REPO=%s\n", addr, repo)
	if b.Lang != "console" {
		text := serveBackground.ReplaceAllString(b.Text, "$1\n__doctest_wait_ready")
		s.WriteString(docRewrite(text, work, data, addr))
		return s.String(), nil
	}
	cmds, err := doctest.Console(b.Text)
	if err != nil {
		t.Fatal(err)
	}
	var wants []doctest.Command
	for i, c := range cmds {
		fmt.Fprintf(&s, "%s > .doctest/out.%d\n", docRewrite(c.Cmd, work, data, addr), i)
		if !b.NoCompare {
			wants = append(wants, c)
		}
	}
	return s.String(), wants
}

func startDocServer(t *testing.T, work, data string, env []string) string {
	t.Helper()
	addrFile := filepath.Join(work, ".doctest", "addr")
	_ = os.Remove(addrFile)
	var log bytes.Buffer
	cmd := exec.Command("svc", "serve", "--data-dir", data, "--addr", "127.0.0.1:0", "--addr-file", addrFile)
	cmd.Env, cmd.Stderr = env, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for range 200 {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("svc serve did not start: %s", log.String())
	return ""
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func copyDocFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return append([]byte("…"), b[len(b)-n:]...)
	}
	return b
}

// TestBenchmarkCommands checks the blocks that do not run because they are
// benchmarks: every make target, script, package, benchmark and test they
// name exists, so the commands still work when someone runs them.
func TestBenchmarkCommands(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(docsRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, b := range docBlocks(t) {
		if !strings.HasPrefix(b.Skip, "benchmark") {
			continue
		}
		for _, line := range strings.Split(b.Text, "\n") {
			words := shellWords(line)
			for len(words) > 0 && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(words[0]) {
				words = words[1:]
			}
			if len(words) == 0 {
				continue
			}
			checked++
			switch {
			case words[0] == "make":
				for _, target := range words[1:] {
					if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).Match(makefile) {
						t.Errorf("%s: make %s: no such target in the Makefile", b.Name(), target)
					}
				}
			case strings.HasPrefix(words[0], "scripts/"):
				if _, err := os.Stat(filepath.Join(docsRoot, words[0])); err != nil {
					t.Errorf("%s: %v", b.Name(), err)
				}
			case words[0] == "go" && len(words) > 1 && (words[1] == "test" || words[1] == "build"):
				checkGoCommand(t, b.Name(), words[1:])
			}
		}
	}
	if checked == 0 {
		t.Fatal("no benchmark commands found: the directive's reason must start with \"benchmark\"")
	}
}

// checkGoCommand checks a documented `go test` or `go build`: its packages
// exist, and its -run and -bench patterns match a test or benchmark there.
func checkGoCommand(t *testing.T, block string, args []string) {
	t.Helper()
	var pkgs []string
	patterns := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-run" || a == "-bench") && i+1 < len(args):
			patterns[a] = args[i+1]
			i++
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, strings.TrimSuffix(strings.TrimSuffix(a, "..."), "/"))
		case a == "-o" || a == "-benchtime" || a == "-count" || a == "-timeout":
			i++
		}
	}
	if len(pkgs) == 0 {
		t.Errorf("%s: go %s names no package", block, args[0])
		return
	}
	var names []string
	for _, p := range pkgs {
		dir := filepath.Join(docsRoot, p)
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s: package %s: %v", block, p, err)
			continue
		}
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Benchmark)\w+)\(`).FindAllSubmatch(src, -1) {
				names = append(names, string(m[1]))
			}
			return nil
		})
	}
	for flag, pat := range patterns {
		if pat == "^$" || pat == "." {
			continue
		}
		kind := map[string]string{"-run": "Test", "-bench": "Benchmark"}[flag]
		re, err := regexp.Compile(strings.SplitN(pat, "/", 2)[0])
		if err != nil {
			t.Errorf("%s: %s %q: %v", block, flag, pat, err)
			continue
		}
		found := false
		for _, n := range names {
			found = found || (strings.HasPrefix(n, kind) && re.MatchString(n))
		}
		if !found {
			t.Errorf("%s: %s %q matches no %s function in %v", block, flag, pat, kind, pkgs)
		}
	}
}

// shellWords splits a command line into words: quotes are removed, a #
// outside quotes starts a comment, and a trailing backslash is dropped.
func shellWords(line string) []string {
	var (
		words []string
		cur   strings.Builder
		quote rune
		in    bool
	)
	for _, r := range strings.TrimSuffix(strings.TrimSpace(line), `\`) {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '#' && !in:
			return words
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// helpExampleSkips are the --help examples that cannot run here, and why.
var helpExampleSkips = map[string]string{
	// A ceremony's steps need the directories of the steps before them;
	// docs/PROOFS.md's worked example (TestDocs) and
	// testdata/script/zk_ceremony.txtar run init, contribute, finalize and
	// verify in sequence.
	"svc zk ceremony init --dir p1 --phase 1 --power 14":                                                                                        zkCeremonySkip,
	"svc zk ceremony init --dir head --phase 2 --phase1 p1 --model head.onnx":                                                                   zkCeremonySkip,
	"svc zk ceremony init --dir demo --phase 2 --phase1 p1 --circuit demo":                                                                      zkCeremonySkip,
	`svc zk ceremony contribute --dir p1 --name "Example Org"`:                                                                                  zkCeremonySkip,
	"svc zk ceremony verify --dir head --phase1 p1":                                                                                             zkCeremonySkip,
	"svc zk ceremony verify --transcript head/transcript.json --verifying-key head/verifying.key":                                               zkCeremonySkip,
	"svc zk ceremony finalize --dir p1 --beacon 8f2e4d1c0b9a79685746352413021f0e":                                                               zkCeremonySkip,
	"svc zk ceremony finalize --dir head --beacon 0e1f2021324354657687a9b0c1d2e3f4 --phase1 p1":                                                 zkCeremonySkip,
	"svc calibrate merge avx512.json avx2.json sse42.json --out profile.json":                                                                   "needs measurements made on other machines (TestCrossCPU merges real ones from emulated AVX2 and SSE4.2 CPUs; testdata/script/calibrate_merge.txtar runs the command)",
	"svc serve --database postgres://svc@db.internal:5432/svc":                                                                                  "needs a PostgreSQL server at db.internal (TestScripts runs serve on PostgreSQL)",
	"svc admin backup --data-dir /var/lib/svc --out - | age -R backup-recipients.txt > /tmp/svc.tar.gz.age":                                     ageSkip,
	"age -d -i backup-key.txt /tmp/svc.tar.gz.age | svc admin restore --from - --data-dir /tmp/svc-restored":                                    ageSkip,
	"svc registry publish profile.json --data-dir /var/lib/svc --smtp 'smtp://mail.internal:25?from=registry@example.com'":                      "needs a mail server at mail.internal (pkg/service/notify tests send to a loopback SMTP listener)",
	"svc keys generate --uri 'pkcs11:token=svc-prod;object=tsa-2027?module-path=/usr/lib/softhsm/libsofthsm2.so' --algorithm ecdsa-p256-sha256": "needs a PKCS#11 token labelled svc-prod (TestServeRefusesUnusableKey and TestAllKeysInSoftHSM generate keys on a SoftHSM2 token)",
	"svc keys rotate --purpose vpec-signing --new-key 'pkcs11:token=svc-prod;object=vpec-2027' --at 2027-01-01T00:00:00Z":                       "needs a service's data directory and a PKCS#11 token (TestServeAfterRotation rotates a served data directory)",
	"svc keys compromise 9bc738dcd45b91e8 --at 2026-08-01T12:00:00Z":                                                                            "needs a service's data directory whose trust root lists the key (TestServeAfterRotation runs svc keys compromise)",
}

const ageSkip = "needs age and its keys: TestBackupThroughAge runs the same pipe (backup to age, age to restore) where age is installed"

const zkCeremonySkip = "a step of a ceremony: docs/PROOFS.md's worked example runs the steps in sequence"

// helpExamplePlaceholders: the ids an example elides stand for the
// fixture's own (testdata/doctest/fixture.sh writes them to .doctest/ids).
var helpExamplePlaceholders = []string{
	"pk_live_9c1e4b7a2f30", "$KEY_ID",
	"cal_req_0b5e...", "$REQUEST_ID",
	"run_0b7c…", "$RUN_ID",
	"vpec_41d2…", "$VPEC_ID",
	"sha256:…", "$MANIFEST_ID",
}

// helpExampleGiven is the state a command's examples presume, made before
// they run: an open run to record into, a close queued while the service
// was unreachable.
var helpExampleGiven = map[string]string{
	"svc log monitor": "svc log org-key > acme.orgkey",
	"svc log verify-consistency": "curl -sf \"$SVC_BASE_URL/log/checkpoint\" > old.checkpoint\n" +
		"svc run open --workflow-id claims-intake >/dev/null && svc close --out v2.json --wait-receipt 30s >/dev/null\n" +
		"curl -sf \"$SVC_BASE_URL/log/checkpoint\" > new.checkpoint",
	"svc record": "svc run open --workflow-id claims-intake >/dev/null",
	"svc close": "svc run open --workflow-id claims-intake >/dev/null\n" +
		"svc record --check pii_detection --manifest-id $MANIFEST_ID --result pass --input-file note.txt >/dev/null",
	"svc record-proof":             "MANIFEST_ID=$(svc manifest register examples/moderation.yaml)\nsvc run open --workflow-id moderation >/dev/null",
	"svc registry publish-circuit": "rm threshold.pk # a new dev circuit's key",
	"svc admin restore":            "svc admin backup --data-dir /var/lib/svc --out /tmp/svc-backup.tar.gz 2>/dev/null",
	"svc queue flush": "export SVC_QUEUE_PATH=$PWD/queue.jsonl\n(export SVC_BASE_URL=http://127.0.0.1:1\n" +
		"svc run open --workflow-id claims-intake >/dev/null\n" +
		"svc record --check pii_detection --manifest-id $MANIFEST_ID --result pass --input-file note.txt >/dev/null\n" +
		"svc close --out vpec.json >/dev/null 2>&1)",
}

// TestHelpExamples runs the examples of every command's --help, command by
// command, in the auditor fixture of TestDocs (a command whose examples
// start a service runs in the none fixture, the service in the background
// until its port answers).
func TestHelpExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every --help example (not in -short)")
	}
	ortLib, err := inference.LibraryPath("")
	if err != nil {
		t.Skipf("the examples' Bounded Inference steps need ONNX Runtime (make ort): %v", err)
	}
	fx := &docFixture{ortLib: ortLib}
	t.Cleanup(func() {
		if fx.dir != "" {
			_ = os.RemoveAll(fx.dir)
		}
	})
	streams := &cli.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}
	for _, root := range []*cobra.Command{cli.NewSvcCommand(streams), verifycmd.NewCommand(streams)} {
		walkCommands(root, func(c *cobra.Command) {
			if strings.TrimSpace(c.Example) == "" {
				return
			}
			lines := exampleCommands(c.Example)
			var run []string
			for _, l := range lines {
				if reason, ok := helpExampleSkips[l]; ok {
					t.Logf("%s: not run: %s: %s", c.CommandPath(), l, reason)
					continue
				}
				run = append(run, strings.NewReplacer(helpExamplePlaceholders...).Replace(l))
			}
			if len(run) == 0 {
				return
			}
			setup := "auditor"
			switch c.CommandPath() {
			case "svc serve", "svc keygen", "svc tsa init", "svc quickstart":
				setup = "none"
			case "svc run open", "svc record", "svc close", "svc calibrate run", "svc queue flush":
				setup = "client"
			}
			text := "set -a; . .doctest/ids 2>/dev/null || true; set +a\n" + helpExampleGiven[c.CommandPath()] + "\n" +
				strings.Join(run, "\n") + "\n"
			text = serveForeground.ReplaceAllString(text, "$1 &\n__doctest_wait_ready")
			text = strings.ReplaceAll(text, "127.0.0.1:9090", "localhost:8080")
			b := doctest.Block{File: "help", Line: 1, Lang: "sh", Text: text, Setup: setup}
			t.Run(strings.ReplaceAll(c.CommandPath(), " ", "_"), func(t *testing.T) {
				t.Parallel()
				runDocBlock(t, fx, b)
			})
		})
	}
}

// serveForeground matches an example that runs the service in the
// foreground (not `svc serve trust-bundle`).
var serveForeground = regexp.MustCompile(`(?m)^(svc serve(?: --[^\n]*)?)$`)

func walkCommands(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, f)
	}
}

// exampleCommands splits a cobra Example into commands: indentation and
// comment lines dropped, backslash continuations joined.
func exampleCommands(example string) []string {
	var out []string
	cont := false
	for _, l := range strings.Split(example, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case cont:
			out[len(out)-1] += "\n  " + l
		case l == "" || strings.HasPrefix(l, "#"):
			continue
		default:
			out = append(out, l)
		}
		cont = strings.HasSuffix(l, `\`)
	}
	return out
}
