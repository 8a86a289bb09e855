// Package calibration measures per-operator drift of ONNX classifiers
// between the production execution of a hardware class and the reference
// execution, turns it into the bounds of a drift profile, and audits a
// trace against a profile by replaying the inference.
//
// Drift of one operator is max(|Δmean|, |ΔRMS|) / RMS_reference: the
// difference of its output statistics between the two executions,
// normalised by the reference output's RMS (a relative difference of a
// mean is ill-conditioned near zero). On the cpu class the production
// execution is ONNX Runtime's default (all graph optimisations, so fused
// kernels where the trace mode leaves nodes fusable; the machine's
// threads) and the reference execution is the unoptimised graph on one
// thread (inference.Options).
package calibration

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// Defaults of a calibration (docs/BOUNDED.md: 1000 passes, a 2x safety margin).
const (
	DefaultPasses       = 1000
	DefaultSafetyMargin = 2.0
	// MaxWorkers is the largest Options.Workers accepted.
	MaxWorkers = 256
	// TransferRatio is the largest ratio between two models' drift for one
	// profile to cover both (docs/BOUNDED.md: 1.25x).
	TransferRatio = 1.25
	// Resolution is the smallest drift a profile bounds: about eight
	// float32 rounding steps of the output's RMS. Measured drift below it
	// (executions that agree bit for bit) is raised to it before the
	// safety margin, so that a bound is never zero.
	Resolution = 1.0 / (1 << 20)
)

// The quantiles a profile reports per operator class: p99, p99.9 and
// p99.99.
const (
	QuantileP99   = 0.99
	QuantileP999  = 0.999
	QuantileP9999 = 0.9999
)

// Percentiles returns the quantiles a profile reports per operator class,
// in the order of a bound's P99, P99_9 and P9999.
func Percentiles() [3]float64 { return [3]float64{QuantileP99, QuantileP999, QuantileP9999} }

// Sentinel errors, matchable with errors.Is.
var (
	// ErrDriftDiverges reports models whose drift differs beyond
	// TransferRatio: they need separate profiles.
	ErrDriftDiverges = errors.New("models' drift differs beyond the transfer ratio")
	// ErrOptions reports calibration options that cannot work.
	ErrOptions = errors.New("invalid calibration options")
)

// Options configure a calibration.
type Options struct {
	GPUClass     string  // hardware class calibrated; "cpu" on this build
	Passes       int     // inference passes per model (default 1000)
	SafetyMargin float64 // multiplier on the measured percentiles (default 2)
	// Corpus holds calibration inputs, used in turn; when empty, inputs
	// are generated from the tokenizer's vocabulary with Seed.
	Corpus  [][]byte
	Seed    uint64
	Threads int // production execution threads (0: ONNX Runtime's default)
	// Progress, if set, is called after every pass.
	Progress func(done, total int)
	// Machine names the machine measured (default ThisMachine()).
	Machine *profile.Machine
	// Workers is how many executions run at once. 1 runs a pass's
	// executions one after another on the calling goroutine. Otherwise
	// each production execution has its own goroutine and the reference
	// executions (unoptimised, one thread: the slowest) share
	// max(1, Workers - production executions) goroutines, each with its
	// own copy of the reference model loaded; passes overlap. 0 (the
	// default) is one goroutine per execution: the same models loaded as
	// with 1, about twice the cores busy. The measurement is the same bits
	// whatever the value (TestMeasureWorkers).
	Workers int
}

func (o *Options) defaults() error {
	if o.Passes == 0 {
		o.Passes = DefaultPasses
	}
	if o.SafetyMargin == 0 {
		o.SafetyMargin = DefaultSafetyMargin
	}
	if o.GPUClass == "" {
		o.GPUClass = "cpu"
	}
	switch {
	case o.Passes < 1 || o.Passes > 10_000_000:
		return fmt.Errorf("%w: passes %d: want 1 to 10,000,000", ErrOptions, o.Passes)
	case o.Workers < 0 || o.Workers > MaxWorkers:
		return fmt.Errorf("%w: workers %d: want 1 to %d, or 0 for the default", ErrOptions, o.Workers, MaxWorkers)
	case !(o.SafetyMargin >= 1 && o.SafetyMargin <= 1000):
		return fmt.Errorf("%w: safety margin %v: want a multiplier from 1 to 1000", ErrOptions, o.SafetyMargin)
	case o.GPUClass != "cpu":
		if profile.ValidGPUClass(o.GPUClass) {
			return fmt.Errorf("%w: gpu class %s: this build calibrates on the CPU execution provider only; run calibration on a %s machine with a GPU build", ErrOptions, o.GPUClass, o.GPUClass)
		}
		return fmt.Errorf("%w: gpu class %q: want one of %v", ErrOptions, o.GPUClass, profile.GPUClasses())
	}
	return nil
}

