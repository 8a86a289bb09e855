package cli

import (
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
)

// parseFlags runs the command newCmd builds under a fresh svc root, as
// svc would with args (after the command's name) and env as the only SVC_
// environment (no config file), but with a runF that keeps the options
// instead of running: the options the command would have run with (nil
// when it stopped before, on bad flags or arguments) and its error.
func parseFlags[T any](t *testing.T, newCmd func(*app, func(*T) error) *cobra.Command, env map[string]string, args ...string) (*T, error) {
	t.Helper()
	cleanEnv(t, env)
	s := &Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
	root, a := newRoot("svc", "", "", s)
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

// cleanEnv leaves env as the only SVC_ variables of the test's environment
// and points the default config file at an empty directory.
func cleanEnv(t *testing.T, env map[string]string) {
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
}

// flagCase is one row of a command's flag-parsing table: args (after the
// base arguments the test gives every row) and environment in, and either
// the options out (base options changed by want) or the exit code of a
// refused combination (runF not called).
type flagCase[T any] struct {
	name string
	args []string
	env  map[string]string
	want func(*T) // changes the base options; nil: the base options
	code int      // non-zero: the command fails with this exit code
}

// runFlagCases runs the table: each row's args are base followed by the
// row's, and its options must be base (the options of base alone) changed
// by want.
func runFlagCases[T any](t *testing.T, newCmd func(*app, func(*T) error) *cobra.Command, base []string, defaults func() *T, cases []flagCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(t, newCmd, tc.env, append(append([]string(nil), base...), tc.args...)...)
			if tc.code != 0 {
				if got != nil {
					t.Fatalf("ran with %+v, want exit %d", *got, tc.code)
				}
				if c := exitCode(err); c != tc.code {
					t.Fatalf("exit %d (%v), want %d", c, err, tc.code)
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

// exitCode is the code clicore.Run exits with for err.
func exitCode(err error) int {
	var ce *clicore.Error
	var ee clicore.ExitError
	switch {
	case err == nil:
		return ExitValid
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ce):
		return ce.Code
	}
	return ExitUsage // cobra's own: unknown flag, wrong argument count
}
