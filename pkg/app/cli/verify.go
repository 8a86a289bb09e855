package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// trustOptions is the --trust-root flag group (pkg/app/cli/clicore.TrustOptions).
type trustOptions struct{ clicore.TrustOptions }

func (o *trustOptions) add(a *app, cmd *cobra.Command) { o.Add(a.core, cmd) }

func (o *trustOptions) load() (*signing.Bundle, error) { return o.Load() }

// verifyOptions are the flags svc verify adds to the verifier's: the
// replay audit of one trace.
type verifyOptions struct {
	traceFile, model, inputFile string
	mo                          modelOptions
	// verifier are the verifier's own options (set for runF only).
	verifier *verifycmd.VerifyOptions
}

// validate checks the audit's flags alone.
func (o *verifyOptions) validate() error {
	if o.traceFile != "" && (o.model == "" || o.inputFile == "") {
		return errorf(ExitUsage, "pass --model DIR and --input-file F with --trace", "the audit needs the model and the input")
	}
	return nil
}

func defaultProfileDir() string { return verifycmd.DefaultProfileDir() }

// verifyCmd is svc-verify's verify command plus the replay audit, which
// needs cgo and ONNX Runtime.
func (a *app) verifyCmd() *cobra.Command { return newCmdVerify(a, nil) }

// newCmdVerify builds svc verify; runF, when not nil, gets the parsed
// options (the audit's, and the verifier's in verifier) instead of the
// run (a test's seam).
func newCmdVerify(a *app, runF func(*verifyOptions) error) *cobra.Command {
	o := &verifyOptions{}
	var vrunF func(*verifycmd.VerifyOptions) error
	if runF != nil {
		vrunF = func(v *verifycmd.VerifyOptions) error {
			o.verifier = v
			return runF(o)
		}
	}
	return verifycmd.NewCmdVerify(a.core, &verifycmd.Audit{
		Long: `--trace audits one Bounded Inference record: the trace's Merkle root and
operator count are recomputed and must be the record's, the input must
hash to the record's commitment, and the inference is re-executed on the
reference execution (ONNX Runtime, unoptimised, one thread): every
operator's drift must be within the profile's bounds for its class, else
INVALID — PROFILE MISMATCH naming the GPU class. The audit needs a build
with cgo and ONNX Runtime (svc, not svc-verify).`,
		Example: "  svc verify vpec.json --trust-root trust-bundle.pem --trace note.trace.json --model pii-model --input-file note.txt\n",
		AddFlags: func(cmd *cobra.Command) {
			cmd.Flags().StringVar(&o.traceFile, "trace", "", "audit this operator trace of a Bounded Inference record by replaying it (needs --model and --input-file)")
			cmd.Flags().StringVar(&o.model, "model", "", "with --trace: the model directory or model.onnx the trace claims")
			cmd.Flags().StringVar(&o.inputFile, "input-file", "", "with --trace: the raw input the record commits to")
			o.mo.addRuntime(cmd)
		},
		Validate: o.validate,
		Run: func(doc []byte, trust *signing.Bundle, set *profile.Set) (verify.Check, bool, error) {
			if o.traceFile == "" {
				return verify.Check{}, false, nil
			}
			c, err := a.audit(o, doc, trust, set)
			return c, err == nil, err
		},
	}, vrunF)
}

func (a *app) verifyProfileCmd() *cobra.Command { return verifycmd.VerifyProfile(a.core) }

// printReport prints a verification report for a person.
func (a *app) printReport(r *verify.Report) { verifycmd.PrintReport(a.core, r) }

// audit replays the trace of one Bounded Inference record of the VPEC doc
// (svc verify --trace) and returns the audit check.
func (a *app) audit(o *verifyOptions, doc []byte, trust *signing.Bundle, set *profile.Set) (verify.Check, error) {
	raw, err := os.ReadFile(o.traceFile)
	if err != nil {
		return verify.Check{}, &Error{Code: ExitUsage, Err: fmt.Errorf("read trace: %w", err)}
	}
	tr, err := trace.Decode(raw)
	if err != nil {
		return verify.Check{}, &Error{Code: ExitUsage, Err: err, Hint: "--trace takes a trace file written by 'svc trace' or 'svc record --model --trace-out'"}
	}
	input, err := os.ReadFile(o.inputFile)
	if err != nil {
		return verify.Check{}, &Error{Code: ExitUsage, Err: fmt.Errorf("read input: %w", err)}
	}
	c, err := calibration.AuditRecord(calibration.RecordAudit{VPEC: doc, Trace: tr, Input: input, Trust: trust, Profiles: set,
		LoadModel: func() (*trace.Model, error) { return o.mo.load(o.model) }})
	var ce *Error
	if err != nil && !errors.As(err, &ce) {
		err = &Error{Code: ExitFailure, Err: err}
	}
	return c, err
}