// Drift is the svc.drift/v1 drift of got against the reference ref of one
// operator: max(|Δmean|, |ΔRMS|) normalised by the reference output's RMS.
// Calibration and audits now measure svc.drift/v2 (DriftScaled with a
// Reference's scale); v1 audits profiles that state no definition.
func Drift(ref, got trace.Operator) float64 {
	d := math.Max(math.Abs(got.Mean-ref.Mean), math.Abs(got.RMS-ref.RMS))
	if d == 0 {
		return 0
	}
	if ref.RMS == 0 || math.IsNaN(d) {
		return math.Inf(1)
	}
	return d / ref.RMS
}

// Measurement is one model's calibration: the drift samples of every
// operator class in each trace mode.
type Measurement struct {
	ONNXModelHash  string
	OperatorCounts map[string]int64
	Passes         int
	// Drift holds the samples by trace mode, then operator class.
	Drift map[string]map[string][]float64
	// Elapsed is the wall time of the passes.
	Elapsed time.Duration
	// Machines are the machines and kernel paths the samples come from.
	Machines []profile.Machine

	// record keeps the per-pass statistics for a measurements file
	// (Record), with the digest of the inputs and the class measured.
	record   *ModelMeasurement
	gpuClass string
}

// Measure runs opts.Passes inputs through the reference execution and the
// production execution of each trace mode and collects per-operator drift.
//
// Production mode's statistics come from the residual run when they are
// the same bits (residual mode exposes production's values and more
// without changing ONNX Runtime's optimised graph, so one inference gives
// both): Measure checks it on the first input, comparing the production
// trace narrowed from a residual run (trace.Model.Narrow) with a
// production run's, and otherwise runs production mode on every pass as
// well. With opts.Workers other than 1 the executions of a pass run
// concurrently and passes overlap (pipeline); the results are taken in
// pass order, so the measurement is the same whatever the worker count.
func Measure(m *trace.Model, opts Options) (*Measurement, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	machine := ThisMachine()
	if opts.Machine != nil {
		machine = *opts.Machine
	}
	machine.Passes = int64(opts.Passes)
	rec, err := newRecord(m)
	if err != nil {
		return nil, err
	}
	inputs := newInputs(m, opts)
	first := inputs.next()
	texts := func(yield func([]byte) bool) {
		if !yield(first) {
			return
		}
		for k := 1; k < opts.Passes; k++ {
			if !yield(inputs.next()) {
				return
			}
		}
	}
	modes := trace.Modes()
	prod := map[string]*trace.Tracer{}
	for _, mode := range modes {
		// Concurrent executions share the cores: a production session's
		// threads sleep instead of spinning while the reference runs.
		t, err := trace.NewTracer(m, mode, inference.Options{Threads: opts.Threads, NoSpin: opts.Workers != 1})
		if err != nil {
			return nil, err
		}
		defer t.Close()
		prod[mode] = t
	}
	derived, err := residualGivesProduction(m, prod, first)
	if err != nil {
		return nil, err
	}
	// run lists the production executions of a pass: every mode, less
	// production when it is derived from the residual run.
	var run []string
	for _, mode := range modes {
		if !(derived && mode == trace.Production) {
			run = append(run, mode)
		}
	}
	workers := opts.Workers
	if workers == 0 {
		workers = 1 + len(run)
	}
	refs := make([]*trace.Tracer, max(1, workers-len(run)))
	if workers == 1 {
		refs = refs[:1]
	}
	for i := range refs {
		if refs[i], err = trace.NewTracer(m, trace.Full, inference.Options{Reference: true}); err != nil {
			return nil, err
		}
		defer refs[i].Close()
	}
	res := &Measurement{ONNXModelHash: m.Hash, OperatorCounts: map[string]int64{}, Passes: opts.Passes, Drift: map[string]map[string][]float64{},
		Machines: []profile.Machine{machine}}
	for _, mode := range modes {
		res.Drift[mode] = map[string][]float64{}
	}
	// take adds pass k's executions to the measurement.
	take := func(k int, p *pass) error {
		if p.refErr != nil {
			return fmt.Errorf("pass %d: reference execution: %w", k+1, p.refErr)
		}
		for i, mode := range run {
			if p.errs[i] != nil {
				return fmt.Errorf("pass %d: %s execution: %w", k+1, mode, p.errs[i])
			}
		}
		rec.Inputs = append(rec.Inputs, inputHash(p.text))
		r, err := newReference(m, p.ref, p.stats)
		if err != nil {
			return fmt.Errorf("pass %d: %w", k+1, err)
		}
		ps := PassStats{Production: map[string][][]float64{}}
		for k, o := range p.ref.Operators {
			ps.Reference = append(ps.Reference, []float64{o.Mean, o.RMS, r.scale[k]})
		}
		for _, mode := range modes {
			var pt *trace.Trace
			if i := slices.Index(run, mode); i >= 0 {
				pt = p.prod[i]
			} else if pt, err = m.Narrow(p.prod[slices.Index(run, trace.Residual)], mode); err != nil {
				return fmt.Errorf("pass %d: %w", k+1, err)
			}
			res.OperatorCounts[mode] = pt.OperatorCount
			for _, o := range pt.Operators {
				ro, scale, _, ok := r.Operator(o.Node)
				if !ok {
					return fmt.Errorf("pass %d: operator %s of the %s trace is missing from the reference trace", k+1, o.Node, mode)
				}
				res.Drift[mode][o.Class] = append(res.Drift[mode][o.Class], DriftScaled(ro, o, scale))
				ps.Production[mode] = append(ps.Production[mode], []float64{o.Mean, o.RMS})
			}
		}
		rec.Passes = append(rec.Passes, ps)
		if opts.Progress != nil {
			opts.Progress(k+1, opts.Passes)
		}
		return nil
	}
	runTracers := make([]*trace.Tracer, len(run))
	for i, mode := range run {
		runTracers[i] = prod[mode]
	}
	start := time.Now()
	if workers == 1 {
		err = measureSequential(m, texts, refs[0], runTracers, take)
	} else {
		err = measurePipelined(m, texts, refs, runTracers, take)
	}
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	rec.OperatorCounts = res.OperatorCounts
	res.record, res.gpuClass = rec, opts.GPUClass
	return res, nil
}

