package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/calibration"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/trace"
	"github.com/svc-gov/svc/pkg/vpec"
)

// modelOptions locate a model and the ONNX Runtime library.
type modelOptions struct {
	ortLib string
}

func (o *modelOptions) addRuntime(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.ortLib, "ort-lib", "", "ONNX Runtime library (env SVC_ORT_LIB; default: the cache of make ort)")
}

// load initialises ONNX Runtime and loads the model at path.
func (o *modelOptions) load(path string) (*trace.Model, error) {
	lib, err := inference.LibraryPath(o.ortLib)
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: err, Hint: "install it with 'make ort' (scripts/install-ort.sh) or pass --ort-lib"}
	}
	if err := inference.Init(lib); err != nil {
		return nil, &Error{Code: ExitUsage, Err: err}
	}
	m, err := trace.LoadModel(path)
	if err != nil {
		hint := "a model directory holds model.onnx and tokenizer.json or vocab.txt (see 'svc model generate')"
		if errors.Is(err, trace.ErrModel) {
			hint = "pass an ONNX text classifier exported with int64 input_ids"
		}
		return nil, &Error{Code: ExitUsage, Err: err, Hint: hint}
	}
	return m, nil
}

// readInputText reads --input TEXT or --input-file F (- for stdin).
func (a *app) readInputText(text, file string, required bool) ([]byte, error) {
	switch {
	case text != "" && file != "":
		return nil, errorf(ExitUsage, "give the input once", "both --input and --input-file given")
	case text != "":
		return []byte(text), nil
	case file == "-":
		b, err := io.ReadAll(a.streams.In)
		if err != nil {
			return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("read input: %w", err)}
		}
		return b, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("read input: %w", err)}
		}
		return b, nil
	case required:
		return nil, errorf(ExitUsage, "pass --input TEXT or --input-file F", "no input given")
	}
	return nil, nil
}

type calibrateRunOptions struct {
	mo                                  modelOptions
	models, hubIDs                      []string
	gpuClass, corpus, out, measOut      string
	profileID, modelClass, architecture string
	passes, threads                     int
	margin                              float64
	seed                                uint64
	force                               bool
	output                              string
}

func (a *app) calibrateRunCmd() *cobra.Command {
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
separately. Needs a build with cgo and ONNX Runtime (make ort).`,
		Example: `  svc calibrate run --model pii-model --gpu-class cpu --passes 1000 --out profile.json
  svc registry publish profile.json --data-dir ./svc-data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runCalibrate(o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.models, "model", nil, "model directory or model.onnx (repeatable: one profile for several models of a class)")
	f.StringVar(&o.gpuClass, "gpu-class", "cpu", "hardware class calibrated (cpu on this build)")
	f.IntVar(&o.passes, "passes", calibration.DefaultPasses, "inference passes per model")
	f.Float64Var(&o.margin, "safety-margin", calibration.DefaultSafetyMargin, "multiplier on the measured percentiles")
	f.StringVar(&o.corpus, "corpus", "", "calibration inputs, one text per line (default: generated from the vocabulary)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of generated inputs")
	f.IntVar(&o.threads, "threads", 0, "production execution threads (default: ONNX Runtime's)")
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

func (a *app) runCalibrate(o *calibrateRunOptions) error {
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
	}
	if _, err := os.Stat(o.out); err == nil && !o.force {
		return errorf(ExitUsage, "choose another --out or pass --force", "%s already exists", o.out)
	}
	if o.profileID == "" {
		o.profileID = "local/" + o.modelClass + "-class/v1.0.0"
	}
	if !profile.ValidID(o.profileID) {
		return errorf(ExitUsage, "write it as <publisher>/<model_class>-class/v<major>.<minor>.<patch>, lowercase", "--profile-id %q is not a profile id", o.profileID)
	}
	opts := calibration.Options{GPUClass: o.gpuClass, Passes: o.passes, SafetyMargin: o.margin, Seed: o.seed, Threads: o.threads}
	if o.corpus != "" {
		data, err := os.ReadFile(o.corpus)
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("read corpus: %w", err)}
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				opts.Corpus = append(opts.Corpus, append([]byte(nil), line...))
			}
		}
		if len(opts.Corpus) == 0 {
			return errorf(ExitUsage, "write one input text per line", "corpus %s has no lines", o.corpus)
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
			arch = architectureOf(path)
		}
		bar := a.progress(fmt.Sprintf("model %d/%d", i+1, len(o.models)))
		opts.Progress = bar.update
		meas, err := calibration.Measure(m, opts)
		bar.done()
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
	w := a.streams.Out
	fmt.Fprintf(w, "%s (%s, %d passes, margin %gx) -> %s\n", p.ProfileID, strings.Join(p.CalibratedGPUClasses, ","), p.CalibrationPasses, p.SafetyMargin, o.out)
	for _, c := range profile.OperatorClasses() {
		if b, ok := p.Operators[c]; ok {
			fmt.Fprintf(w, "  %-10s p99 %.3g  p99.9 %.3g  p99.99 %.3g\n", c, b.P99, b.P99_9, b.P9999)
		}
	}
	for _, m := range p.Models {
		fmt.Fprintf(w, "  model %s operators full %d, production %d\n", m.ONNXModelHash, m.OperatorCounts[trace.Full], m.OperatorCounts[trace.Production])
	}
	fmt.Fprintf(w, "unsigned: publish it with 'svc registry publish %s'\n", o.out)
	return nil
}

