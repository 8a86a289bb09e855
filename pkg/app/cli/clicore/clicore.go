// Package clicore is the plumbing the svc and svc-verify command trees
// share: streams with per-stream TTY detection, errors with exit codes and
// hints, the --output flag, configuration from the environment and a
// config file, trust material, and terminal-safe printing.
//
// It must stay network-free: svc-verify links it, and a dependency test
// (cmd/svc-verify) fails if it ever pulls in net/http, a database driver
// or the service.
package clicore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

// Exit codes. Scripts may depend on them; they are documented in the README.
const (
	ExitValid   = 0 // the document verified, or the command succeeded
	ExitInvalid = 1 // the document is invalid, or a hash does not match
	ExitUsage   = 2 // bad usage, or input that cannot be read or parsed
	ExitTrust   = 3 // trust material (trust bundle, TSA root, profile) missing or unusable
	ExitFailure = 4 // any other failure (I/O writing output, key generation)
)

// Streams are the standard streams a command uses, with TTY detection per stream.
type Streams struct {
	In       io.Reader
	Out      io.Writer
	Err      io.Writer
	InIsTTY  bool
	OutIsTTY bool
	ErrIsTTY bool
	Getenv   func(string) string
}

// SystemStreams returns the process's streams.
func SystemStreams() *Streams {
	return &Streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InIsTTY:  isatty.IsTerminal(os.Stdin.Fd()) || isatty.IsCygwinTerminal(os.Stdin.Fd()),
		OutIsTTY: isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
		ErrIsTTY: isatty.IsTerminal(os.Stderr.Fd()) || isatty.IsCygwinTerminal(os.Stderr.Fd()),
		Getenv:   os.Getenv,
	}
}

// ColorOut reports whether stdout gets color: a TTY, NO_COLOR unset
// (https://no-color.org) and TERM not "dumb".
func (s *Streams) ColorOut() bool {
	return s.OutIsTTY && s.Getenv("NO_COLOR") == "" && s.Getenv("TERM") != "dumb"
}

// MarksOut reports whether stdout gets status symbols (✓ ✗ ! –) rather than
// words: a TTY and TERM not "dumb". Scripts reading a pipe get words.
func (s *Streams) MarksOut() bool { return s.OutIsTTY && s.Getenv("TERM") != "dumb" }

// Error is a command failure with an exit code and an optional hint.
type Error struct {
	Code int
	Err  error
	Hint string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and hint.
func Errorf(code int, hint string, format string, a ...any) *Error {
	return &Error{Code: code, Err: fmt.Errorf(format, a...), Hint: hint}
}

// ExitError carries an exit code for a result that is already reported
// (for example an INVALID verdict): nothing more is printed.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// App is the state one command tree shares: its name, streams and
// configuration.
type App struct {
	Name    string
	Streams *Streams
	// Config fills unset flags from the environment and a config file.
	Config Config
	// WarnUnknownKeys makes LoadConfig warn about config file keys that
	// are no flag of the tree (svc knows every flag; svc-verify shares
	// the file with svc and knows only its own).
	WarnUnknownKeys bool
	cfgFile         string
}

// NewRoot returns the root command of a tree named name, and its App.
func NewRoot(name, short, long string, s *Streams, cfg Config) (*cobra.Command, *App) {
	a := &App{Name: name, Streams: s, Config: cfg}
	root := &cobra.Command{
		Use:           name,
		Short:         short,
		Long:          long,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.LoadConfig(cmd)
		},
	}
	// --version prints exactly what 'NAME version' prints.
	bv := BuildVersion()
	root.Version = bv.Version
	root.SetVersionTemplate(strings.NewReplacer("{{", "{{`{{`}}").Replace(bv.Line(name)) + "\n")
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.PersistentFlags().StringVar(&a.cfgFile, "config", "", "config file (default $XDG_CONFIG_HOME/svc/config.yaml; env SVC_CONFIG)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &Error{Code: ExitUsage, Err: err, Hint: fmt.Sprintf("run '%s --help' for usage", c.CommandPath())}
	})
	root.CompletionOptions.HiddenDefaultCmd = false
	return root, a
}

// Run executes root with args and returns the process exit code; errors
// are printed as age-style "NAME: error:" and "NAME: hint:" lines, or as a
// JSON object on stderr when the command was given --output json.
//
// gnark's logger is the program's to turn off (svc's Main does, since it
// proves); svc-verify links no gnark (pkg/zk/zkverify verifies with
// gnark-crypto alone), so Run does not import it.
func Run(root *cobra.Command, args []string, s *Streams, name string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(s.Err, "%s: error: internal error: %v\n%s: hint: this is a bug; please report it with the command you ran\n", name, r, name)
			code = ExitFailure
		}
	}()
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if cmd == nil {
		cmd = root
	}
	if err == nil {
		return ExitValid
	}
	var ee ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var ce *Error
	if !errors.As(err, &ce) {
		// cobra's own errors: unknown command or flag, wrong argument count.
		ce = &Error{Code: ExitUsage, Err: err, Hint: fmt.Sprintf("run '%s --help' for usage", cmd.CommandPath())}
	}
	if f := cmd.Flags().Lookup("output"); f != nil && f.Value.String() == OutputJSON {
		// Scripts that asked for JSON get the error as JSON too (on stderr).
		b, _ := json.MarshalIndent(errorReport{Error: errorBody{Program: name, ExitCode: ce.Code, Message: ce.Err.Error(), Hint: ce.Hint}}, "", "  ")
		fmt.Fprintf(s.Err, "%s\n", b)
		return ce.Code
	}
	fmt.Fprintf(s.Err, "%s: error: %s\n", name, ce.Err)
	if ce.Hint != "" {
		fmt.Fprintf(s.Err, "%s: hint: %s\n", name, ce.Hint)
	}
	return ce.Code
}

// errorReport is the JSON form of a failed command's error on stderr
// with --output json (README "Exit codes").
type errorReport struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Program  string `json:"program"`
	ExitCode int    `json:"exit_code"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
}

// AddEnumCompletions registers completions of values, by flag name, on
// every command of the tree that has such a flag.
func AddEnumCompletions(c *cobra.Command, values map[string][]string) {
	for name, vs := range values {
		if c.Flags().Lookup(name) != nil {
			c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp))
		}
	}
	for _, sub := range c.Commands() {
		AddEnumCompletions(sub, values)
	}
}

// envName is the environment variable that sets the flag name:
// SVC_ + upper case, dashes as underscores.
func envName(flag string) string {
	return "SVC_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}