// residualGivesProduction reports whether the production trace narrowed
// from a residual run of input is the same, bit for bit, as a production
// run's (TestResidualYieldsProduction shows it on the generated models).
func residualGivesProduction(m *trace.Model, prod map[string]*trace.Tracer, input []byte) (bool, error) {
	enc := m.Encode(input)
	want, err := prod[trace.Production].TraceEncoded(enc, input)
	if err != nil {
		return false, fmt.Errorf("pass 1: %s execution: %w", trace.Production, err)
	}
	rt, err := prod[trace.Residual].TraceEncoded(enc, input)
	if err != nil {
		return false, fmt.Errorf("pass 1: %s execution: %w", trace.Residual, err)
	}
	got, err := m.Narrow(rt, trace.Production)
	if err != nil {
		return false, nil // production's operators are not all residual's here: run production mode
	}
	return reflect.DeepEqual(got, want), nil
}

// newRecord starts the per-pass record of m: its full-mode operators and
// which of them each mode traces.
func newRecord(m *trace.Model) (*ModelMeasurement, error) {
	rec := &ModelMeasurement{ONNXModelHash: m.Hash, Selected: map[string][]int{}}
	full, err := m.TracedNodes(trace.Full)
	if err != nil {
		return nil, err
	}
	pos := map[int]int{}
	for k, i := range full {
		rec.Nodes = append(rec.Nodes, trace.NodeID(m.Graph.Nodes[i]))
		rec.Classes = append(rec.Classes, m.Class(i))
		pos[i] = k
	}
	for _, mode := range trace.Modes() {
		nodes, err := m.TracedNodes(mode)
		if err != nil {
			return nil, err
		}
		rec.Selected[mode] = []int{}
		for _, i := range nodes {
			k, ok := pos[i]
			if !ok {
				return nil, fmt.Errorf("%s-mode operator %s is not traced in full mode", mode, trace.NodeID(m.Graph.Nodes[i]))
			}
			rec.Selected[mode] = append(rec.Selected[mode], k)
		}
	}
	return rec, nil
}

