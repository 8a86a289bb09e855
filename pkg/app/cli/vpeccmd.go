package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/client"
)

// vpecCmd is `svc vpec`: the signed VPECs the service issued.
func (a *app) vpecCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "vpec", Short: "Fetch the signed VPECs the service issued"}
	cmd.AddCommand(newCmdVPECGet(a, nil))
	return cmd
}

// vpecGetOptions are the flags and argument of svc vpec get.
type vpecGetOptions struct {
	co    clientOptions
	id    string // run_… or vpec_…
	out   string
	force bool
	// receiptWait bounds the wait for the receipt written beside --out;
	// noReceipt skips it.
	receiptWait time.Duration
	noReceipt   bool
}

// newCmdVPECGet builds svc vpec get; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdVPECGet(a *app, runF func(*vpecGetOptions) error) *cobra.Command {
	o := &vpecGetOptions{}
	get := &cobra.Command{
		Use:   "get RUN_OR_VPEC_ID [--out F]",
		Short: "Fetch the signed VPEC of a sealed run (run_…) or by its id (vpec_…)",
		Long: `Fetch the signed, timestamped VPEC the service issued, by run id (run_…)
or by VPEC id (vpec_…), and print it or write it to --out. Queued entries of
the run are delivered first.

After a close made while the service was unreachable, the file 'svc close'
wrote is an unsigned offline VPEC (schema svc.vpec.unsigned-offline/v1,
which 'svc verify' reports as UNSIGNED OFFLINE VPEC). Once the service is
back, 'svc vpec get RUN_ID --out FILE' replaces it with the signed one:
without --force, an existing --out is replaced only when it is the unsigned
offline VPEC of that run.

With --out, the VPEC's transparency log receipt is written beside it (out
vpec.json: vpec.receipt.json; a name not ending in .json gets
.receipt.json appended), replacing an older one, after waiting up to
--receipt-wait for a checkpoint to cover the VPEC (docs/TRANSPARENCY.md).
A receipt not ready in time, or a service without a log, is a warning:
the VPEC is still written. 'svc-verify verify vpec.json --receipt
vpec.receipt.json' checks it.`,
		Example: `  svc vpec get run_0b7c… --out vpec.json && svc verify vpec.json --trust-root trust-bundle.pem --profile profile.json
  svc vpec get vpec_41d2… > vpec.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id = args[0]
			if !strings.HasPrefix(o.id, "run_") && !strings.HasPrefix(o.id, "vpec_") {
				return errorf(ExitUsage, "pass a run id (run_…) or a VPEC id (vpec_…)", "%q is neither a run id nor a VPEC id", o.id)
			}
			if err := o.co.validate(); err != nil {
				return err
			}
			if o.receiptWait < 0 || o.receiptWait > 60*time.Second {
				return errorf(ExitUsage, "give --receipt-wait from 0s to 60s", "--receipt-wait %v is out of range", o.receiptWait)
			}
			if runF != nil {
				return runF(o)
			}
			return a.runVPECGet(cmdContext(cmd), o)
		},
	}
	o.co.add(get)
	get.Flags().StringVar(&o.out, "out", "", "file to write the VPEC to (default: standard output)")
	get.Flags().BoolVar(&o.force, "force", false, "replace --out whatever it holds")
	get.Flags().DurationVar(&o.receiptWait, "receipt-wait", defaultReceiptWait, "with --out: how long to wait for the transparency log receipt written beside it (at most 60s)")
	get.Flags().BoolVar(&o.noReceipt, "no-receipt", false, "with --out: do not fetch the transparency log receipt")
	return get
}

// runVPECGet fetches the VPEC (Pipeline.GetVPEC) and prints or writes it.
func (a *app) runVPECGet(ctx context.Context, o *vpecGetOptions) error {
	return o.co.do(func(p *client.Pipeline) error {
		res, err := p.GetVPEC(ctx, o.id)
		switch {
		case errors.Is(err, client.ErrNotIssued):
			return &Error{Code: ExitFailure, Err: err, Hint: "close the run with 'svc close', or deliver its queued close with 'svc queue flush'"}
		case errors.Is(err, client.ErrUnavailable):
			return &Error{Code: ExitFailure, Err: err, Hint: "the service is unreachable; try again when it is back"}
		case err != nil:
			return &Error{Code: ExitFailure, Err: err}
		}
		if o.out == "" {
			_, err := a.streams.Out.Write(res.Raw)
			return err
		}
		if err := writeSigned(o.out, o.force, res); err != nil {
			return err
		}
		v := res.VPEC
		var receipt string
		if !o.noReceipt {
			if receipt, err = a.saveReceipt(o.out, v.VPECID, func() ([]byte, error) { return p.GetReceipt(ctx, v.VPECID, o.receiptWait) }); err != nil {
				return err
			}
		}
		if o.co.output == outputJSON {
			out := map[string]any{"vpec_id": v.VPECID, "run_id": v.RunID, "out": o.out}
			if receipt != "" {
				out["receipt"] = receipt
			}
			return a.writeJSON(out)
		}
		fmt.Fprintf(a.streams.Out, "%s: signed VPEC %s -> %s\n", v.RunID, v.VPECID, o.out)
		if receipt != "" {
			fmt.Fprintf(a.streams.Out, "%s: transparency log receipt -> %s\n", v.VPECID, receipt)
		}
		return nil
	})
}

// writeSigned writes the signed VPEC to out (statefile.WriteVPEC): a new
// file, any file with force, else only over the unsigned offline VPEC of
// the same run.
func writeSigned(out string, force bool, res *client.VPECResult) error {
	err := statefile.WriteVPEC(out, force, res)
	switch {
	case errors.Is(err, statefile.ErrNotUnsignedCopy):
		return errorf(ExitUsage, "choose another --out or pass --force", "%s already exists and is not the unsigned offline VPEC of %s", out, res.VPEC.RunID)
	case err != nil:
		return &Error{Code: ExitFailure, Err: err}
	}
	return nil
}
