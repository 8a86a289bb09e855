// Package bounded runs a transformer classifier as a bound_committed_inference
// check (docs/BOUNDED.md, Bounded Inference): it looks the model up in the profile
// registry by onnx_model_hash (once; the profile is cached), wraps the
// inference in the boundary rule decomposition — pre_conditions
// tokenization, input_schema_validation and truncation_check, the traced
// forward pass, post_conditions threshold_check and output_schema_validation
// — and records each part on a run. The traced forward pass is recorded at
// operator_bound when a profile covers the model and GPU class; otherwise
// the stage is open_source_ml at execution level and the service raises a
// model_profile_missing gap. The trace stays with the caller (for audits);
// only its Merkle root and operator count are sent.
//
// It needs a build with cgo and ONNX Runtime (pkg/ml/inference).
package bounded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/zkprove"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/tokenizer"
	"github.com/svc-gov/svc/pkg/ml/trace"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// Options configure a Classifier. Zero values take the defaults.
type Options struct {
	// GPUClass is the hardware class the inference runs on (default cpu).
	GPUClass string
	// Mode is the trace mode: Auto (the default), trace.Production,
	// trace.Residual or trace.Full (docs/BOUNDED.md, trace modes).
	Mode string
	// Label is the class whose probability is the score; nil takes class
	// 1, the positive class of a binary classifier (ClassIndex(0) for the
	// first class).
	Label *int
	// Threshold: a score at or above it fails the check (default 0.5).
	// The verdict compares the quantised score and threshold
	// (conditions.ScoreBelow: pass when Q(score) < Q(threshold)), so it
	// is exactly what a below_threshold_check proof states.
	Threshold float64
	// Threads bounds ONNX Runtime's threads (0: its default).
	Threads int
	// Trust, when set, verifies profile signatures; a profile that does
	// not verify is not used.
	Trust *signing.Bundle
	// ProfileDir, when set, is an on-disk profile cache: looked in before
	// the service, and where fetched profiles are kept (svc verify reads
	// the same directory).
	ProfileDir string
	// RetryLookup is how long a model without a profile waits before it is
	// looked up again (default 5 minutes), so a profile published later is
	// picked up without a network call per inference.
	RetryLookup time.Duration
	// Conditions prove the truncation_check and threshold_check records
	// with Groth16 (zkprove.NewCondition of a truncation_check and a
	// below_threshold_check circuit entry; either may be absent). Without
	// them those records are recorded without a proof, as before.
	Conditions []*zkprove.Condition
}

// ErrClosed reports a check on a Classifier after Close.
var ErrClosed = errors.New("bounded: the classifier is closed")

// Auto is the default Options.Mode: trace in residual mode when the
// model's profile lists a residual operator count that matches the model
// (residual mode catches a substituted model that production mode can
// miss, at about production's latency: docs/BOUNDED.md), else in
// production mode (no profile yet, or a profile calibrated before the
// residual mode existed). A VPEC records the mode each trace used.
const Auto = "auto"

// ClassIndex returns a pointer to i, for Options.Label.
func ClassIndex(i int) *int { return &i }

// Classifier is a model loaded for traced inference with its profile
// decision. It is safe for concurrent use; inferences run one at a time.
type Classifier struct {
	p    *client.Pipeline
	m    *trace.Model
	opts Options

	// mu guards tracers (one per trace mode used, loaded on first use)
	// and serialises inferences.
	mu      sync.Mutex
	tracers map[string]*trace.Tracer

	pmu      sync.Mutex
	prof     *profile.Profile
	mode     string // the trace mode with prof (Auto resolved)
	note     string
	lookedUp time.Time // when the service was last asked (zero: never)
}