// Percentile returns the q-quantile (nearest rank) of sorted samples.
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Raw returns the measured percentiles per operator class, before the
// safety margin: for each class the larger over the trace modes, raised to
// Resolution.
func (m *Measurement) Raw() map[string]profile.Bounds {
	out := map[string]profile.Bounds{}
	for _, byClass := range m.Drift {
		for class, samples := range byClass {
			s := slices.Clone(samples)
			sort.Float64s(s)
			b := out[class]
			b.P99 = math.Max(b.P99, math.Max(Percentile(s, QuantileP99), Resolution))
			b.P99_9 = math.Max(b.P99_9, math.Max(Percentile(s, QuantileP999), Resolution))
			b.P9999 = math.Max(b.P9999, math.Max(Percentile(s, QuantileP9999), Resolution))
			out[class] = b
		}
	}
	return out
}

// Distributions returns the measured drift per operator class over the
// measurements: the sample count over every model and trace mode, the
// largest nearest-rank percentiles of any one model and mode (what the
// bounds are made of, before the floor and the margin) and the largest
// sample.
func Distributions(ms []*Measurement) map[string]profile.Distribution {
	out := map[string]profile.Distribution{}
	for _, m := range ms {
		for _, byClass := range m.Drift {
			for class, samples := range byClass {
				if len(samples) == 0 {
					continue
				}
				s := slices.Clone(samples)
				sort.Float64s(s)
				d := out[class]
				d.Samples += int64(len(s))
				d.P99 = math.Max(d.P99, Percentile(s, QuantileP99))
				d.P99_9 = math.Max(d.P99_9, Percentile(s, QuantileP999))
				d.P9999 = math.Max(d.P9999, Percentile(s, QuantileP9999))
				d.Max = math.Max(d.Max, s[len(s)-1])
				out[class] = d
			}
		}
	}
	return out
}

// Max returns the largest drift measured per operator class.
func (m *Measurement) Max() map[string]float64 {
	out := map[string]float64{}
	for _, byClass := range m.Drift {
		for class, s := range byClass {
			for _, v := range s {
				out[class] = math.Max(out[class], v)
			}
		}
	}
	return out
}

// Samples returns the number of drift samples per operator class.
func (m *Measurement) Samples() map[string]int {
	out := map[string]int{}
	for _, byClass := range m.Drift {
		for class, s := range byClass {
			out[class] += len(s)
		}
	}
	return out
}

// Meta are the descriptive fields of a profile.
type Meta struct {
	ProfileID, ModelClass, Architecture string
	// HubModelIDs name the models in order (optional, may be shorter).
	HubModelIDs []string
	Date        time.Time
}

