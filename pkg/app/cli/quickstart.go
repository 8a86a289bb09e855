package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/quickstart"
)

func (a *app) quickstartCmd() *cobra.Command {
	var dir, output string
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "Run the whole flow on this machine: service, checks, VPEC, offline verification",
		Long: `Run the whole flow end to end on embedded defaults, with no configuration:
start the service on loopback (SQLite and the built-in RFC 3161 authority in
--dir), open a pipeline, record a passing check, a failing check and a
witnessed human review (raw data hashed locally, never sent); with ONNX
Runtime (a cgo build and 'make ort'), also generate a DistilBERT-style
classifier, calibrate its drift profile on 200 real executions, publish it,
and record a bound_committed_inference check. Close the run, write the VPEC,
the trust bundle (and the profile, trace, model and input for the audit) to
--dir, verify the VPEC offline and replay the trace.`,
		Example: `  svc quickstart
  svc verify svc-quickstart/vpec.json --trust-root svc-quickstart/trust-bundle.pem --circuit-dir svc-quickstart/circuits --profile svc-quickstart/profile.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			return a.runQuickstart(cmdContext(cmd), dir, output)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "svc-quickstart", "directory for the service's data, the VPEC and the trust bundle")
	addOutputFlag(cmd, &output)
	return cmd
}

func (a *app) runQuickstart(ctx context.Context, dir, output string) error {
	say := func(format string, args ...any) {
		if output == outputText {
			fmt.Fprintf(a.streams.Err, "quickstart: "+format+"\n", args...)
		}
	}
	res, err := quickstart.Run(ctx, quickstart.Options{Dir: dir, Say: say, Version: BuildVersion().Version})
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if output == outputJSON {
		if err := a.writeJSON(res.Report); err != nil {
			return err
		}
	} else {
		a.printReport(res.Report)
		// The proved records need their signed circuit entries offline, the
		// classifier's record its signed profile.
		trust := fmt.Sprintf("--trust-root %s --circuit-dir %s", res.TrustBundlePath, res.CircuitDir)
		if bi := res.Bounded; bi == nil {
			fmt.Fprintf(a.streams.Err, "quickstart: verify it again any time: svc verify %s %s\n", res.VPECPath, trust)
		} else {
			fmt.Fprintf(a.streams.Err, "quickstart: verify it again any time: svc verify %s %s --profile %s\n", res.VPECPath, trust, bi.ProfilePath)
			fmt.Fprintf(a.streams.Err, "quickstart: and audit the classifier's trace: svc verify %s %s --profile %s --trace %s --model %s --input-file %s\n",
				res.VPECPath, trust, bi.ProfilePath, bi.TracePath, bi.ModelDir, bi.InputPath)
		}
		fmt.Fprintf(a.streams.Err, "quickstart: see it in the dashboard: svc serve --data-dir %[1]s, open http://127.0.0.1:8080/dashboard/ and sign in with a key from svc admin key create --org quickstart --live --data-dir %[1]s\n", filepath.Join(dir, "data"))
	}
	if res.VerifyErr != nil {
		return exitError{ExitInvalid}
	}
	return nil
}