// New loads m for tracing. ONNX Runtime must be initialised
// (inference.Init).
func New(p *client.Pipeline, m *trace.Model, opts Options) (*Classifier, error) {
	if opts.GPUClass == "" {
		opts.GPUClass = "cpu"
	}
	if opts.Mode == "" {
		opts.Mode = Auto
	}
	if opts.Label == nil {
		opts.Label = ClassIndex(1)
	}
	if opts.Threshold == 0 {
		opts.Threshold = 0.5
	}
	if opts.RetryLookup == 0 {
		opts.RetryLookup = 5 * time.Minute
	}
	switch {
	case opts.Mode != Auto && !trace.ValidMode(opts.Mode):
		return nil, fmt.Errorf("bounded: trace mode %q: use %s, %s, %s or %s", opts.Mode, Auto, trace.Production, trace.Residual, trace.Full)
	case !(opts.Threshold > 0 && opts.Threshold <= 1):
		return nil, fmt.Errorf("bounded: threshold %v: want a probability in (0, 1]", opts.Threshold)
	case *opts.Label < 0:
		return nil, fmt.Errorf("bounded: label %d: want a class index", *opts.Label)
	case opts.Threshold < 0x1p-32:
		return nil, fmt.Errorf("bounded: threshold %v is below 2^-32, the resolution of the quantised score", opts.Threshold)
	}
	if err := checkConditions(opts.Conditions); err != nil {
		return nil, err
	}
	c := &Classifier{p: p, m: m, opts: opts, tracers: map[string]*trace.Tracer{}}
	// Load the mode used without a profile now, so that a model that
	// cannot be traced fails here rather than at the first check.
	if _, err := c.tracer(c.fallbackMode()); err != nil {
		return nil, err
	}
	return c, nil
}

// fallbackMode is the trace mode used while no profile covers the model:
// the configured one, production for Auto.
func (c *Classifier) fallbackMode() string {
	if c.opts.Mode == Auto {
		return trace.Production
	}
	return c.opts.Mode
}

// tracer returns the tracer of mode, loading the model for it on first
// use and releasing the tracer of the mode used before (Auto moves from
// production to residual once, when the profile is found; traces still
// being computed keep their tensors until they are done). The caller
// holds c.mu (or has the only reference to c).
func (c *Classifier) tracer(mode string) (*trace.Tracer, error) {
	if c.tracers == nil {
		return nil, ErrClosed
	}
	if t, ok := c.tracers[mode]; ok {
		return t, nil
	}
	t, err := trace.NewTracer(c.m, mode, inference.Options{Threads: c.opts.Threads})
	if err != nil {
		return nil, err
	}
	for old, ot := range c.tracers {
		ot.Close()
		delete(c.tracers, old)
	}
	c.tracers[mode] = t
	return t, nil
}

// Close releases the loaded model.
func (c *Classifier) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, t := range c.tracers {
		errs = append(errs, t.Close())
	}
	c.tracers = nil
	return errors.Join(errs...)
}

// Model is the classifier's model.
func (c *Classifier) Model() *trace.Model { return c.m }

// Result is one checked inference.
type Result struct {
	// Verdict is pass when the score is below the threshold, else fail.
	Verdict       vpec.CheckResult
	Score         float64
	Probabilities []float64
	// StageType is bound_committed_inference or open_source_ml.
	StageType string
	// ProofLevel of the inference record: operator_bound or execution.
	ProofLevel vpec.ProofLevel
	ProfileID  string
	// ProfileNote says why no profile applies (open_source_ml), if so.
	ProfileNote string
	// Trace is the local operator trace (keep it for audits; never sent).
	Trace *trace.Trace
	// Records are the six records, in order.
	Records []*client.RecordResult
	// Queued is true when any record waits in the local queue.
	Queued bool
	// Conditions open the proved condition records (Options.Conditions):
	// values and salts, kept here, never sent.
	Conditions []ConditionOpening
}

// profileFor returns the profile covering the model on the GPU class, or
// nil and why not. It calls the service at most once per RetryLookup
// while no profile is known, and never again once one is.
func (c *Classifier) profileFor(ctx context.Context) (*profile.Profile, string, string) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	prof, note := c.lookup(ctx)
	if prof == nil {
		return nil, c.fallbackMode(), note
	}
	return prof, c.mode, note
}