// architectureOf reads model_type from a Hugging Face config.json beside
// the model, else "bert-like".
func architectureOf(path string) string {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	var cfg struct {
		ModelType string `json:"model_type"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
		if json.Unmarshal(b, &cfg) == nil && cfg.ModelType != "" {
			return cfg.ModelType
		}
	}
	return "bert-like"
}

// progressBar draws a one-line progress bar on a terminal's stderr and
// nothing elsewhere.
type progressBar struct {
	a     *app
	label string
	start time.Time
	last  time.Time
	on    bool
}

func (a *app) progress(label string) *progressBar {
	return &progressBar{a: a, label: label, start: time.Now(), on: a.streams.ErrIsTTY && a.streams.Getenv("TERM") != "dumb"}
}

func (b *progressBar) update(done, total int) {
	if !b.on || (done < total && time.Since(b.last) < 100*time.Millisecond) {
		return
	}
	b.last = time.Now()
	const width = 30
	filled := width * done / max(total, 1)
	eta := ""
	if done > 0 && done < total {
		left := time.Duration(float64(time.Since(b.start)) / float64(done) * float64(total-done))
		eta = " eta " + left.Round(time.Second).String()
	}
	fmt.Fprintf(b.a.streams.Err, "\r%s [%s%s] %d/%d passes%s\033[K", b.label, strings.Repeat("#", filled), strings.Repeat(" ", width-filled), done, total, eta)
}

func (b *progressBar) done() {
	if b.on {
		fmt.Fprint(b.a.streams.Err, "\r\033[K")
	}
}

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
	f.StringVar(&o.mode, "mode", trace.Production, "with --model: trace mode, full or production")
	f.Float64Var(&o.threshold, "threshold", 0.5, "with --model: a score at or above it fails the check")
	f.IntVar(&o.label, "label", 1, "with --model: the class whose probability is the score")
	f.StringVar(&o.traceOut, "trace-out", "", "with --model: keep the operator trace here (local only; for 'svc verify --trace')")
	f.StringVar(&o.dir, "profile-dir", "", "with --model: profile cache (default: svc/profiles in the user cache directory; env SVC_PROFILE_DIR)")
	o.mo.addRuntime(cmd)
}

func (a *app) recordInference(ctx context.Context, o *recordOptions, p *client.Pipeline, run *client.Run, input []byte) error {
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
	dir := inf.dir
	if dir == "" {
		dir = a.streams.Getenv("SVC_PROFILE_DIR")
	}
	if dir == "" {
		dir = defaultProfileDir()
	}
	c, err := bounded.New(p, m, bounded.Options{GPUClass: inf.gpuClass, Mode: inf.mode, Threshold: inf.threshold, Label: bounded.ClassIndex(inf.label), ProfileDir: dir})
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	defer c.Close()
	res, err := c.Check(ctx, run, o.check, o.manifestID, input)
	if res != nil && len(res.Records) > 0 {
		if serr := o.so.save(run.State()); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		if errors.Is(err, client.ErrRunSealed) {
			return &Error{Code: ExitUsage, Err: err, Hint: "the run is closed; open a new one with 'svc run open'"}
		}
		var ce *Error
		if errors.As(err, &ce) {
			return err
		}
		return &Error{Code: ExitFailure, Err: err}
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
		return a.writeJSON(map[string]any{"verdict": res.Verdict, "score": res.Score, "stage_type": res.StageType, "proof_level": res.ProofLevel,
			"profile_id": res.ProfileID, "profile_note": res.ProfileNote, "merkle_root": res.Trace.MerkleRoot, "operator_count": res.Trace.OperatorCount,
			"onnx_model_hash": res.Trace.ONNXModelHash, "trace": inf.traceOut, "queued": res.Queued, "records": res.Records})
	}
	w := a.streams.Out
	fmt.Fprintf(w, "%s %s score %.4f (threshold %g) %s\n", o.check, res.Verdict, res.Score, inf.threshold, res.ProofLevel)
	if res.ProfileID != "" {
		fmt.Fprintf(w, "  profile %s · %s, %d operators, root %s\n", res.ProfileID, inf.gpuClass, res.Trace.OperatorCount, res.Trace.MerkleRoot)
	} else {
		fmt.Fprintf(w, "  open_source_ml (model_profile_missing): %s\n", res.ProfileNote)
	}
	for _, r := range res.Records {
		state := "recorded"
		if r.Queued {
			state = "queued"
		}
		fmt.Fprintf(w, "  %s sequence %d %s\n", r.RecordID, r.Sequence, state)
	}
	return nil
}

// audit replays the trace of one Bounded Inference record of the VPEC doc
// (svc verify --trace) and returns the audit check.
func (a *app) audit(o *verifyOptions, doc []byte, trust *signing.Bundle, set *profile.Set) (vpec.Check, error) {
	c := vpec.Check{Name: vpec.CheckAudit}
	if o.model == "" || o.inputFile == "" {
		return c, errorf(ExitUsage, "pass --model DIR and --input-file F with --trace", "the audit needs the model and the input")
	}
	raw, err := os.ReadFile(o.traceFile)
	if err != nil {
		return c, &Error{Code: ExitUsage, Err: fmt.Errorf("read trace: %w", err)}
	}
	tr, err := trace.Decode(raw)
	if err != nil {
		return c, &Error{Code: ExitUsage, Err: err, Hint: "--trace takes a trace file written by 'svc trace' or 'svc record --model --trace-out'"}
	}
	input, err := os.ReadFile(o.inputFile)
	if err != nil {
		return c, &Error{Code: ExitUsage, Err: fmt.Errorf("read input: %w", err)}
	}
	fail := func(code, format string, args ...any) (vpec.Check, error) {
		c.Status, c.Code, c.Message = vpec.Fail, code, fmt.Sprintf(format, args...)
		return c, nil
	}
	var v vpec.VPEC
	if _, err := document.Parse(doc, &v); err != nil {
		return fail("AUDIT NOT POSSIBLE", "audit: the VPEC cannot be read: %v", err)
	}
	var rec *vpec.Record
	for i := range v.Records {
		if bi := v.Records[i].BoundedInference; bi != nil && bi.MerkleRoot == tr.MerkleRoot {
			rec = &v.Records[i]
		}
	}
	if rec == nil {
		return fail("TRACE NOT IN VPEC", "audit: no Bounded Inference record of the VPEC commits to the trace's root %s", tr.MerkleRoot)
	}
	bi := rec.BoundedInference
	var bad []string
	if err := tr.Verify(); err != nil {
		bad = append(bad, err.Error())
	}
	if bi.OperatorCount != tr.OperatorCount {
		bad = append(bad, fmt.Sprintf("operator_count %d in the record, %d in the trace", bi.OperatorCount, tr.OperatorCount))
	}
	if bi.ONNXModelHash != tr.ONNXModelHash {
		bad = append(bad, fmt.Sprintf("model %s in the record, %s in the trace", bi.ONNXModelHash, tr.ONNXModelHash))
	}
	if bi.TraceMode != tr.Mode {
		bad = append(bad, fmt.Sprintf("trace mode %s in the record, %s in the trace", bi.TraceMode, tr.Mode))
	}
	if rec.CommitmentHash != tr.InputCommitment {
		bad = append(bad, fmt.Sprintf("the record commits to input %s, the trace to %s", rec.CommitmentHash, tr.InputCommitment))
	}
	if len(bad) > 0 {
		c.Details = bad
		return fail("PROFILE MISMATCH (gpu_class "+bi.GPUClass+")", "audit of sequence %d: the trace does not match its record", rec.Sequence)
	}
	pdoc, err := set.Profile(bi.ProfileID)
	if err != nil {
		c.MissingTrust = true
		return fail("PROFILE NOT AVAILABLE", "audit: profile %s not available; pass it with --profile", bi.ProfileID)
	}
	prof, err := profile.Verify(pdoc, trust)
	if err != nil {
		return fail("PROFILE INVALID", "audit: profile %s: %v", bi.ProfileID, err)
	}
	m, err := o.mo.load(o.model)
	if err != nil {
		return c, err
	}
	res, err := calibration.Replay(m, tr, input, prof, bi.GPUClass)
	if err != nil {
		if errors.Is(err, calibration.ErrAudit) {
			return fail("PROFILE MISMATCH (gpu_class "+bi.GPUClass+")", "audit of sequence %d: %v", rec.Sequence, err)
		}
		return c, &Error{Code: ExitFailure, Err: fmt.Errorf("audit: %w", err)}
	}
	summary := res.Summary()
	if !res.Consistent {
		c.Details = append(res.Problems, res.RuleDetails()...)
		return fail("PROFILE MISMATCH (gpu_class "+bi.GPUClass+")", "profile inconsistent (%s · %s), sequence %d: %s", prof.ProfileID, bi.GPUClass, rec.Sequence, summary)
	}
	c.Status = vpec.Pass
	c.Message = fmt.Sprintf("profile consistent (%s · %s), sequence %d: %s", prof.ProfileID, bi.GPUClass, rec.Sequence, summary)
	c.Details = res.RuleDetails()
	return c, nil
}
