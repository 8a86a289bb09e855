package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/app/cli/internal/present"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/calibration"
)

// calibrateRunOptions are the flags of svc calibrate run.
type calibrateRunOptions struct {
	mo                                  modelOptions
	models, hubIDs                      []string
	gpuClass, corpus, out, measOut      string
	profileID, modelClass, architecture string
	passes, threads, workers            int
	workersSet                          bool // --workers given (0 is then refused)
	margin                              float64
	seed                                uint64
	force                               bool
	output                              string
}

// newCmdCalibrateRun builds svc calibrate run; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdCalibrateRun(a *app, runF func(*calibrateRunOptions) error) *cobra.Command {
	o := &calibrateRunOptions{}
	cmd := &cobra.Command{
		Use:   "run --model DIR|FILE [--model ...] --out profile.json",
		Short: "Calibrate a drift profile by measuring real executions",
		Long: `Measure each operator's drift between the GPU class's production execution
and the reference execution over --passes inferences (inputs from --corpus,
one text per line, or generated from the tokenizer's vocabulary), and write
an unsigned drift profile: for each operator class the 99th, 99.9th and
99.99th percentile of the drift, times --safety-margin, and the models it
covers with their operator counts per trace mode. Publish it with
'svc registry publish' (which signs it with the service key).

Drift of an operator is max(|Δmean|, |ΔRMS|) of its output divided by the
reference output's RMS. On the cpu class the production execution is ONNX
Runtime's default (every graph optimisation, fused kernels where the trace
mode leaves nodes fusable) and the reference execution is the unoptimised
graph on one thread: what 'svc verify --trace' replays. Drift below 2^-20
(bit-identical executions) is counted as 2^-20 so no bound is zero.

Several --model flags calibrate one profile for models of one class; their
drift must agree within 1.25x at every percentile, else calibrate them
separately. Needs a build with cgo and ONNX Runtime (make ort).

--workers bounds how many executions run at once. By default each
production execution has its own goroutine and the reference execution
(the slowest) one more, so a pass's executions overlap; --workers 1 runs
them one after another on one goroutine, and a larger value adds copies of
the reference execution so passes overlap (more memory, one model copy
each). The profile is the same bytes whatever the value.`,
		Example: `  svc calibrate run --model pii-model --gpu-class cpu --passes 1000 --out profile.json
  svc registry publish profile.json --data-dir /var/lib/svc   # the operator: the service signs it`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.workersSet = cmd.Flags().Changed("workers")
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runCalibrate(o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.models, "model", nil, "model directory or model.onnx (repeatable: one profile for several models of a class)")
	f.StringVar(&o.gpuClass, "gpu-class", "cpu", "hardware class calibrated (cpu on this build)")
	f.IntVar(&o.passes, "passes", calibration.DefaultPasses, "inference passes per model")
	f.Float64Var(&o.margin, "safety-margin", calibration.DefaultSafetyMargin, "multiplier on the measured percentiles")
	f.StringVar(&o.corpus, "corpus", "", "calibration inputs, one text per line (default: generated from the vocabulary)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of generated inputs")
	f.IntVar(&o.threads, "threads", 0, "production execution threads (default: ONNX Runtime's)")
	f.IntVar(&o.workers, "workers", 0, "executions run at once, 1 to 256 (default: one per production execution plus one reference)")
	f.StringVar(&o.out, "out", "", "write the unsigned profile here (required)")
	f.BoolVar(&o.force, "force", false, "overwrite --out")
	f.StringVar(&o.measOut, "measurements-out", "", "also write the per-pass measurements here, for 'svc calibrate merge' with other machines'")
	f.StringVar(&o.profileID, "profile-id", "", "profile id <publisher>/<model_class>-class/v<x.y.z> (default local/<model-class>-class/v1.0.0)")
	f.StringVar(&o.modelClass, "model-class", "classifier", "model class, e.g. pii, toxicity, prompt-injection")
	f.StringVar(&o.architecture, "architecture", "", "architecture (default: from config.json, else bert-like)")
	f.StringArrayVar(&o.hubIDs, "hub-model-id", nil, "hub model id of each --model, in order (optional)")
	o.mo.addRuntime(cmd)
	addOutputFlag(cmd, &o.output)
	return cmd
}

