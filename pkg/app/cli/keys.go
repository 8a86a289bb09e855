package cli

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
)

// Key file names written by keygen (signing.CreateKeyDir).
const (
	SigningKeyFile  = signing.SigningKeyFile
	PublicKeyFile   = signing.PublicKeyFile
	TrustBundleFile = signing.TrustBundleFile
	defaultKeyDir   = "svc-keys"
	defaultTSADir   = "svc-tsa"
)

// keygenOptions are the flags of svc keygen.
type keygenOptions struct {
	dir    string
	tsaDir string
	output string
}

// newCmdKeygen builds svc keygen; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdKeygen(a *app, runF func(*keygenOptions) error) *cobra.Command {
	o := &keygenOptions{}
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Create a service signing key and its trust bundle",
		Long: `Create an Ed25519 service signing key (PKCS#8 PEM, mode 0600), its public
key (SPKI PEM) and a trust bundle holding the public key and, with
--tsa-dir, the root certificate of a timestamp authority made by
'svc tsa init'. Existing keys are never overwritten.

The files are what openssl reads: 'openssl pkey -in signing-key.pem -pubout'
prints the public key.`,
		Example: `  svc tsa init --dir svc-tsa
  svc keygen --dir svc-keys --tsa-dir svc-tsa`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runKeygen(o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", defaultKeyDir, "directory to write the key files to")
	cmd.Flags().StringVar(&o.tsaDir, "tsa-dir", "", "include the root certificate of the timestamp authority in this directory")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runKeygen creates the key directory (signing.CreateKeyDir).
func (a *app) runKeygen(o *keygenOptions) error {
	var roots []*x509.Certificate
	if o.tsaDir != "" {
		tsa, err := timestamp.LoadAuthority(o.tsaDir)
		if err != nil {
			return &Error{Code: ExitTrust, Err: err, Hint: "create one with 'svc tsa init --dir " + o.tsaDir + "'"}
		}
		roots = append(roots, tsa.Root())
	}
	res, err := signing.CreateKeyDir(o.dir, roots...)
	if errors.Is(err, signing.ErrKeyExists) {
		return errorf(ExitUsage, "choose another --dir, or remove the old key if you really mean to replace it", "%s already exists; refusing to overwrite a signing key", filepath.Join(o.dir, SigningKeyFile))
	}
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	// Creating trust material is never silent (stdout may be JSON).
	fmt.Fprintf(a.streams.Err, "%s: created a new signing key %s in %s; verifiers trust it only once they hold %s\n", a.name, res.KeyID, o.dir, res.TrustBundle)
	if o.output == outputJSON {
		return a.writeJSON(res)
	}
	w := a.streams.Out
	fmt.Fprintf(w, "key id:       %s\n", res.KeyID)
	fmt.Fprintf(w, "private key:  %s (keep it secret)\n", res.PrivateKey)
	fmt.Fprintf(w, "public key:   %s\n", res.PublicKey)
	fmt.Fprintf(w, "trust bundle: %s (%d TSA root certificate(s))\n", res.TrustBundle, res.TSARoots)
	if res.TSARoots == 0 {
		fmt.Fprintf(a.streams.Err, "%s: hint: the bundle has no TSA root, so timestamps cannot be verified with it; rerun with --tsa-dir after 'svc tsa init'\n", a.name)
	}
	return nil
}

// tsaInitOptions are the flags of svc tsa init.
type tsaInitOptions struct {
	dir    string
	name   string
	output string
}

func (a *app) tsaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tsa",
		Short: "Manage a built-in RFC 3161 timestamp authority",
	}
	cmd.AddCommand(newCmdTSAInit(a, nil))
	return cmd
}

// newCmdTSAInit builds svc tsa init; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdTSAInit(a *app, runF func(*tsaInitOptions) error) *cobra.Command {
	o := &tsaInitOptions{}
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create a timestamp authority: ECDSA P-256 root and TSA certificate",
		Long: `Create a built-in RFC 3161 timestamp authority in a directory: a self-signed
ECDSA P-256 root certificate (root.pem), a TSA certificate signed by it
with the critical timeStamping extended key usage (tsa.pem), and the TSA
private key (tsa-key.pem, mode 0600). An existing authority is never
overwritten. Add root.pem to a trust bundle with 'svc keygen --tsa-dir'.`,
		Example: `  svc tsa init --dir svc-tsa --name "Example Corp TSA"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runTSAInit(o)
		},
	}
	initCmd.Flags().StringVar(&o.dir, "dir", defaultTSADir, "directory to create the authority in")
	initCmd.Flags().StringVar(&o.name, "name", "", "common name prefix of the certificates (default \"svc built-in TSA\")")
	addOutputFlag(initCmd, &o.output)
	return initCmd
}

// runTSAInit creates the authority (timestamp.InitAuthority).
func (a *app) runTSAInit(o *tsaInitOptions) error {
	tsa, err := timestamp.InitAuthority(o.dir, timestamp.AuthorityOptions{Name: o.name})
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &Error{Code: ExitUsage, Err: err, Hint: "an authority already exists there; choose another --dir"}
		}
		return &Error{Code: ExitFailure, Err: err}
	}
	// Creating trust material is never silent (stdout may be JSON).
	fmt.Fprintf(a.streams.Err, "%s: created a new timestamp authority in %s (root %s)\n", a.name, o.dir, tsa.Root().Subject.CommonName)
	res := map[string]string{
		"dir":         o.dir,
		"root":        tsa.Root().Subject.CommonName,
		"certificate": tsa.Certificate().Subject.CommonName,
		"not_after":   tsa.Certificate().NotAfter.UTC().Format("2006-01-02"),
	}
	if o.output == outputJSON {
		return a.writeJSON(res)
	}
	fmt.Fprintf(a.streams.Out, "timestamp authority created in %s\n  root:        %s\n  certificate: %s (valid until %s)\n", o.dir, res["root"], res["certificate"], res["not_after"])
	return nil
}