// Build makes an unsigned profile from the measurements of one or more
// models of one class: each class's bounds are the largest of the models'
// measured percentiles times the safety margin. Models whose percentiles
// differ by more than TransferRatio on a class they share fail with
// ErrDriftDiverges.
func Build(ms []*Measurement, meta Meta, opts Options) (*profile.Profile, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("%w: no models measured", ErrOptions)
	}
	if err := Transfer(ms); err != nil {
		return nil, err
	}
	p := &profile.Profile{
		Schema: profile.Schema, ProfileID: meta.ProfileID, ModelClass: meta.ModelClass, Architecture: meta.Architecture,
		CalibratedGPUClasses: []string{opts.GPUClass}, SafetyMargin: opts.SafetyMargin,
		CalibrationDate: meta.Date.UTC().Format("2006-01-02"), Operators: map[string]profile.Bounds{},
	}
	passes := ms[0].Passes
	for i, m := range ms {
		passes = min(passes, m.Passes)
		for class, b := range m.Raw() {
			cur := p.Operators[class]
			cur.P99 = math.Max(cur.P99, b.P99*opts.SafetyMargin)
			cur.P99_9 = math.Max(cur.P99_9, b.P99_9*opts.SafetyMargin)
			cur.P9999 = math.Max(cur.P9999, b.P9999*opts.SafetyMargin)
			p.Operators[class] = cur
		}
		model := profile.Model{ONNXModelHash: m.ONNXModelHash, OperatorCounts: m.OperatorCounts}
		if i < len(meta.HubModelIDs) {
			model.HubModelID = meta.HubModelIDs[i]
		}
		p.Models = append(p.Models, model)
	}
	p.CalibrationPasses = int64(passes)
	p.DriftDefinition = profile.DriftV2
	p.Measured = Distributions(ms)
	for _, m := range ms {
		for _, mc := range m.Machines {
			if !slices.Contains(p.Coverage, mc) {
				p.Coverage = append(p.Coverage, mc)
			}
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Transfer checks that the models' drift agrees within TransferRatio at
// every percentile of every operator class they share.
func Transfer(ms []*Measurement) error {
	var problems []string
	raws := make([]map[string]profile.Bounds, len(ms))
	for i, m := range ms {
		raws[i] = m.Raw()
	}
	for i := 1; i < len(ms); i++ {
		for class, b := range raws[i] {
			a, ok := raws[0][class]
			if !ok {
				continue
			}
			for k, pair := range [][2]float64{{a.P99, b.P99}, {a.P99_9, b.P99_9}, {a.P9999, b.P9999}} {
				lo, hi := math.Min(pair[0], pair[1]), math.Max(pair[0], pair[1])
				if r := hi / lo; r > TransferRatio {
					problems = append(problems, fmt.Sprintf("model %d (%s) vs model 1: %s p%s drift %.3g vs %.3g (%.2fx)",
						i+1, short(ms[i].ONNXModelHash), class, strings.TrimPrefix(fmt.Sprint(Percentiles()[k]*100), "0"), pair[1], pair[0], r))
				}
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w (%.2fx): %s; calibrate these models as separate profiles", ErrDriftDiverges, TransferRatio, strings.Join(problems, "; "))
	}
	return nil
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

// inputs yields calibration inputs: the corpus in turn, or texts drawn
// from the tokenizer's vocabulary.
type inputs struct {
	corpus [][]byte
	i      int
	rng    *rand.Rand
	words  []string
	maxLen int
}

func newInputs(m *trace.Model, opts Options) *inputs {
	in := &inputs{corpus: opts.Corpus, rng: rand.New(rand.NewPCG(opts.Seed, 0x5eed)), maxLen: 48}
	if n := max(m.SeqLen, m.MaxLen); n > 0 {
		in.maxLen = max(1, min(n, 256)*3/2) // some inputs are truncated, as in production
	}
	if len(in.corpus) == 0 {
		for id := 0; id < m.Tokenizer.VocabSize(); id++ {
			tok, ok := m.Tokenizer.Token(int64(id))
			if !ok || tok == "" || strings.HasPrefix(tok, "##") || strings.HasPrefix(tok, "[") || strings.HasPrefix(tok, "<") {
				continue
			}
			in.words = append(in.words, tok)
		}
		if len(in.words) == 0 {
			in.words = []string{"a"}
		}
	}
	return in
}

func (in *inputs) next() []byte {
	if len(in.corpus) > 0 {
		t := in.corpus[in.i%len(in.corpus)]
		in.i++
		return t
	}
	n := 1 + in.rng.IntN(in.maxLen)
	var b strings.Builder
	for k := 0; k < n; k++ {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(in.words[in.rng.IntN(len(in.words))])
	}
	return []byte(b.String())
}

// Calibrate measures one model and builds its unsigned profile (Measure,
// then Build).
func Calibrate(m *trace.Model, meta Meta, opts Options) (*profile.Profile, error) {
	meas, err := Measure(m, opts)
	if err != nil {
		return nil, err
	}
	return Build([]*Measurement{meas}, meta, opts)
}
