package clicore

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
)

// TrustHint says where trust material comes from.
const TrustHint = "pass --trust-root trust-root.json or bundle.pem (or set SVC_TRUST_ROOT); an operator prints it with 'svc serve trust-bundle', and a service publishes it at /.well-known/svc/trust-bundle.pem"

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
	cmd.Flags().StringVar(&o.TrustRoot, "trust-root", "", "trust root: a svc.trust-root/v1 JSON document, or a PEM trust bundle of service public keys and TSA root certificates, read as valid forever (env "+TrustEnv+"; never read from a config file)")
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		o.FromFlag = c.Flags().Changed("trust-root")
		return a.LoadConfig(c)
	}
}

// Load loads the trust material as a bundle (every signing key and TSA
// root certificate of a JSON trust root, whatever its windows), refusing
// one named in a config file.
func (o *TrustOptions) Load() (*signing.Bundle, error) {
	_, b, err := o.LoadRoot()
	return b, err
}

// LoadRoot loads the trust material: a svc.trust-root/v1 document or a PEM
// trust bundle (trustroot.Load), and the bundle of its signing keys and
// TSA roots (verify.TrustFor). It refuses a name from a config file.
func (o *TrustOptions) LoadRoot() (*trustroot.Root, *signing.Bundle, error) {
	switch env := os.Getenv(TrustEnv); {
	case o.FromFlag:
		o.Source = "flag --trust-root"
	case o.TrustRoot != "" && o.TrustRoot == env:
		o.Source = "environment " + TrustEnv
	case o.TrustRoot != "":
		return nil, nil, Errorf(ExitTrust, TrustHint+"; remove trust-root from the config file",
			"trust root %s comes from a config file: trust material is read only from --trust-root or %s", Safe(o.TrustRoot), TrustEnv)
	default:
		return nil, nil, Errorf(ExitTrust, TrustHint, "no trust root given")
	}
	data, err := os.ReadFile(o.TrustRoot)
	if err != nil {
		return nil, nil, &Error{Code: ExitTrust, Err: fmt.Errorf("read trust root: %w", err), Hint: TrustHint}
	}
	root, err := trustroot.Load(data)
	if err != nil {
		return nil, nil, &Error{Code: ExitTrust, Err: fmt.Errorf("%s: %w", Safe(o.TrustRoot), err), Hint: "the trust root must be a svc.trust-root/v1 JSON document (docs/KEYS.md) or a PEM file of PUBLIC KEY (Ed25519) and CERTIFICATE blocks; " + TrustHint}
	}
	b := verify.TrustFor(root)
	if len(b.KeyIDs()) == 0 {
		return nil, nil, Errorf(ExitTrust, "add the service's PUBLIC KEY block to the bundle, or its vpec-signing key to the trust root", "trust root %s holds no Ed25519 signing key", Safe(o.TrustRoot))
	}
	return root, b, nil
}
