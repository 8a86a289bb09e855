package verifycmd

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
)

// parseFlags runs the command newCmd builds under a fresh svc-verify root,
// as svc-verify would with args and env as the only SVC_ environment (no
// config file), with a runF that keeps the options instead of running:
// the options (nil when the command stopped before) and its error.
func parseFlags[T any](t *testing.T, newCmd func(*clicore.App, func(*T) error) *cobra.Command, env map[string]string, args ...string) (*T, error) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SVC_") {
			t.Setenv(k, "")
		}
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for k, v := range env {
		t.Setenv(k, v)
	}
	s := &clicore.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
	root, a := clicore.NewRoot("svc-verify", "", "", s, &clicore.FileConfig{})
	var got *T
	cmd := newCmd(a, func(o *T) error { got = o; return nil })
	root.AddCommand(cmd)
	root.SetArgs(append([]string{cmd.Name()}, args...))
	_, err := root.ExecuteC()
	if err == nil && got == nil {
		t.Fatalf("%s %q: no error and runF not called", cmd.Name(), args)
	}
	return got, err
}

// exitCode is the code clicore.Run exits with for err.
func exitCode(err error) int {
	var ce *clicore.Error
	var ee clicore.ExitError
	switch {
	case err == nil:
		return clicore.ExitValid
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ce):
		return ce.Code
	}
	return clicore.ExitUsage
}

// flagCase is one row of a flag table: args and environment in; the
// options (base changed by want) or the exit code of a refusal out.
type flagCase[T any] struct {
	name string
	args []string
	env  map[string]string
	want func(*T)
	code int
}

