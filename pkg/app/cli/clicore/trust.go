package clicore

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/signing"
)

// TrustHint says where trust material comes from.
const TrustHint = "pass --trust-root bundle.pem (or set SVC_TRUST_ROOT); an operator prints it with 'svc serve trust-bundle', and a service publishes it at /.well-known/svc/trust-bundle.pem"

// TrustEnv is the one environment variable trust material may come from.
const TrustEnv = "SVC_TRUST_ROOT"

// TrustOptions is the flag group for trust material. Trust material comes
// only from the --trust-root flag or the SVC_TRUST_ROOT environment
// variable, never from a config file: a trust root that silently sits in a
// config file would make every verification VALID against it.
type TrustOptions struct {
	TrustRoot string
	// FromFlag records whether --trust-root was on the command line, taken
	// before the config file and environment fill unset flags (set by the
	// hook Add registers).
	FromFlag bool
	// Source says where the bundle's name came from, once loaded.
	Source string
}

// Add registers --trust-root on cmd and a pre-run hook that notes whether
// the flag was given before the app's config loading fills unset flags.
func (o *TrustOptions) Add(a *App, cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.TrustRoot, "trust-root", "", "trust bundle PEM: service public keys and TSA root certificates (env "+TrustEnv+"; never read from a config file)")
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		o.FromFlag = c.Flags().Changed("trust-root")
		return a.LoadConfig(c)
	}
}

// Load loads the trust bundle, refusing one named in a config file.
func (o *TrustOptions) Load() (*signing.Bundle, error) {
	switch env := os.Getenv(TrustEnv); {
	case o.FromFlag:
		o.Source = "flag --trust-root"
	case o.TrustRoot != "" && o.TrustRoot == env:
		o.Source = "environment " + TrustEnv
	case o.TrustRoot != "":
		return nil, Errorf(ExitTrust, TrustHint+"; remove trust-root from the config file",
			"trust root %s comes from a config file: trust material is read only from --trust-root or %s", Safe(o.TrustRoot), TrustEnv)
	default:
		return nil, Errorf(ExitTrust, TrustHint, "no trust root given")
	}
	b, err := signing.LoadBundle(o.TrustRoot)
	if err != nil {
		return nil, &Error{Code: ExitTrust, Err: err, Hint: "the trust bundle must be a PEM file of PUBLIC KEY (Ed25519) and CERTIFICATE blocks; " + TrustHint}
	}
	if len(b.KeyIDs()) == 0 {
		return nil, Errorf(ExitTrust, "add the service's PUBLIC KEY block to the bundle", "trust bundle %s holds no Ed25519 public key", o.TrustRoot)
	}
	return b, nil
}
