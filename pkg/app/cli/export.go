package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
)

// Export formats.
const formatSigstoreBundle = "sigstore-bundle"

// exportOptions are the flags and argument of svc export.
type exportOptions struct {
	path        string // the VPEC
	format      string
	artifact    string
	receipt     string
	out         string
	trust       trustOptions
	trustedRoot string
	keyOut      string
	force       bool
}

// newCmdExport builds svc export; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdExport(a *app, runF func(*exportOptions) error) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export VPEC",
		Short: "Export a VPEC as a Sigstore bundle that cosign and sigstore-go verify",
		Long: `Export a VPEC in a format other tools verify. Offline, and no new signature:
anyone holding a VPEC can run it.

--format sigstore-bundle writes a Sigstore bundle v0.3 whose message
signature is the VPEC's Ed25519 signature, over the VPEC signed bytes (JCS
of the VPEC without signature and timestamp_rfc3161, written to --artifact),
with the signing key id as public key hint and the VPEC's RFC 3161 response
as signed timestamp. The bundle goes to --out, or standard output.

A Sigstore verifier also needs the trust material: with --trust-root,
--trusted-root-out writes a Sigstore trusted_root.json of the bundle's
timestamp authority certificates and --key-out the PEM public key that
signed the VPEC. Then, offline:

  cosign verify-blob vpec.signed.json --bundle vpec.sigstore.json \
    --key service.pub --trusted-root trusted_root.json \
    --use-signed-timestamps --insecure-ignore-tlog

A Sigstore verification proves the signature and the timestamp only; run
'svc-verify verify' for the chain, summary, gap and profile checks.

--receipt F (the VPEC's transparency log receipt, as 'svc vpec get' writes
it; never read unless given) puts the VPEC's log entry in the bundle's
tlogEntries, after checking the receipt for this VPEC against the
--trust-root log key. Sigstore's verifiers (cosign, sigstore-go) refuse
such a bundle, with or without --insecure-ignore-tlog: they read a log
entry only as a Rekor entry, and svc's log holds svc's leaf
(docs/FORMATS.md, "Sigstore bundle"). Leave --receipt out for cosign, and
check the receipt with 'svc-verify verify --receipt'.

Exit codes: 0 written, 2 usage, not a VPEC or a receipt that does not
prove this VPEC is in the log, 3 trust material missing, without the
VPEC's key or without the receipt's log key, 4 an output file cannot be
written.`,
		Example: `  svc export vpec.json --format sigstore-bundle --artifact vpec.signed.json --out vpec.sigstore.json
  svc export vpec.json --artifact vpec.signed.json --out vpec.sigstore.json --force \
    --trust-root trust-bundle.pem --trusted-root-out trusted_root.json --key-out service.pub`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			if o.format != formatSigstoreBundle {
				return errorf(ExitUsage, "the one export format is "+formatSigstoreBundle, "--format %s is not an export format", safe(o.format))
			}
			if runF != nil {
				return runF(o)
			}
			return a.runExport(o)
		},
	}
	cmd.Flags().StringVar(&o.format, "format", formatSigstoreBundle, "export format: "+formatSigstoreBundle)
	cmd.Flags().StringVar(&o.artifact, "artifact", "", "write the VPEC signed bytes (the signed artifact) to this file")
	cmd.Flags().StringVar(&o.receipt, "receipt", "", "put this transparency log receipt's entry in the bundle (needs --trust-root; cosign then refuses the bundle)")
	cmd.Flags().StringVar(&o.out, "out", "-", "write the bundle to this file (- for standard output)")
	o.trust.add(a, cmd)
	cmd.Flags().StringVar(&o.trustedRoot, "trusted-root-out", "", "write a Sigstore trusted_root.json of the --trust-root TSA certificates to this file")
	cmd.Flags().StringVar(&o.keyOut, "key-out", "", "write the --trust-root public key that signed the VPEC (PEM) to this file")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace output files that exist")
	return cmd
}

// runExport writes the VPEC's Sigstore bundle and, as asked, its artifact
// and trust material (sigstore.ExportBundle).
func (a *app) runExport(o *exportOptions) error {
	doc, err := a.readInput(o.path, "VPEC")
	if err != nil {
		return err
	}
	var trust *signing.Bundle
	var root *trustroot.Root
	if o.trustedRoot != "" || o.keyOut != "" || o.receipt != "" {
		if root, trust, err = o.trust.LoadRoot(); err != nil {
			return err
		}
		if err := sigstore.LogKeysOf(trust, root); err != nil {
			return &Error{Code: ExitTrust, Err: err}
		}
	}
	var ex *sigstore.Export
	if o.receipt == "" {
		ex, err = sigstore.ExportBundle(doc)
	} else {
		receipt, rerr := a.readInput(o.receipt, "receipt")
		if rerr != nil {
			return rerr
		}
		ex, err = sigstore.ExportWithReceipt(doc, receipt, trust)
	}
	switch {
	case errors.Is(err, tlog.ErrWrongLog):
		return &Error{Code: ExitTrust, Err: err, Hint: "give the --trust-root of the service whose log holds the VPEC (svc serve trust-bundle lists its TRANSPARENCY LOG KEY)"}
	case errors.Is(err, sigstore.ErrReceipt):
		return &Error{Code: ExitUsage, Err: err, Hint: "give the VPEC's own receipt: 'svc vpec get' writes it beside the VPEC"}
	case err != nil:
		return &Error{Code: ExitUsage, Err: err, Hint: "export reads a v1 VPEC as svc issues it; 'svc-verify verify' says what is wrong with it"}
	}
	type output struct {
		path string
		data []byte
		mode fs.FileMode
	}
	outs := []output{}
	if trust != nil {
		if o.trustedRoot != "" {
			tr, err := sigstore.TrustedRootFor(trust, root)
			if err != nil {
				return &Error{Code: ExitTrust, Err: err, Hint: "the trust bundle must hold the timestamp authority's CERTIFICATE"}
			}
			outs = append(outs, output{o.trustedRoot, tr, 0o644})
		}
		if o.keyOut != "" {
			key, err := sigstore.PublicKeyPEM(trust, ex.KeyID)
			if err != nil {
				return &Error{Code: ExitTrust, Err: err, Hint: "the VPEC is signed by a key the trust bundle does not hold"}
			}
			outs = append(outs, output{o.keyOut, key, 0o644})
		}
	}
	if o.artifact != "" {
		outs = append(outs, output{o.artifact, ex.Artifact, 0o644})
	}
	if o.out != "-" {
		outs = append(outs, output{o.out, ex.Bundle, 0o644})
	}
	for _, f := range outs {
		if o.force {
			os.Remove(f.path)
		}
		if err := fsutil.WriteNew(f.path, f.data, f.mode); err != nil {
			hint := ""
			if errors.Is(err, fs.ErrExist) {
				hint = "pass --force to replace it"
			}
			return &Error{Code: ExitFailure, Err: err, Hint: hint}
		}
	}
	if o.out == "-" {
		if _, err := a.streams.Out.Write(ex.Bundle); err != nil {
			return &Error{Code: ExitFailure, Err: fmt.Errorf("write bundle: %w", err)}
		}
	}
	return nil
}