func runFlagCases[T any](t *testing.T, newCmd func(*clicore.App, func(*T) error) *cobra.Command, base []string, defaults func() *T, cases []flagCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(t, newCmd, tc.env, append(append([]string(nil), base...), tc.args...)...)
			if tc.code != 0 {
				if got != nil || exitCode(err) != tc.code {
					t.Fatalf("options %+v, exit %d (%v), want exit %d", got, exitCode(err), err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := defaults()
			if tc.want != nil {
				tc.want(want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("options\n got %+v\nwant %+v", *got, *want)
			}
		})
	}
}

func newVerify(a *clicore.App, runF func(*VerifyOptions) error) *cobra.Command {
	return NewCmdVerify(a, nil, runF)
}

func TestVerifyFlags(t *testing.T) {
	defaults := func() *VerifyOptions { return &VerifyOptions{path: "vpec.json", output: clicore.OutputText} }
	tb := clicore.TrustOptions{TrustRoot: "tb.pem", FromFlag: true}
	runFlagCases(t, newVerify, []string{"vpec.json"}, defaults, []flagCase[VerifyOptions]{
		{name: "defaults"},
		{name: "--trust-root", args: []string{"--trust-root", "tb.pem"}, want: func(o *VerifyOptions) { o.trust = tb }},
		{name: "SVC_TRUST_ROOT", env: map[string]string{"SVC_TRUST_ROOT": "env.pem"}, want: func(o *VerifyOptions) { o.trust = clicore.TrustOptions{TrustRoot: "env.pem"} }},
		{name: "flag over SVC_TRUST_ROOT", args: []string{"--trust-root", "tb.pem"}, env: map[string]string{"SVC_TRUST_ROOT": "env.pem"}, want: func(o *VerifyOptions) { o.trust = tb }},
		{name: "--profile repeated, --profile-dir", args: []string{"--profile", "a.json", "--profile", "b.json", "--profile-dir", "p"},
			want: func(o *VerifyOptions) { o.profiles, o.profileDir = []string{"a.json", "b.json"}, "p" }},
		{name: "--circuit repeated, --circuit-dir", args: []string{"--circuit", "h.json", "--circuit", "t.json", "--circuit-dir", "c"},
			want: func(o *VerifyOptions) { o.circuits = circuitOptions{files: []string{"h.json", "t.json"}, dir: "c"} }},
		{name: "SVC_PROFILE_DIR and SVC_CIRCUIT_DIR", env: map[string]string{"SVC_PROFILE_DIR": "envp", "SVC_CIRCUIT_DIR": "envc"},
			want: func(o *VerifyOptions) { o.profileDir, o.circuits.dir = "envp", "envc" }},
		{name: "--require-clean --require-passed -o json", args: []string{"--require-clean", "--require-passed", "-o", "json"},
			want: func(o *VerifyOptions) { o.requireClean, o.requirePassed, o.output = true, true, clicore.OutputJSON }},
		{name: "SVC_REQUIRE_CLEAN", env: map[string]string{"SVC_REQUIRE_CLEAN": "true"}, want: func(o *VerifyOptions) { o.requireClean = true }},
		{name: "bad SVC_REQUIRE_CLEAN", env: map[string]string{"SVC_REQUIRE_CLEAN": "maybe"}, code: clicore.ExitUsage},
		{name: "bad --output", args: []string{"-o", "yaml"}, code: clicore.ExitUsage},
		{name: "the replay audit is svc's", args: []string{"--trace", "t.json"}, code: clicore.ExitUsage},
		{name: "two VPECs", args: []string{"b.json"}, code: clicore.ExitUsage},
		{name: "--receipt --require-log --log-checkpoint --consistency-proof", args: []string{"--receipt", "r.json", "--require-log", "--log-checkpoint", "cp.txt", "--consistency-proof", "p.txt"},
			want: func(o *VerifyOptions) {
				o.log.receipt, o.log.requireLog, o.log.logCheckpoint, o.log.consistencyProof = "r.json", true, "cp.txt", "p.txt"
			}},
		{name: "--witness-policy, --trust-root-update repeated", args: []string{"--witness-policy", "w.txt", "--trust-root-update", "2.json", "--trust-root-update", "3.json"},
			want: func(o *VerifyOptions) {
				o.log.witnessPolicy, o.log.rootUpdates = "w.txt", []string{"2.json", "3.json"}
				o.log.fromFlag = map[string]bool{"witness-policy": true, "trust-root-update": true}
			}},
		{name: "SVC_WITNESS_POLICY", env: map[string]string{"SVC_WITNESS_POLICY": "envw.txt"}, want: func(o *VerifyOptions) { o.log.witnessPolicy = "envw.txt" }},
		{name: "--consistency-proof without --log-checkpoint", args: []string{"--consistency-proof", "p.txt"}, code: clicore.ExitUsage},
	})
	if got, err := parseFlags(t, newVerify, nil, "-"); err != nil || got.path != "-" {
		t.Errorf("verify -: %+v %v", got, err)
	}
}

func TestVerifyCircuitFlags(t *testing.T) {
	defaults := func() *verifyCircuitOptions { return &verifyCircuitOptions{path: "c.json", output: clicore.OutputText} }
	runFlagCases(t, newCmdVerifyCircuit, []string{"c.json"}, defaults, []flagCase[verifyCircuitOptions]{
		{name: "defaults"},
		{name: "--trust-root --transcript", args: []string{"--trust-root", "tb.pem", "--transcript", "t.json"},
			want: func(o *verifyCircuitOptions) {
				o.trust, o.transcript = clicore.TrustOptions{TrustRoot: "tb.pem", FromFlag: true}, "t.json"
			}},
		{name: "SVC_TRUST_ROOT and SVC_TRANSCRIPT", env: map[string]string{"SVC_TRUST_ROOT": "env.pem", "SVC_TRANSCRIPT": "envt.json"},
			want: func(o *verifyCircuitOptions) {
				o.trust, o.transcript = clicore.TrustOptions{TrustRoot: "env.pem"}, "envt.json"
			}},
		{name: "bad --output", args: []string{"-o", "yaml"}, code: clicore.ExitUsage},
	})
	if got, err := parseFlags(t, newCmdVerifyCircuit, nil); got != nil || exitCode(err) != clicore.ExitUsage {
		t.Errorf("without an entry: exit %d (%v), want %d", exitCode(err), err, clicore.ExitUsage)
	}
}

const sha = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestHashFlags(t *testing.T) {
	defaults := func() *hashOptions { return &hashOptions{args: []string{}, output: clicore.OutputText} }
	runFlagCases(t, newCmdHash, nil, defaults, []flagCase[hashOptions]{
		{name: "standard input"},
		{name: "a text", args: []string{"patient note"}, want: func(o *hashOptions) { o.args = []string{"patient note"} }},
		{name: "--file -f", args: []string{"-f", "in.txt"}, want: func(o *hashOptions) { o.file = "in.txt" }},
		{name: "--expect", args: []string{"--expect", sha}, want: func(o *hashOptions) { o.expect = sha }},
		{name: "--algorithm poseidon2", args: []string{"--algorithm", "poseidon2"}, want: func(o *hashOptions) { o.algorithm = "poseidon2" }},
		{name: "--algorithm sha256 --expect", args: []string{"--algorithm", "sha256", "--expect", sha}, want: func(o *hashOptions) { o.algorithm, o.expect = "sha256", sha }},
		{name: "SVC_ALGORITHM", env: map[string]string{"SVC_ALGORITHM": "poseidon2"}, want: func(o *hashOptions) { o.algorithm = "poseidon2" }},
		{name: "SVC_FILE", env: map[string]string{"SVC_FILE": "env.txt"}, want: func(o *hashOptions) { o.file = "env.txt" }},
		{name: "unknown --algorithm", args: []string{"--algorithm", "md5"}, code: clicore.ExitUsage},
		{name: "bad --expect", args: []string{"--expect", "sha256:00"}, code: clicore.ExitUsage},
		{name: "--algorithm against --expect", args: []string{"--algorithm", "poseidon2", "--expect", sha}, code: clicore.ExitUsage},
		{name: "a text and --file", args: []string{"x", "--file", "in.txt"}, code: clicore.ExitUsage},
		{name: "two texts", args: []string{"x", "y"}, code: clicore.ExitUsage},
		{name: "bad --output", args: []string{"-o", "yaml"}, code: clicore.ExitUsage},
	})
}

// TestVerifyTrustFlagsNotFromConfig: a witness policy or trust root update
// named in a config file is refused (exit 3), as --trust-root is.
func TestVerifyTrustFlagsNotFromConfig(t *testing.T) {
	for _, key := range []string{"witness-policy", "trust-root-update"} {
		t.Run(key, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(cfg, []byte(key+": x.json\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := parseFlags(t, newVerify, map[string]string{"SVC_CONFIG": cfg}, "vpec.json")
			if got != nil || exitCode(err) != clicore.ExitTrust {
				t.Fatalf("options %+v, exit %d (%v), want exit %d", got, exitCode(err), err, clicore.ExitTrust)
			}
		})
	}
}
