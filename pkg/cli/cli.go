// Package cli builds the svc and svc-verify command trees. Commands are thin
// shells over the library packages; every tree is built by a function, so
// there is no global command state.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
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

// errorf returns an *Error with the given code and hint.
func errorf(code int, hint string, format string, a ...any) *Error {
	return &Error{Code: code, Err: fmt.Errorf(format, a...), Hint: hint}
}

// exitError carries an exit code for a result that is already reported
// (for example an INVALID verdict): nothing more is printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// app is the state one command tree shares: streams and configuration.
type app struct {
	name    string
	streams *Streams
	v       *viper.Viper
	cfgFile string
}

// Main runs the svc command with args (without the program name) and
// returns the process exit code.
func Main(args []string, s *Streams) int { return run(NewSvcCommand(s), args, s, "svc") }

// VerifyMain runs the svc-verify command and returns the exit code.
func VerifyMain(args []string, s *Streams) int {
	return run(NewVerifyCommand(s), args, s, "svc-verify")
}

func run(root *cobra.Command, args []string, s *Streams, name string) (code int) {
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
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ce *Error
	if !errors.As(err, &ce) {
		// cobra's own errors: unknown command or flag, wrong argument count.
		ce = &Error{Code: ExitUsage, Err: err, Hint: fmt.Sprintf("run '%s --help' for usage", cmd.CommandPath())}
	}
	if f := cmd.Flags().Lookup("output"); f != nil && f.Value.String() == outputJSON {
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

func newRoot(name, short, long string, s *Streams) (*cobra.Command, *app) {
	a := &app{name: name, streams: s, v: viper.New()}
	root := &cobra.Command{
		Use:           name,
		Short:         short,
		Long:          long,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.loadConfig(cmd)
		},
	}
	// --version prints what 'NAME version' prints first.
	bv := BuildVersion()
	root.Version = bv.Version
	root.SetVersionTemplate(fmt.Sprintf("%s %s (commit %s, %s, %s)\n", name, bv.Version, orUnknown(bv.Commit), bv.GoVersion, bv.Platform))
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

// loadConfig binds SVC_* environment variables and the config file to the
// flags of cmd: a flag given on the command line wins, then the
// environment, then the config file.
func (a *app) loadConfig(cmd *cobra.Command) error {
	a.v.SetEnvPrefix("SVC")
	a.v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	a.v.AutomaticEnv()
	path := a.cfgFile
	if path == "" {
		path = a.streams.Getenv("SVC_CONFIG")
	}
	explicit := path != ""
	if path == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			path = dir + "/svc/config.yaml"
		}
	}
	if path != "" {
		a.v.SetConfigFile(path)
		if err := a.v.ReadInConfig(); err != nil {
			var notFound viper.ConfigFileNotFoundError
			_, statErr := os.Stat(path)
			if explicit || (statErr == nil && !errors.As(err, &notFound)) {
				return errorf(ExitUsage, "fix the file or point --config / SVC_CONFIG elsewhere", "config file %s: %v", path, err)
			}
		}
	}
	// svc knows every flag; svc-verify shares the file with svc and
	// knows only its own, so only svc judges the keys.
	if a.v.ConfigFileUsed() != "" && a.name == "svc" {
		a.warnUnknownKeys(cmd.Root(), a.v.ConfigFileUsed())
	}
	var bindErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "config" || f.Name == "help" {
			return
		}
		if !f.Changed && a.v.IsSet(f.Name) {
			if err := cmd.Flags().Set(f.Name, a.v.GetString(f.Name)); err != nil && bindErr == nil {
				bindErr = errorf(ExitUsage, "fix SVC_"+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))+" or the config file", "%s from environment or config: %v", f.Name, err)
			}
		}
	})
	return bindErr
}

// warnUnknownKeys warns about each key of the config file that is no flag
// of any command of the tree (a typo would otherwise be ignored silently).
func (a *app) warnUnknownKeys(root *cobra.Command, file string) {
	known := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, k := range a.v.AllKeys() {
		if a.v.InConfig(k) && !known[k] {
			fmt.Fprintf(a.streams.Err, "%s: warning: config file %s: unknown key %q (no %s command has a flag of that name); ignored\n", a.name, file, k, a.name)
		}
	}
}

// NewSvcCommand builds the full svc command tree.
func NewSvcCommand(s *Streams) *cobra.Command {
	root, a := newRoot("svc", "Governance proof toolkit: record checks, issue and verify VPECs",
		`svc records that governance checks ran on a workflow without sending the data
they ran on, and verifies the resulting credentials (VPECs) and model drift
profiles offline.`, s)
	root.AddCommand(
		a.verifyCmd(),
		a.verifyProfileCmd(),
		a.hashCmd(),
		a.keygenCmd(),
		a.tsaCmd(),
		a.serveCmd(),
		a.adminCmd(),
		a.registryCmd(),
		a.runCmd(),
		a.recordCmd(),
		a.closeCmd(),
		a.manifestCmd(),
		a.calibrateCmd(),
		a.queueCmd(),
		a.quickstartCmd(),
		a.modelCmd(),
		a.traceCmd(),
		a.exportCmd(),
		a.versionCmd(),
	)
	addEnumCompletions(root)
	return root
}

// NewVerifyCommand builds the svc-verify command tree: the offline,
// network-free verifier.
func NewVerifyCommand(s *Streams) *cobra.Command {
	root, a := newRoot("svc-verify", "Offline verifier for VPECs, model profiles and commitment hashes",
		`svc-verify checks VPECs and model drift profiles offline against a trust
bundle, and confirms commitment hashes. It never uses the network.`, s)
	root.AddCommand(a.verifyCmd(), a.verifyProfileCmd(), a.hashCmd(), a.versionCmd())
	addEnumCompletions(root)
	return root
}

// output flag values.
const (
	outputText = "text"
	outputJSON = "json"
)

func addOutputFlag(cmd *cobra.Command, target *string) {
	cmd.Flags().StringVarP(target, "output", "o", outputText, "output format: text or json")
}

func checkOutput(o string) error {
	if o != outputText && o != outputJSON {
		return errorf(ExitUsage, "use --output text or --output json", "unknown output format %q", o)
	}
	return nil
}

// palette returns colour functions that are no-ops when color is off.
type palette struct{ green, red, yellow, dim, bold func(a ...any) string }

func (a *app) palette() palette {
	on := a.streams.ColorOut()
	mk := func(attrs ...color.Attribute) func(a ...any) string {
		c := color.New(attrs...)
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c.SprintFunc()
	}
	return palette{mk(color.FgGreen), mk(color.FgRed, color.Bold), mk(color.FgYellow), mk(color.Faint), mk(color.Bold)}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
