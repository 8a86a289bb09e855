package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/cli/internal/present"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/trace"
)

// inferenceOptions are the flags of 'svc record --model'.
type inferenceOptions struct {
	mo                                   modelOptions
	model, gpuClass, mode, traceOut, dir string
	threshold                            float64
	label                                int
}

func (o *inferenceOptions) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", "run this classifier (model directory or model.onnx) as a bound_committed_inference check")
	f.StringVar(&o.gpuClass, "gpu-class", "cpu", "with --model: the hardware class the inference runs on")
	f.StringVar(&o.mode, "mode", trace.Production, "with --model: trace mode, full, production or residual (docs/BOUNDED.md)")
	f.Float64Var(&o.threshold, "threshold", 0.5, "with --model: a score at or above it fails the check")
	f.IntVar(&o.label, "label", 1, "with --model: the class whose probability is the score")
	f.StringVar(&o.traceOut, "trace-out", "", "with --model: keep the operator trace here (local only; for 'svc verify --trace')")
	f.StringVar(&o.dir, "profile-dir", "", "with --model: profile cache (default: svc/profiles in the user cache directory; env SVC_PROFILE_DIR)")
	o.mo.addRuntime(cmd)
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
func (a *app) recordInference(ctx context.Context, o *recordOptions, sr *client.ScriptRun, input []byte) error {
	inf := &o.inf
	if inf.traceOut != "" {
		if _, err := os.Stat(inf.traceOut); err == nil {
			return errorf(ExitUsage, "choose another --trace-out", "%s already exists", inf.traceOut)
		}
	}
	m, err := inf.mo.load(inf.model)
	if err != nil {
		return err
	}
	c, err := bounded.New(sr.Pipeline, m, bounded.Options{GPUClass: inf.gpuClass, Mode: inf.mode, Threshold: inf.threshold,
		Label: bounded.ClassIndex(inf.label), ProfileDir: a.profileDir(inf.dir)})
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
	if o.co.output == outputJSON {
		return a.writeJSON(present.InferenceJSON(res, inf.traceOut))
	}
	present.Inference(a.streams.Out, o.check, res, inf.threshold, inf.gpuClass)
	return nil
}