// lookup is profileFor's search; the caller holds c.pmu.
func (c *Classifier) lookup(ctx context.Context) (*profile.Profile, string) {
	if c.prof != nil || (!c.lookedUp.IsZero() && time.Since(c.lookedUp) < c.opts.RetryLookup) {
		return c.prof, c.note
	}
	c.lookedUp = time.Now()
	var docs [][]byte
	if c.opts.ProfileDir != "" {
		set := profile.NewSet()
		set.AddDir(c.opts.ProfileDir)
		docs = set.ForModel(c.m.Hash)
	}
	fetched := false
	if len(docs) == 0 {
		doc, err := c.p.ProfileDocument(ctx, c.m.Hash)
		var ae *client.APIError
		switch {
		case errors.As(err, &ae) && ae.Status == 404:
			c.note = "no profile in the registry for model " + c.m.Hash
			return nil, c.note
		case err != nil:
			c.note = "profile lookup failed (retried later): " + err.Error()
			return nil, c.note
		}
		docs, fetched = [][]byte{doc}, true
	}
	var why []string
	for _, doc := range docs {
		p, err := c.parse(doc)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		if !p.CoversGPU(c.opts.GPUClass) {
			why = append(why, fmt.Sprintf("profile %s does not cover gpu class %s (calibrated: %v)", p.ProfileID, c.opts.GPUClass, p.CalibratedGPUClasses))
			continue
		}
		pm, ok := p.Model(c.m.Hash)
		if !ok {
			why = append(why, fmt.Sprintf("profile %s does not cover model %s", p.ProfileID, c.m.Hash))
			continue
		}
		mode := c.opts.Mode
		if mode == Auto {
			mode = trace.Production
			if want, ok := pm.OperatorCounts[trace.Residual]; ok && want == int64(c.operators(trace.Residual)) {
				mode = trace.Residual
			}
		}
		if want := pm.OperatorCounts[mode]; want != int64(c.operators(mode)) {
			why = append(why, fmt.Sprintf("profile %s gives %d operators in %s mode, this model traces %d", p.ProfileID, want, mode, c.operators(mode)))
			continue
		}
		if fetched && c.opts.ProfileDir != "" {
			c.keep(p.ProfileID, doc)
		}
		c.prof, c.mode, c.note = p, mode, ""
		return p, ""
	}
	c.note = strings.Join(why, "; ")
	return nil, c.note
}

func (c *Classifier) parse(doc []byte) (*profile.Profile, error) {
	if c.opts.Trust != nil {
		return profile.Verify(doc, c.opts.Trust)
	}
	return profile.Parse(doc)
}

// operators is the number of operators a trace of the model in mode
// records (-1 when the model cannot be traced in that mode).
func (c *Classifier) operators(mode string) int {
	nodes, err := c.m.TracedNodes(mode)
	if err != nil {
		return -1
	}
	return len(nodes)
}

// keep writes a fetched profile to the profile cache (best effort).
func (c *Classifier) keep(id string, doc []byte) {
	if err := os.MkdirAll(c.opts.ProfileDir, 0o755); err != nil {
		return
	}
	name := strings.NewReplacer("/", "_", "\\", "_").Replace(id) + ".json"
	path := filepath.Join(c.opts.ProfileDir, name)
	if _, err := os.Stat(path); err == nil {
		return
	}
	fsutil.WriteNew(path, doc, 0o644)
}

// Check runs the classifier on input inside run as one
// bound_committed_inference check named check (manifest manifestID) and
// records its six parts. Recording follows the client's fail-open rule:
// when the service is down the records queue and Result.Queued is true.
// Errors are inference failures and the client's record errors (a sealed
// run, invalid parameters). It is Start and Wait: the same records.
func (c *Classifier) Check(ctx context.Context, run *client.Run, check, manifestID string, input []byte) (*Result, error) {
	p, err := c.start(ctx, run, check, manifestID, input, false)
	if err != nil {
		return nil, err
	}
	return p.Wait(ctx)
}

