package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/internal/present"
	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// closeOptions are the flags of svc close.
type closeOptions struct {
	co            clientOptions
	so            stateOptions
	out           string
	force         bool
	requirePassed bool
	// waitReceipt, when positive, waits that long for the transparency
	// log receipt and writes it beside --out.
	waitReceipt time.Duration
}

// newCmdClose builds svc close; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdClose(a *app, runF func(*closeOptions) error) *cobra.Command {
	o := &closeOptions{}
	cmd := &cobra.Command{
		Use:   "close [--out vpec.json]",
		Short: "Close the open run and write its VPEC",
		Long: `Close the run opened by 'svc run open': the service seals it and issues the
signed, timestamped VPEC, written to --out (default vpec.json). If the
service is unreachable, an unsigned offline VPEC (schema
svc.vpec.unsigned-offline/v1, with a system_unavailable gap) is written
instead and the close is queued; 'svc queue flush' later writes the signed
VPEC over it (or fetch it with 'svc vpec get RUN_ID --out FILE').

--out is checked before anything is closed: an existing file (without
--force) or one that cannot be written leaves the run open. If the file
still cannot be written after the close, the run is closed and the error
says how to fetch its VPEC.

The summary line's "clean" means no governance gaps, not that every check
passed; --require-passed exits 1 (after writing the VPEC) when a recorded
check's result is fail or error.

--wait-receipt D waits up to D (at most 60s) for the VPEC's transparency log
receipt, about one checkpoint interval of the service, and writes it beside
--out (vpec.json: vpec.receipt.json); without it the close does not wait,
and 'svc vpec get VPEC_ID --out vpec.json' fetches the receipt later.`,
		Example: `  svc close --out vpec.json --force --require-passed && svc verify vpec.json --trust-root trust-bundle.pem   # --force: a CI job run again in one workspace`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.co.validate(); err != nil {
				return err
			}
			if o.waitReceipt < 0 || o.waitReceipt > 60*time.Second {
				return errorf(ExitUsage, "give --wait-receipt from 0s to 60s", "--wait-receipt %v is out of range", o.waitReceipt)
			}
			if runF != nil {
				return runF(o)
			}
			return a.runClose(cmdContext(cmd), o)
		},
	}
	o.co.add(cmd)
	o.so.add(cmd)
	cmd.Flags().StringVar(&o.out, "out", "vpec.json", "file to write the VPEC to")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace --out if it exists")
	cmd.Flags().DurationVar(&o.waitReceipt, "wait-receipt", 0, "wait up to this long (at most 60s) for the transparency log receipt and write it beside --out (vpec.receipt.json)")
	cmd.Flags().BoolVar(&o.requirePassed, "require-passed", false, "exit 1 (after writing the VPEC) when a recorded check's result is fail or error; skipped, degraded and override pass")
	return cmd
}

// runClose closes the state file's run and writes its VPEC to o.out.
func (a *app) runClose(ctx context.Context, o *closeOptions) error {
	sr, err := o.so.file().Continue(o.co.forRun)
	if err != nil {
		return o.so.runError(err, "")
	}
	defer sr.Release()
	res, err := sr.CloseTo(ctx, o.out, o.force)
	var we *statefile.VPECWriteError
	switch {
	case errors.As(err, &we):
		hint := fmt.Sprintf("fetch it again with: %s vpec get %s --out FILE", a.name, we.RunID)
		if we.Offline {
			hint = fmt.Sprintf("the close is queued: once the service is reachable, '%s queue flush', then: %s vpec get %s --out FILE", a.name, a.name, we.RunID)
		}
		return &Error{Code: ExitFailure, Err: err, Hint: hint}
	case errors.Is(err, fs.ErrExist):
		return &Error{Code: ExitUsage, Err: fmt.Errorf("%w; nothing was closed: run %s is still open", err, sr.Run.ID()),
			Hint: "pass --force to replace " + o.out + ", or choose another --out"}
	case errors.Is(err, statefile.ErrOutNotWritable):
		return &Error{Code: ExitUsage, Err: fmt.Errorf("%w; nothing was closed: run %s is still open", err, sr.Run.ID()),
			Hint: "choose an --out in a writable directory"}
	case err != nil:
		return o.so.runError(err, "the run was already closed")
	}
	if o.waitReceipt > 0 && !res.Offline {
		path, err := a.saveReceipt(o.out, res.VPEC.VPECID, awaitReceipt(ctx, res, o.waitReceipt))
		if err != nil {
			return err
		}
		if path != "" && o.co.output != outputJSON {
			fmt.Fprintf(a.streams.Out, "%s: transparency log receipt -> %s\n", res.VPEC.VPECID, path)
		}
	}
	if o.co.output == outputJSON {
		if err := a.writeJSON(present.ClosedJSON(res, o.out)); err != nil {
			return err
		}
	} else {
		if res.Offline {
			fmt.Fprintf(a.streams.Err, "%s: warning: the service is unreachable: %s holds an unsigned local VPEC with a system_unavailable gap; the close is queued: 'svc queue flush --state %s' writes the signed VPEC over it (or: svc vpec get %s --out %s)\n", a.name, o.out, o.so.path, res.VPEC.RunID, o.out)
		}
		present.Closed(a.streams.Out, &res.VPEC, o.out)
	}
	if o.requirePassed {
		return notPassedError(&res.VPEC, o.out)
	}
	return nil
}

// notPassedError is the error of svc close --require-passed: nil when no
// record of v failed or hit an error, else exit 1 naming them.
func notPassedError(v *vpec.VPEC, out string) error {
	failed, errored := verify.CountNotPassed(v.Records)
	if failed+errored == 0 {
		return nil
	}
	var names []string
	for _, r := range v.Records {
		if r.CheckResult == vpec.ResultFail || r.CheckResult == vpec.ResultError {
			names = append(names, fmt.Sprintf("%s %s (sequence %d)", safe(r.Check), r.CheckResult, r.Sequence))
		}
	}
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(names)-10))
	}
	return &Error{Code: ExitInvalid, Err: fmt.Errorf("not passed: %d check(s) failed and %d hit an error: %s", failed, errored, strings.Join(names, ", ")),
		Hint: fmt.Sprintf("the VPEC is written to %s and records the failures; drop --require-passed to let the job continue", out)}
}
