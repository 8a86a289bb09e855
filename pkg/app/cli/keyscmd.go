package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/service/keys"
	"github.com/svc-gov/svc/pkg/service/server"
)

func (a *app) keysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Service keys in files, HSMs and KMSs, and the trust root that dates them",
		Long: `Create keys, and rotate or mark compromised the keys of a service's trust
root (svc.trust-root/v1, docs/KEYS.md). Keys are named by key URI: file:,
pkcs11: (the PIN from the URI's pin-source or SVC_PKCS11_PIN, never a flag),
hashivault:, awskms:, gcpkms:.`,
	}
	cmd.AddCommand(newCmdKeysGenerate(a, nil), newCmdKeysTrustRoot(a, nil), newCmdKeysRotate(a, nil),
		newCmdKeysCompromise(a, nil), newCmdKeysConvert(a, nil))
	return cmd
}

// keysGenerateOptions are the flags of svc keys generate.
type keysGenerateOptions struct {
	uri, algorithm, pkcs11Module, output string
}

// newCmdKeysGenerate builds svc keys generate; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdKeysGenerate(a *app, runF func(*keysGenerateOptions) error) *cobra.Command {
	o := &keysGenerateOptions{}
	cmd := &cobra.Command{
		Use:   "generate --uri URI",
		Short: "Create a key in a file or on a PKCS#11 token and print its key id and public key",
		Long: `Create a key where the key URI says (keys.Generate): a PKCS#8 file (mode
0600), or a key pair generated on a PKCS#11 token, sensitive and never
extractable. An existing file or token object is never replaced. Cloud KMS
keys are created with the provider's tools.`,
		Example: `  svc keys generate --uri "file://$PWD/vpec-2027.pem"
  svc keys generate --uri 'pkcs11:token=svc-prod;object=tsa-2027?module-path=/usr/lib/softhsm/libsofthsm2.so' --algorithm ecdsa-p256-sha256`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			switch {
			case o.uri == "":
				return errorf(ExitUsage, "name the key with --uri", "--uri is required")
			case keys.Algorithm(o.algorithm) != keys.Ed25519 && keys.Algorithm(o.algorithm) != keys.ECDSAP256:
				return errorf(ExitUsage, "use --algorithm ed25519 or ecdsa-p256-sha256", "unknown algorithm %q", o.algorithm)
			}
			if runF != nil {
				return runF(o)
			}
			g, err := keys.Generate(cmdContext(cmd), o.uri, keys.Algorithm(o.algorithm), providerOptions(o.pkcs11Module, a.streams.Getenv))
			if err != nil {
				return keyError(err)
			}
			if o.output == outputJSON {
				return a.writeJSON(g)
			}
			fmt.Fprintf(a.streams.Out, "key %s (%s) at %s\n%s", g.KeyID, g.Algorithm, g.URI, g.PublicKeyPEM)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.uri, "uri", "", "key URI of the new key (file:///ABSOLUTE/PATH or pkcs11:...)")
	cmd.Flags().StringVar(&o.algorithm, "algorithm", string(keys.Ed25519), "ed25519 (VPEC, profile, circuit, log, root keys) or ecdsa-p256-sha256 (the built-in TSA)")
	cmd.Flags().StringVar(&o.pkcs11Module, "pkcs11-module", "", "PKCS#11 module when the URI has no module-path (env SVC_PKCS11_MODULE)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// keysTrustRootOptions are the flags of svc keys trust-root.
type keysTrustRootOptions struct{ data dataOptions }

// newCmdKeysTrustRoot builds svc keys trust-root.
func newCmdKeysTrustRoot(a *app, runF func(*keysTrustRootOptions) error) *cobra.Command {
	o := &keysTrustRootOptions{}
	cmd := &cobra.Command{
		Use:   "trust-root",
		Short: "Print the service's current trust root (svc.trust-root/v1)",
		Long: `Print the trust root of the data directory, the document served at
/.well-known/svc/trust-root.json. The first 'svc serve' writes version 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			_, data, err := server.ReadTrustRoot(o.data.dir())
			if err != nil {
				return &Error{Code: ExitUsage, Err: err, Hint: "check --data-dir (or SVC_DATA_DIR)"}
			}
			_, err = a.streams.Out.Write(data)
			return err
		},
	}
	cmd.Flags().StringVar(&o.data.dataDir, "data-dir", "", "service state directory (default: svc in the user data directory; env SVC_DATA_DIR)")
	return cmd
}

// keysRotateOptions are the flags of svc keys rotate.
type keysRotateOptions struct {
	data                     dataOptions
	root                     rootKeyOptions
	purpose, newKey, old, at string
	pkcs11Module             string
}

// newCmdKeysRotate builds svc keys rotate.
func newCmdKeysRotate(a *app, runF func(*keysRotateOptions) error) *cobra.Command {
	o := &keysRotateOptions{}
	cmd := &cobra.Command{
		Use:   "rotate --purpose P --new-key URI",
		Short: "Write the next trust root: a new key for a purpose, the old key's window ended",
		Long: `Write the next version of the data directory's trust root, signed by the
root key: the new key is valid for the purpose from --at (default now) and
the old key's window ends then. What the old key signed before keeps
verifying. Restart the service with the new key URI (--signing-key,
--profile-key or --log-key) by --at: a VPEC signed by the old key after it
is refused.`,
		Example: `  svc keys rotate --purpose vpec-signing --new-key 'pkcs11:token=svc-prod;object=vpec-2027' --at 2027-01-01T00:00:00Z`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			at, err := parseAt(o.at)
			if err != nil {
				return err
			}
			if o.purpose == "" || o.newKey == "" {
				return errorf(ExitUsage, "give --purpose (vpec-signing, profile-signing, circuit-signing, log-checkpoint) and --new-key URI", "--purpose and --new-key are required")
			}
			if runF != nil {
				return runF(o)
			}
			r, err := server.RotateKey(cmdContext(cmd), o.data.dir(), server.Rotation{Purpose: trustroot.Purpose(o.purpose), NewKey: o.newKey, OldKeyID: o.old, At: at},
				o.root.uri, providerOptions(o.pkcs11Module, a.streams.Getenv), time.Now())
			if err != nil {
				return keyError(err)
			}
			fmt.Fprintf(a.streams.Out, "wrote trust root version %d: %s rotated at %s; publish it and switch the service to the new key by then\n", r.Version, o.purpose, trustroot.FormatTime(at))
			return nil
		},
	}
	cmd.Flags().StringVar(&o.data.dataDir, "data-dir", "", "service state directory (default: svc in the user data directory; env SVC_DATA_DIR)")
	o.root.add(cmd)
	cmd.Flags().StringVar(&o.purpose, "purpose", "", "purpose of the key rotated")
	cmd.Flags().StringVar(&o.newKey, "new-key", "", "key URI of the new key")
	cmd.Flags().StringVar(&o.old, "old", "", "key id of the key whose window ends (default: the purpose's one open key)")
	cmd.Flags().StringVar(&o.at, "at", "", "rotation time, RFC 3339 (default: now)")
	cmd.Flags().StringVar(&o.pkcs11Module, "pkcs11-module", "", "PKCS#11 module for URIs without module-path (env SVC_PKCS11_MODULE)")
	return cmd
}

// keysCompromiseOptions are the flags and argument of svc keys compromise.
type keysCompromiseOptions struct {
	data         dataOptions
	root         rootKeyOptions
	keyID, at    string
	pkcs11Module string
}

// newCmdKeysCompromise builds svc keys compromise.
func newCmdKeysCompromise(a *app, runF func(*keysCompromiseOptions) error) *cobra.Command {
	o := &keysCompromiseOptions{}
	cmd := &cobra.Command{
		Use:   "compromise KEYID --at T",
		Short: "Write the next trust root with a key marked compromised from T",
		Long: `Write the next version of the data directory's trust root, signed by the
root key, in which KEYID is compromised from --at for every purpose it has:
whatever it signed at or after T is refused. Choose T as the earliest time
the key may have left your control (docs/KEYS.md, Compromise).`,
		Example: `  svc keys compromise 9bc738dcd45b91e8 --at 2026-08-01T12:00:00Z`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.keyID = args[0]
			if o.at == "" {
				return errorf(ExitUsage, "give --at: the earliest time the key may have been out of your control", "--at is required")
			}
			at, err := parseAt(o.at)
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			r, err := server.CompromiseKey(cmdContext(cmd), o.data.dir(), o.keyID, at, o.root.uri, providerOptions(o.pkcs11Module, a.streams.Getenv), time.Now())
			if err != nil {
				return keyError(err)
			}
			fmt.Fprintf(a.streams.Out, "wrote trust root version %d: key %s compromised from %s; publish it\n", r.Version, o.keyID, trustroot.FormatTime(at))
			return nil
		},
	}
	cmd.Flags().StringVar(&o.data.dataDir, "data-dir", "", "service state directory (default: svc in the user data directory; env SVC_DATA_DIR)")
	o.root.add(cmd)
	cmd.Flags().StringVar(&o.at, "at", "", "compromise time, RFC 3339 (required)")
	cmd.Flags().StringVar(&o.pkcs11Module, "pkcs11-module", "", "PKCS#11 module for URIs without module-path (env SVC_PKCS11_MODULE)")
	return cmd
}

// keysConvertOptions are the flags of svc keys convert.
type keysConvertOptions struct{ bundle, from string }

// newCmdKeysConvert builds svc keys convert.
func newCmdKeysConvert(a *app, runF func(*keysConvertOptions) error) *cobra.Command {
	o := &keysConvertOptions{}
	cmd := &cobra.Command{
		Use:   "convert --bundle FILE --from T",
		Short: "Convert a PEM trust bundle into an unsigned version 1 trust root",
		Long: `Print the version 1 trust root (trustroot.ConvertBundle) of a PEM trust
bundle: every key valid from --from, with no end, for vpec-signing,
profile-signing and circuit-signing, every certificate a tsa-root. It has no
root-signing key and no signature: add them before distributing it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.bundle == "" || o.from == "" {
				return errorf(ExitUsage, "give --bundle FILE and --from T (before the first signature it must verify)", "--bundle and --from are required")
			}
			from, err := parseAt(o.from)
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			data, err := a.readInput(o.bundle, "trust bundle")
			if err != nil {
				return err
			}
			b, err := signing.ParseBundle(data)
			if err != nil {
				return &Error{Code: ExitUsage, Err: err, Hint: "give a PEM trust bundle (svc serve trust-bundle)"}
			}
			r, err := trustroot.ConvertBundle(b, from, time.Now())
			if err != nil {
				return &Error{Code: ExitUsage, Err: err}
			}
			out, err := r.Marshal()
			if err != nil {
				return &Error{Code: ExitFailure, Err: err}
			}
			_, err = a.streams.Out.Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&o.bundle, "bundle", "", "PEM trust bundle to convert (- for stdin)")
	cmd.Flags().StringVar(&o.from, "from", "", "valid_from of every key, RFC 3339")
	return cmd
}

// parseAt parses an RFC 3339 time flag; empty is now.
func parseAt(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errorf(ExitUsage, "give an RFC 3339 time such as 2027-01-01T00:00:00Z", "bad time %q", s)
	}
	return t.UTC(), nil
}