// Pending is a check whose inference has run and whose verdict is known,
// but whose trace is still being computed and whose records are not made
// yet (Start). Its fields are set at Start and never change.
type Pending struct {
	// Verdict, Score and Probabilities are the Result's (Verdict pass when
	// the score is below the threshold, fail at or above it, error when
	// the output is not a probability distribution).
	Verdict       vpec.CheckResult
	Score         float64
	Probabilities []float64

	c                 *Classifier
	run               *client.Run
	check, manifestID string
	input             []byte
	enc               tokenizer.Encoding
	prof              *profile.Profile
	trace             func() (*trace.Trace, error) // waits for the trace
	res               *Result
	label             int
	outputOK          bool
	once              sync.Once
	result            *Result
	err               error
}

// Start is Check with the verdict first: it runs the classifier on input
// and returns as soon as the model's output is known, with the verdict,
// score and probabilities, while the trace's statistics and Merkle root
// are computed on another goroutine (trace.Tracer.Start). Wait finishes
// the trace and records the check's six parts, exactly as Check does.
//
// The records are made only by Wait: a Pending never waited for leaves
// the check unrecorded on the run (its trace's tensors are released all
// the same), so call Wait for every Start before the run is closed. Checks
// started on one run are recorded in the order their Waits run. At most
// two inferences' tensors are held at a time: a Start while two traces are
// still being computed waits for one (never for a Wait). Start keeps a
// copy of input: the caller may reuse its buffer at once.
func (c *Classifier) Start(ctx context.Context, run *client.Run, check, manifestID string, input []byte) (*Pending, error) {
	return c.start(ctx, run, check, manifestID, input, true)
}

