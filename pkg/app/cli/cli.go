// Package cli builds the svc and svc-verify command trees. Commands are thin
// shells over the library packages; every tree is built by a function, so
// there is no global command state. The verifier's commands and the
// plumbing both trees share live in pkg/app/cli/verifycmd and pkg/app/cli/clicore,
// which link no network, database or service code.
package cli

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/consensys/gnark/logger"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
)

// Exit codes. Scripts may depend on them; they are documented in the README.
const (
	ExitValid   = clicore.ExitValid   // the document verified, or the command succeeded
	ExitInvalid = clicore.ExitInvalid // the document is invalid, or a hash does not match
	ExitUsage   = clicore.ExitUsage   // bad usage, or input that cannot be read or parsed
	ExitTrust   = clicore.ExitTrust   // trust material (trust bundle, TSA root, profile) missing or unusable
	ExitFailure = clicore.ExitFailure // any other failure (I/O writing output, key generation)
)

// Streams are the standard streams a command uses, with TTY detection per stream.
type Streams = clicore.Streams

// SystemStreams returns the process's streams.
func SystemStreams() *Streams { return clicore.SystemStreams() }

// Error is a command failure with an exit code and an optional hint.
type Error = clicore.Error

// errorf returns an *Error with the given code and hint.
func errorf(code int, hint string, format string, a ...any) *Error {
	return clicore.Errorf(code, hint, format, a...)
}

// exitError carries an exit code for a result that is already reported
// (for example an INVALID verdict): nothing more is printed.
type exitError struct{ code int }

func (e exitError) Error() string { return clicore.ExitError{Code: e.code}.Error() }
func (e exitError) Unwrap() error { return clicore.ExitError{Code: e.code} }

// app is the state one command tree shares: streams and configuration.
type app struct {
	name    string
	streams *Streams
	core    *clicore.App
}

// Main runs the svc command with args (without the program name) and
// returns the process exit code. It turns gnark's logger off first: the
// proof libraries leave it to the program (pkg/zk), and gnark writes debug
// lines ("DBG prover done") to stdout, between svc's own results.
func Main(args []string, s *Streams) int {
	logger.Disable()
	return clicore.Run(NewSvcCommand(s), args, s, "svc")
}

// VerifyMain runs the svc-verify command and returns the exit code.
func VerifyMain(args []string, s *Streams) int { return verifycmd.Main(args, s) }

func newRoot(name, short, long string, s *Streams) (*cobra.Command, *app) {
	root, core := clicore.NewRoot(name, short, long, s, newViperConfig())
	// svc knows every flag, so it judges the config file's keys.
	core.WarnUnknownKeys = true
	return root, &app{name: name, streams: s, core: core}
}

// viperConfig reads svc's configuration: SVC_* environment variables and a
// config file in any format viper reads.
type viperConfig struct{ v *viper.Viper }

func newViperConfig() *viperConfig {
	v := viper.New()
	v.SetEnvPrefix("SVC")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	return &viperConfig{v: v}
}

func (c *viperConfig) Read(path string) error {
	c.v.SetConfigFile(path)
	err := c.v.ReadInConfig()
	var notFound viper.ConfigFileNotFoundError
	if errors.As(err, &notFound) {
		return fs.ErrNotExist
	}
	return err
}

func (c *viperConfig) FileUsed() string { return c.v.ConfigFileUsed() }

func (c *viperConfig) Lookup(name string) (string, bool) {
	if !c.v.IsSet(name) {
		return "", false
	}
	return c.v.GetString(name), true
}

func (c *viperConfig) FileKeys() []string {
	var keys []string
	for _, k := range c.v.AllKeys() {
		if c.v.InConfig(k) {
			keys = append(keys, k)
		}
	}
	return keys
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
		a.verifyCircuitCmd(),
		newCmdRecordProof(a, nil),
		a.hashCmd(),
		newCmdKeygen(a, nil),
		a.keysCmd(),
		a.tsaCmd(),
		a.serveCmd(),
		newCmdHealthcheck(a, nil),
		a.adminCmd(),
		a.registryCmd(),
		a.runCmd(),
		newCmdRecord(a, nil),
		newCmdClose(a, nil),
		a.manifestCmd(),
		a.calibrateCmd(),
		a.queueCmd(),
		a.vpecCmd(),
		a.logCmd(),
		a.quickstartCmd(),
		a.modelCmd(),
		newCmdTrace(a, nil),
		newCmdExport(a, nil),
		a.zkCmd(),
		a.versionCmd(),
	)
	addEnumCompletions(root)
	return root
}

// NewVerifyCommand builds the svc-verify command tree: the offline,
// network-free verifier.
func NewVerifyCommand(s *Streams) *cobra.Command { return verifycmd.NewCommand(s) }

// output flag values.
const (
	outputText = clicore.OutputText
	outputJSON = clicore.OutputJSON
)

func addOutputFlag(cmd *cobra.Command, target *string) { clicore.AddOutputFlag(cmd, target) }

func checkOutput(o string) error { return clicore.CheckOutput(o) }

func (a *app) writeJSON(v any) error { return a.core.WriteJSON(v) }

// readInput reads a document from path, or standard input when path is "-".
func (a *app) readInput(path, what string) ([]byte, error) { return a.core.ReadInput(path, what) }

// safe makes text from a document fit to print on a terminal.
func safe(s string) string { return clicore.Safe(s) }
