package cli

import (
	"context"
	"encoding/json"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/internal/present"
	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/client/zkprove"
	"github.com/svc-gov/svc/pkg/core/document"
)

// inferenceOptions are the flags of 'svc record --model'.
type inferenceOptions struct {
	mo                                   modelOptions
	model, gpuClass, mode, traceOut, dir string
	threshold                            float64
	label                                int
	// Condition circuits (entries and proving keys, paired in order),
	// the trust bundle that checks the entries, and where the openings go.
	condEntries, condKeys []string
	condOut               string
	trust                 clicore.TrustOptions
}

func (o *inferenceOptions) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", "run this classifier (model directory or model.onnx) as a bound_committed_inference check")
	f.StringVar(&o.gpuClass, "gpu-class", "cpu", "with --model: the hardware class the inference runs on")
	f.StringVar(&o.mode, "mode", bounded.Auto, "with --model: trace mode: auto (residual when the model's profile covers it, else production), production, residual or full (docs/BOUNDED.md)")
	f.Float64Var(&o.threshold, "threshold", 0.5, "with --model: a score at or above it fails the check")
	f.IntVar(&o.label, "label", 1, "with --model: the class whose probability is the score")
	f.StringVar(&o.traceOut, "trace-out", "", "with --model: keep the operator trace here (local only; for 'svc verify --trace')")
	f.StringVar(&o.dir, "profile-dir", "", "with --model: profile cache (default: svc/profiles in the user cache directory; env SVC_PROFILE_DIR)")
	f.StringArrayVar(&o.condEntries, "condition-entry", nil, "with --model: a signed truncation_check or below_threshold_check circuit entry: prove that condition (repeatable; with --condition-proving-key and --trust-root)")
	f.StringArrayVar(&o.condKeys, "condition-proving-key", nil, "with --model: the proving key of the --condition-entry at the same position")
	f.StringVar(&o.condOut, "conditions-out", "", "with --condition-entry: write the proved values and their salts (which open the commitments) to this new file (mode 0600; never sent)")
	o.mo.addRuntime(cmd)
}

// conditions loads the condition provers of --condition-entry (none: nil).
func (o *inferenceOptions) conditions() ([]*zkprove.Condition, error) {
	if len(o.condEntries) == 0 && len(o.condKeys) == 0 {
		if o.condOut != "" {
			return nil, errorf(ExitUsage, "pass --condition-entry and --condition-proving-key", "--conditions-out without condition circuits")
		}
		return nil, nil
	}
	tb, err := o.trust.Load()
	if err != nil {
		return nil, err
	}
	var entries, keys [][]byte
	for _, f := range o.condEntries {
		b, err := readOptional(f, "condition circuit entry")
		if err != nil {
			return nil, err
		}
		entries = append(entries, b)
	}
	for _, f := range o.condKeys {
		b, err := readOptional(f, "condition proving key")
		if err != nil {
			return nil, err
		}
		keys = append(keys, b)
	}
	conds, err := zkprove.NewConditions(entries, keys, tb)
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: err}
	}
	return conds, nil
}

// profileDir is --profile-dir, else $SVC_PROFILE_DIR, else the user cache.
func (a *app) profileDir(flag string) string {
	if flag != "" {
		return flag
	}
	if d := a.streams.Getenv("SVC_PROFILE_DIR"); d != "" {
		return d
	}
	return defaultProfileDir()
}

// recordInference is 'svc record --model': one bounded.Classifier check
// on the state file's run.
func (a *app) recordInference(ctx context.Context, o *recordOptions, sr *statefile.Run, input []byte) error {
	inf := &o.inf
	if inf.traceOut != "" {
		if _, err := os.Stat(inf.traceOut); err == nil {
			return errorf(ExitUsage, "choose another --trace-out", "%s already exists", inf.traceOut)
		}
	}
	if inf.condOut != "" {
		if _, err := os.Stat(inf.condOut); err == nil {
			return errorf(ExitUsage, "choose another --conditions-out", "%s already exists", inf.condOut)
		}
	}
	conds, err := inf.conditions()
	if err != nil {
		return err
	}
	m, err := inf.mo.load(inf.model)
	if err != nil {
		return err
	}
	c, err := bounded.New(sr.Pipeline, m, bounded.Options{GPUClass: inf.gpuClass, Mode: inf.mode, Threshold: inf.threshold,
		Label: bounded.ClassIndex(inf.label), ProfileDir: a.profileDir(inf.dir), Conditions: conds})
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	defer c.Close()
	res, err := c.Check(ctx, sr.Run, o.check, o.manifestID, input)
	if res != nil && len(res.Records) > 0 {
		// Records made are saved even when a later one failed.
		if serr := sr.Save(); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		return o.so.runError(err, "the run is closed; open a new one with 'svc run open'")
	}
	if inf.traceOut != "" {
		doc, err := document.MarshalIndent(res.Trace)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if err := fsutil.WriteNew(inf.traceOut, doc, 0o600); err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
	}
	if inf.condOut != "" {
		doc, err := json.MarshalIndent(res.Conditions, "", "  ")
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if err := fsutil.WriteNew(inf.condOut, append(doc, '\n'), 0o600); err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
	}
	if o.co.output == outputJSON {
		return a.writeJSON(present.InferenceJSON(res, inf.traceOut))
	}
	present.Inference(a.streams.Out, o.check, res, inf.threshold, inf.gpuClass)
	return nil
}
