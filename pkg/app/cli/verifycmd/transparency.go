package verifycmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
)

// logOptions are verify's flags for the transparency log receipt and for
// trust root updates.
type logOptions struct {
	receipt          string
	requireLog       bool
	witnessPolicy    string
	logCheckpoint    string
	consistencyProof string
	rootUpdates      []string
	// fromFlag records which trust-material flags were on the command
	// line (before a config file fills unset flags): witness policy and
	// root updates, like --trust-root, are never read from a config file.
	fromFlag map[string]bool
}

// trustFlags are the flags of logOptions that name trust material.
var trustFlags = []string{"witness-policy", "trust-root-update"}

func (o *logOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.receipt, "receipt", "", "the VPEC's transparency log receipt (vpec.receipt.json, 'svc vpec get' writes it): checked by the transparency check")
	cmd.Flags().BoolVar(&o.requireLog, "require-log", false, "treat a VPEC without a valid log receipt as invalid (exit 1, NO LOG RECEIPT)")
	cmd.Flags().StringVar(&o.witnessPolicy, "witness-policy", "", "witness policy file (Sigsum policy format, docs/TRANSPARENCY.md) the receipt's checkpoint must satisfy (default: every witness key of the trust root; none: the log's signature alone)")
	cmd.Flags().StringVar(&o.logCheckpoint, "log-checkpoint", "", "a newer checkpoint of the log (signed note) the receipt's checkpoint must be a prefix of (needs --receipt)")
	cmd.Flags().StringVar(&o.consistencyProof, "consistency-proof", "", "the RFC 6962 consistency proof from the receipt's checkpoint to --log-checkpoint (one base64 hash per line; 'svc log verify-consistency' prints it)")
	cmd.Flags().StringArrayVar(&o.rootUpdates, "trust-root-update", nil, "a newer svc.trust-root/v1 version, verified against the previous one before it is used (repeatable, in version order)")
	prev := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		for _, f := range trustFlags {
			if c.Flags().Changed(f) {
				if o.fromFlag == nil {
					o.fromFlag = map[string]bool{}
				}
				o.fromFlag[f] = true
			}
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// check refuses trust material named in a config file.
func (o *logOptions) check(a *clicore.App) error {
	named := map[string]bool{"witness-policy": o.witnessPolicy != "", "trust-root-update": len(o.rootUpdates) > 0}
	for _, f := range trustFlags {
		if !named[f] || o.fromFlag[f] {
			continue
		}
		env := "SVC_" + toEnv(f)
		if v := a.Streams.Getenv(env); v != "" {
			continue
		}
		return clicore.Errorf(clicore.ExitTrust, "pass --"+f+" on the command line (or "+env+"); remove "+f+" from the config file",
			"--%s comes from a config file: trust material is read only from the command line or the environment", f)
	}
	if o.consistencyProof != "" && o.logCheckpoint == "" {
		return clicore.Errorf(clicore.ExitUsage, "give the newer checkpoint the proof leads to with --log-checkpoint", "--consistency-proof without --log-checkpoint")
	}
	if o.logCheckpoint != "" && o.receipt == "" {
		return clicore.Errorf(clicore.ExitUsage, "give the VPEC's receipt with --receipt: the newer checkpoint is checked against the receipt's", "--log-checkpoint without --receipt")
	}
	return nil
}

func toEnv(flag string) string {
	b := []byte(flag)
	for i, c := range b {
		switch {
		case c == '-':
			b[i] = '_'
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// updateRoot verifies each --trust-root-update against the root before it
// (trustroot.VerifyChain) and returns the newest. A refused update is
// trust material unusable: exit 3, naming the update and the refusal's
// code (not-signed-by-previous, rollback, ...); nothing is verified with
// it.
func (o *logOptions) updateRoot(root *trustroot.Root) (*trustroot.Root, error) {
	if len(o.rootUpdates) == 0 {
		return root, nil
	}
	if root.Legacy() {
		return nil, clicore.Errorf(clicore.ExitTrust, "start from the first svc.trust-root/v1 root the operator gave you out of band",
			"--trust-root-update needs a svc.trust-root/v1 --trust-root: a PEM trust bundle has no root keys to check an update with")
	}
	cur := root
	for _, p := range o.rootUpdates {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, &clicore.Error{Code: clicore.ExitTrust, Err: fmt.Errorf("read trust root update: %w", err), Hint: "--trust-root-update takes a svc.trust-root/v1 JSON file"}
		}
		next, err := trustroot.Parse(data)
		if err != nil {
			return nil, &clicore.Error{Code: clicore.ExitTrust, Err: fmt.Errorf("trust root update %s (%s): %w", clicore.Safe(p), trustroot.Code(err), err), Hint: "--trust-root-update takes a svc.trust-root/v1 JSON file"}
		}
		if cur, err = trustroot.VerifyUpdate(cur, next); err != nil {
			var ue *trustroot.UpdateError
			hint := "fetch the update again from the service (/.well-known/svc/trust-root/N.json) and apply the versions in order"
			if errors.As(err, &ue) {
				hint = "the update is not a valid successor of the root you trust: do not use it; " + hint
			}
			return nil, &clicore.Error{Code: clicore.ExitTrust, Err: fmt.Errorf("trust root update %s refused (%s): %w", clicore.Safe(p), trustroot.Code(err), err), Hint: hint}
		}
	}
	return cur, nil
}

// apply reads the receipt and log material into opts. A receipt that
// cannot be read is a usage error; what it says is the transparency
// check's to judge.
func (o *logOptions) apply(opts *verify.Options) error {
	opts.RequireLog = o.requireLog
	if o.receipt != "" {
		data, err := readLimited(o.receipt, tlog.MaxReceiptBytes+1)
		if err != nil {
			return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("read receipt: %w", err), Hint: "--receipt takes the VPEC's receipt JSON ('svc vpec get' writes vpec.receipt.json)"}
		}
		opts.Receipt = data
	}
	if o.witnessPolicy != "" {
		data, err := readLimited(o.witnessPolicy, tlog.MaxPolicyBytes+1)
		if err == nil {
			opts.WitnessPolicy, err = tlog.ParseWitnessPolicy(data)
		}
		if err != nil {
			return &clicore.Error{Code: clicore.ExitTrust, Err: fmt.Errorf("witness policy %s: %w", clicore.Safe(o.witnessPolicy), err), Hint: "--witness-policy takes a Sigsum policy file: witness, group and quorum lines (docs/TRANSPARENCY.md)"}
		}
	}
	if o.logCheckpoint != "" {
		data, err := readLimited(o.logCheckpoint, 32<<10+1)
		if err != nil {
			return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("read newer checkpoint: %w", err), Hint: "--log-checkpoint takes a checkpoint (signed note) of the log, e.g. its /log/checkpoint"}
		}
		opts.NewerCheckpoint = data
	}
	if o.consistencyProof != "" {
		data, err := readLimited(o.consistencyProof, 64<<10)
		if err == nil {
			opts.ConsistencyProof, err = tlog.ParseProof(data)
		}
		if err != nil {
			return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("consistency proof %s: %w", clicore.Safe(o.consistencyProof), err), Hint: "--consistency-proof takes one standard base64 hash per line"}
		}
	}
	return nil
}

// readLimited reads at most limit bytes of path (a larger file is read
// short, and its parser refuses it as too large).
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