// validate checks the flags alone.
func (o *calibrateRunOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	switch {
	case len(o.models) == 0:
		return errorf(ExitUsage, "pass --model DIR (see 'svc model generate')", "no model given")
	case o.out == "":
		return errorf(ExitUsage, "pass --out profile.json", "no output file given")
	case o.passes < 1:
		// The library reads 0 as its default; on the command line 0 is a mistake.
		return errorf(ExitUsage, "pass --passes N with N at least 1 (the default is 1000)", "--passes %d: no inference to calibrate on", o.passes)
	case o.workersSet && (o.workers < 1 || o.workers > calibration.MaxWorkers):
		// The library reads 0 as its default; on the command line 0 is a mistake.
		return errorf(ExitUsage, fmt.Sprintf("pass --workers N with N from 1 to %d, or leave it out for the default", calibration.MaxWorkers), "--workers %d: no execution could run", o.workers)
	case o.profileID != "" && !profile.ValidID(o.profileID):
		return errorf(ExitUsage, "write it as <publisher>/<model_class>-class/v<major>.<minor>.<patch>, lowercase", "--profile-id %q is not a profile id", o.profileID)
	}
	return nil
}

// runCalibrate measures the models and writes the unsigned profile
// (calibration.Calibrate).
func (a *app) runCalibrate(o *calibrateRunOptions) error {
	if _, err := os.Stat(o.out); err == nil && !o.force {
		return errorf(ExitUsage, "choose another --out or pass --force", "%s already exists", o.out)
	}
	if o.profileID == "" {
		o.profileID = calibration.DefaultProfileID(o.modelClass)
	}
	if !profile.ValidID(o.profileID) {
		return errorf(ExitUsage, "write it as <publisher>/<model_class>-class/v<major>.<minor>.<patch>, lowercase", "--profile-id %q is not a profile id", o.profileID)
	}
	opts := calibration.Options{GPUClass: o.gpuClass, Passes: o.passes, SafetyMargin: o.margin, Seed: o.seed, Threads: o.threads, Workers: o.workers}
	if o.corpus != "" {
		f, err := os.Open(o.corpus)
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("read corpus: %w", err)}
		}
		opts.Corpus, err = calibration.ReadCorpus(f)
		f.Close()
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("corpus %s: %w", o.corpus, err), Hint: "write one input text per line"}
		}
	}
	arch := o.architecture
	var ms []*calibration.Measurement
	for i, path := range o.models {
		m, err := o.mo.load(path)
		if err != nil {
			return err
		}
		if arch == "" {
			arch = calibration.Architecture(path)
		}
		bar := present.NewProgress(a.streams.Err, a.streams.ErrIsTTY && a.streams.Getenv("TERM") != "dumb", fmt.Sprintf("model %d/%d", i+1, len(o.models)))
		opts.Progress = bar.Update
		meas, err := calibration.Measure(m, opts)
		bar.Done()
		if err != nil {
			if errors.Is(err, calibration.ErrOptions) {
				return &Error{Code: ExitUsage, Err: err}
			}
			return &Error{Code: ExitFailure, Err: fmt.Errorf("calibrate %s: %w", path, err)}
		}
		ms = append(ms, meas)
		if o.output != outputJSON {
			fmt.Fprintf(a.streams.Err, "%s: %s: %d passes in %s\n", a.name, path, meas.Passes, meas.Elapsed.Round(time.Millisecond))
		}
	}
	p, err := calibration.Build(ms, calibration.Meta{ProfileID: o.profileID, ModelClass: o.modelClass, Architecture: arch, HubModelIDs: o.hubIDs, Date: time.Now()}, opts)
	if err != nil {
		if errors.Is(err, calibration.ErrDriftDiverges) {
			return &Error{Code: ExitFailure, Err: err}
		}
		return &Error{Code: ExitUsage, Err: err}
	}
	doc, err := document.MarshalIndent(p)
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.force {
		os.Remove(o.out)
	}
	if err := fsutil.WriteNew(o.out, doc, 0o644); err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.measOut != "" {
		rec, err := calibration.Record(ms)
		if err == nil {
			doc, err = document.Marshal(rec)
		}
		if err == nil {
			err = fsutil.WriteReplace(o.measOut, doc, 0o644)
		}
		if err != nil {
			return &Error{Code: ExitFailure, Err: fmt.Errorf("measurements: %w", err)}
		}
	}
	if o.output == outputJSON {
		return a.writeJSON(map[string]any{"out": o.out, "profile": p})
	}
	present.Calibrated(a.streams.Out, p, o.out)
	fmt.Fprintf(a.streams.Out, "unsigned: publish it with 'svc registry publish %s'\n", o.out)
	return nil
}
