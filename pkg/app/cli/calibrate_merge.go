package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/calibration"
)

// calibrateMergeOptions are the flags and arguments of svc calibrate merge.
type calibrateMergeOptions struct {
	files                                            []string // the measurements files
	out, profileID, modelClass, architecture, output string
	hubIDs                                           []string
	margin                                           float64
	force                                            bool
}

// newCmdCalibrateMerge builds svc calibrate merge; runF, when not nil,
// gets the parsed options instead of the run (a test's seam).
func newCmdCalibrateMerge(a *app, runF func(*calibrateMergeOptions) error) *cobra.Command {
	o := &calibrateMergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge MEASUREMENTS... --out profile.json",
		Short: "Make one drift profile from several machines' calibration measurements",
		Long: `Merge the measurements files that 'svc calibrate run --measurements-out'
wrote on several machines (CPUs with different kernel paths: AVX-512, AVX2,
SSE4.2, …) into one unsigned profile. Every machine's production execution
is compared with every machine's reference execution on the passes whose
input is the same (calibrate with the same --seed or --corpus everywhere),
so the bounds cover a client on any of those machines audited on any
other. The profile lists the machines and kernel paths it covers and the
measured distribution per operator class. Publish it with
'svc registry publish'.`,
		Example: `  svc calibrate run --model pii-model --passes 1000 --out profile.unsigned.json --measurements-out avx512.json   # on each machine
  svc calibrate merge avx512.json avx2.json sse42.json --out profile.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runCalibrateMerge(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "write the unsigned profile here (required)")
	f.BoolVar(&o.force, "force", false, "overwrite --out")
	f.Float64Var(&o.margin, "safety-margin", calibration.DefaultSafetyMargin, "multiplier on the measured percentiles")
	f.StringVar(&o.profileID, "profile-id", "", "profile id <publisher>/<model_class>-class/v<x.y.z> (default local/<model-class>-class/v1.0.0)")
	f.StringVar(&o.modelClass, "model-class", "classifier", "model class, e.g. pii, toxicity, prompt-injection")
	f.StringVar(&o.architecture, "architecture", "bert-like", "architecture")
	f.StringArrayVar(&o.hubIDs, "hub-model-id", nil, "hub model id of each model, in order (optional)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// validate checks the flags alone.
func (o *calibrateMergeOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	switch {
	case o.out == "":
		return errorf(ExitUsage, "pass --out profile.json", "no output file given")
	case o.profileID != "" && !profile.ValidID(o.profileID):
		return errorf(ExitUsage, "write it as <publisher>/<model_class>-class/v<major>.<minor>.<patch>, lowercase", "--profile-id %q is not a profile id", o.profileID)
	}
	return nil
}

// runCalibrateMerge merges the measurements into one unsigned profile
// (calibration.MergeProfile).
func (a *app) runCalibrateMerge(o *calibrateMergeOptions) error {
	files := o.files
	if _, err := os.Stat(o.out); err == nil && !o.force {
		return errorf(ExitUsage, "choose another --out or pass --force", "%s already exists", o.out)
	}
	if o.profileID == "" {
		o.profileID = calibration.DefaultProfileID(o.modelClass)
	}
	if !profile.ValidID(o.profileID) {
		return errorf(ExitUsage, "write it as <publisher>/<model_class>-class/v<major>.<minor>.<patch>, lowercase", "--profile-id %q is not a profile id", o.profileID)
	}
	docs := make([][]byte, len(files))
	for i, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("read measurements: %w", err)}
		}
		docs[i] = b
	}
	p, _, err := calibration.MergeProfile(docs, files, calibration.Meta{ProfileID: o.profileID, ModelClass: o.modelClass, Architecture: o.architecture, HubModelIDs: o.hubIDs, Date: time.Now()}, calibration.Options{SafetyMargin: o.margin})
	if err != nil {
		if errors.Is(err, calibration.ErrDriftDiverges) {
			return &Error{Code: ExitFailure, Err: err}
		}
		return &Error{Code: ExitUsage, Err: err, Hint: "merge files written by 'svc calibrate run --measurements-out' for the same models"}
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
	if o.output == outputJSON {
		return a.writeJSON(map[string]any{"out": o.out, "profile": p})
	}
	w := a.streams.Out
	fmt.Fprintf(w, "%s (%s, %s) -> %s\n", p.ProfileID, strings.Join(p.CalibratedGPUClasses, ","), p.DriftDefinition, o.out)
	for _, m := range p.Coverage {
		fmt.Fprintf(w, "  machine %s, %s kernels, %d passes\n", m.CPU, m.KernelPath, m.Passes)
	}
	for _, c := range profile.OperatorClasses() {
		if b, ok := p.Operators[c]; ok {
			d := p.Measured[c]
			fmt.Fprintf(w, "  %-10s p99.99 bound %.3g (measured p99.99 %.3g, max %.3g, %d samples)\n", c, b.P9999, d.P9999, d.Max, d.Samples)
		}
	}
	fmt.Fprintf(w, "unsigned: publish it with 'svc registry publish %s'\n", o.out)
	return nil
}