// start is Start, with the trace computed on another goroutine (async)
// or on this one before it returns (Check: no hand-off, which costs more
// than it saves when nobody acts on the verdict before the records).
func (c *Classifier) start(ctx context.Context, run *client.Run, check, manifestID string, input []byte, async bool) (*Pending, error) {
	prof, mode, note := c.profileFor(ctx)
	enc := c.m.Encode(input)
	var probs []float64
	var wait func() (*trace.Trace, error)
	c.mu.Lock()
	t, err := c.tracer(mode)
	switch {
	case err != nil:
	case async:
		var tp *trace.Pending
		if tp, err = t.Start(enc, input); err == nil {
			probs, wait = tp.Probabilities(), tp.Wait
		}
	default:
		var tr *trace.Trace
		if tr, err = t.TraceEncoded(enc, input); err == nil {
			probs, wait = slices.Clone(tr.Probabilities), func() (*trace.Trace, error) { return tr, nil }
		}
	}
	c.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("bounded: %s: %w", check, err)
	}
	res := &Result{Probabilities: probs, StageType: stage.OpenSourceML, ProofLevel: vpec.Execution, ProfileNote: note}
	label := *c.opts.Label
	outputOK := len(probs) > label
	var sum float64
	for _, p := range probs {
		if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 || p > 1 {
			outputOK = false
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-3 {
		outputOK = false
	}
	res.Verdict = vpec.ResultFail
	if outputOK {
		res.Score = probs[label]
		if below, _ := conditions.ScoreBelow(res.Score, c.opts.Threshold); below {
			res.Verdict = vpec.ResultPass
		}
	} else {
		res.Verdict = vpec.ResultError
	}
	return &Pending{Verdict: res.Verdict, Score: res.Score, Probabilities: slices.Clone(probs),
		c: c, run: run, check: check, manifestID: manifestID, input: slices.Clone(input), enc: enc, prof: prof,
		trace: wait, res: res, label: label, outputOK: outputOK}, nil
}

// Wait waits for the trace and records the check's six parts on the run
// Start was given, and returns the Result (the same as Check's for the
// input). Only the first call records; later and concurrent calls return
// its Result and error.
func (p *Pending) Wait(ctx context.Context) (*Result, error) {
	p.once.Do(func() { p.result, p.err = p.finish(ctx) })
	return p.result, p.err
}

// finish is the second half of Check: the trace, then the records.
func (p *Pending) finish(ctx context.Context) (*Result, error) {
	c, run, check, manifestID, input, enc, prof, res, label, outputOK := p.c, p.run, p.check, p.manifestID, p.input, p.enc, p.prof, p.res, p.label, p.outputOK
	tr, err := p.trace()
	if err != nil {
		return nil, fmt.Errorf("bounded: %s: %w", check, err)
	}
	res.Trace = tr
	var inferOpts []client.RecordOption
	if prof != nil {
		res.StageType, res.ProofLevel, res.ProfileID = stage.BoundCommittedInference, vpec.OperatorBound, prof.ProfileID
		inferOpts = append(inferOpts, client.WithBoundedInference(vpec.BoundedInference{
			ProfileID: prof.ProfileID, GPUClass: c.opts.GPUClass, ONNXModelHash: tr.ONNXModelHash,
			TraceMode: tr.Mode, OperatorCount: tr.OperatorCount, MerkleRoot: tr.MerkleRoot,
		}))
	}
	ids, err := canonical.Marshal(enc.IDs)
	if err != nil {
		return nil, fmt.Errorf("bounded: %s: %w", check, err)
	}
	output, err := canonical.Marshal(tr.Probabilities)
	if err != nil {
		return nil, fmt.Errorf("bounded: %s: output: %w", check, err)
	}
	passIf := func(ok bool) vpec.CheckResult {
		if ok {
			return vpec.ResultPass
		}
		return vpec.ResultFail
	}
	maxTokens := c.m.SeqLen
	if maxTokens == 0 {
		maxTokens = c.m.MaxLen
	}
	type part struct {
		name, stagePart string
		result          vpec.CheckResult
		opts            []client.RecordOption
	}
	// The pre- and post-conditions are mathematical only beside an
	// operator_bound inference (decision D6); in the open_source_ml
	// fallback they are execution-level records like the inference.
	cond := vpec.Execution
	if res.StageType == stage.BoundCommittedInference {
		cond = vpec.Mathematical
	}
	math_ := client.WithProofLevel(cond)
	parts := []part{
		{check + ":tokenization", stage.PartPre, vpec.ResultPass, []client.RecordOption{math_, client.WithOutput(ids),
			client.WithDetails(map[string]any{"tokens": tr.Tokens})}},
		{check + ":input_schema_validation", stage.PartPre, passIf(len(input) > 0 && utf8.Valid(input)), []client.RecordOption{math_}},
		{check + ":truncation_check", stage.PartPre, passIf(!tr.Truncated), []client.RecordOption{math_,
			client.WithDetails(map[string]any{"tokens": tr.Tokens, "max_tokens": maxTokens})}},
		{check, stage.PartInference, res.Verdict, append(inferOpts, client.WithOutput(output), client.WithModelHash(tr.ONNXModelHash),
			client.WithDetails(map[string]any{stage.DetailGPUClass: c.opts.GPUClass}))},
		{check + ":threshold_check", stage.PartPost, res.Verdict, []client.RecordOption{math_, client.WithOutput(output),
			client.WithDetails(map[string]any{"threshold": c.opts.Threshold, "label": label})}},
		{check + ":output_schema_validation", stage.PartPost, passIf(outputOK), []client.RecordOption{math_, client.WithOutput(output),
			client.WithDetails(map[string]any{"classes": len(tr.Probabilities)})}},
	}
	proved, err := c.proveConditions(check, input, res, maxTokens, output)
	if err != nil {
		return nil, fmt.Errorf("bounded: %s: %w", check, err)
	}
	for _, pt := range parts {
		r, err := recordPart(ctx, run, proved[pt.name], pt.name, manifestID, pt.result, input, client.WithStage(res.StageType, pt.stagePart), pt.opts)
		if err != nil {
			return res, fmt.Errorf("bounded: record %s: %w", pt.name, err)
		}
		res.Records = append(res.Records, r)
		res.Queued = res.Queued || r.Queued
	}
	return res, nil
}
