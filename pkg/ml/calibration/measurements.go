package calibration

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// MeasurementsSchema is the schema of a measurements file
// (docs/FORMATS.md "Calibration measurements"): the per-pass statistics
// of one machine's calibration, which 'svc calibrate merge' combines with
// other machines' into one profile.
const MeasurementsSchema = "svc.calibration/v1"

// ErrMeasurements reports a measurements file that cannot be read or
// merged.
var ErrMeasurements = errors.New("invalid calibration measurements")

// Measurements is one machine's calibration of one or more models: for
// every pass, the reference execution's statistics of every traced value
// and the production execution's in each trace mode.
type Measurements struct {
	Schema          string             `json:"schema"`
	DriftDefinition string             `json:"drift_definition"`
	GPUClass        string             `json:"gpu_class"`
	Machine         profile.Machine    `json:"machine"`
	Models          []ModelMeasurement `json:"models" maxitems:"64"`
}

// ModelMeasurement is the per-pass statistics of one model.
type ModelMeasurement struct {
	ONNXModelHash  string           `json:"onnx_model_hash"`
	OperatorCounts map[string]int64 `json:"operator_counts" maxitems:"3"`
	// Nodes and Classes name the full-mode operators, in trace order.
	Nodes   []string `json:"nodes"`
	Classes []string `json:"classes"`
	// Selected holds, per trace mode, the indices into Nodes that mode traces.
	// Files made before the residual mode existed have no residual entry.
	Selected map[string][]int `json:"selected" maxitems:"3"`
	// Inputs holds the SHA-256 of each pass's input ("sha256:<hex>"), in
	// order: a pass of one machine is compared with the same pass of
	// another only when their inputs are the same (same --seed or
	// --corpus).
	Inputs []string    `json:"inputs"`
	Passes []PassStats `json:"passes"`
}

// PassStats are one pass's statistics. Reference holds, per full-mode
// operator, [mean, rms, scale] of the reference execution (scale: the
// svc.drift/v2 divisor); Production, per trace mode, [mean, rms] of each
// traced operator of the production execution.
type PassStats struct {
	Reference  [][]float64            `json:"reference"`
	Production map[string][][]float64 `json:"production" maxitems:"3"`
}

// Record returns the measurements file of one machine's measurements of
// one or more models (made by Measure on the same inputs).
func Record(ms []*Measurement) (*Measurements, error) {
	if len(ms) == 0 || ms[0].record == nil {
		return nil, fmt.Errorf("%w: no per-pass statistics recorded", ErrMeasurements)
	}
	out := &Measurements{Schema: MeasurementsSchema, DriftDefinition: profile.DriftV2, GPUClass: ms[0].gpuClass, Machine: ms[0].Machines[0]}
	for _, m := range ms {
		if m.record == nil || m.Machines[0] != out.Machine {
			return nil, fmt.Errorf("%w: the models were not measured on one machine with the same passes", ErrMeasurements)
		}
		out.Models = append(out.Models, *m.record)
	}
	return out, nil
}

// ParseMeasurements reads a measurements file strictly and checks that
// its arrays agree with each other.
func ParseMeasurements(doc []byte) (*Measurements, error) {
	var f Measurements
	if _, err := document.Parse(doc, &f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMeasurements, err)
	}
	bad := func(format string, a ...any) (*Measurements, error) {
		return nil, fmt.Errorf("%w: %s", ErrMeasurements, fmt.Sprintf(format, a...))
	}
	switch {
	case f.Schema != MeasurementsSchema:
		return bad("schema %q, want %q", f.Schema, MeasurementsSchema)
	case f.DriftDefinition != profile.DriftV2:
		return bad("drift_definition %q, want %s", f.DriftDefinition, profile.DriftV2)
	case !profile.ValidGPUClass(f.GPUClass):
		return bad("gpu_class %q is not one of %v", f.GPUClass, profile.GPUClasses())
	case f.Machine.CPU == "" || f.Machine.KernelPath == "" || f.Machine.Passes < 1:
		return bad("machine: want a cpu, a kernel_path and passes >= 1")
	case len(f.Models) == 0:
		return bad("models is empty")
	}
	for i, m := range f.Models {
		n := len(m.Nodes)
		if n == 0 || len(m.Classes) != n {
			return bad("models[%d]: %d nodes, %d classes", i, n, len(m.Classes))
		}
		for _, c := range m.Classes {
			if !slices.Contains(profile.OperatorClasses(), c) {
				return bad("models[%d]: unknown operator class %q", i, c)
			}
		}
		if int64(len(m.Passes)) != f.Machine.Passes || len(m.Inputs) != len(m.Passes) {
			return bad("models[%d]: %d passes and %d input hashes, the machine made %d passes", i, len(m.Passes), len(m.Inputs), f.Machine.Passes)
		}
		for mode := range m.Selected {
			if !slices.Contains(profile.TraceModes(), mode) {
				return bad("models[%d]: selected: unknown trace mode %q", i, mode)
			}
		}
		for mode := range m.OperatorCounts {
			if _, ok := m.Selected[mode]; !ok {
				return bad("models[%d]: operator_counts names mode %s, which selected does not", i, mode)
			}
		}
		modes := m.modes()
		for _, mode := range modes {
			sel, ok := m.Selected[mode]
			if !ok || int64(len(sel)) != m.OperatorCounts[mode] {
				return bad("models[%d]: selected %s has %d operators, operator_counts says %d", i, mode, len(sel), m.OperatorCounts[mode])
			}
			for _, k := range sel {
				if k < 0 || k >= n {
					return bad("models[%d]: selected %s index %d outside the %d nodes", i, mode, k, n)
				}
			}
		}
		for p, ps := range m.Passes {
			if len(ps.Reference) != n {
				return bad("models[%d].passes[%d]: %d reference statistics for %d nodes", i, p, len(ps.Reference), n)
			}
			for _, s := range ps.Reference {
				if len(s) != 3 || !finite(s...) {
					return bad("models[%d].passes[%d]: a reference statistic is not [mean, rms, scale] of finite numbers", i, p)
				}
			}
			for mode := range ps.Production {
				if !slices.Contains(modes, mode) {
					return bad("models[%d].passes[%d]: statistics of trace mode %q, which selected does not name", i, p, mode)
				}
			}
			for _, mode := range modes {
				st := ps.Production[mode]
				if len(st) != len(m.Selected[mode]) {
					return bad("models[%d].passes[%d]: %d %s statistics for %d operators", i, p, len(st), mode, len(m.Selected[mode]))
				}
				for _, s := range st {
					if len(s) != 2 || !finite(s...) {
						return bad("models[%d].passes[%d]: a %s statistic is not [mean, rms] of finite numbers", i, p, mode)
					}
				}
			}
		}
	}
	return &f, nil
}

// requiredModes are the trace modes every measurements file holds; the
// residual mode is measured by calibrations since it was added and merged
// only when every file merged has it.
var requiredModes = []string{trace.Full, trace.Production}

// modes returns the trace modes m was measured in: the required ones and
// those of the others its selected names, in profile.TraceModes order.
func (m *ModelMeasurement) modes() []string {
	var out []string
	for _, mode := range profile.TraceModes() {
		if _, ok := m.Selected[mode]; ok || slices.Contains(requiredModes, mode) {
			out = append(out, mode)
		}
	}
	return out
}

func finite(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// Merge combines the measurements of several machines into one
// Measurement per model, for Build: the drift of every machine's
// production execution against every machine's reference execution (its
// own included) on the same pass, wherever the two machines calibrated on
// the same input on that pass (the same inputs hash); passes on other
// inputs contribute their own production-against-reference drift only. The
// result covers every machine and kernel path merged; the passes of a
// model are the fewest of any machine.
func Merge(files []*Measurements) ([]*Measurement, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: nothing to merge", ErrMeasurements)
	}
	type entry struct {
		file *Measurements
		m    *ModelMeasurement
	}
	byModel := map[string][]entry{}
	var order []string
	for _, f := range files {
		if f.GPUClass != files[0].GPUClass {
			return nil, fmt.Errorf("%w: gpu classes %s and %s: merge measurements of one class", ErrMeasurements, files[0].GPUClass, f.GPUClass)
		}
		for i := range f.Models {
			m := &f.Models[i]
			if _, ok := byModel[m.ONNXModelHash]; !ok {
				order = append(order, m.ONNXModelHash)
			}
			byModel[m.ONNXModelHash] = append(byModel[m.ONNXModelHash], entry{f, m})
		}
	}
	var out []*Measurement
	for _, h := range order {
		es := byModel[h]
		first := es[0].m
		// The modes every machine measured (files from before the
		// residual mode lack it: the merged profile then has no count
		// for it, and residual traces of the model are not covered).
		modes := first.modes()
		for _, e := range es {
			modes = slices.DeleteFunc(modes, func(mode string) bool { return !slices.Contains(e.m.modes(), mode) })
		}
		res := &Measurement{ONNXModelHash: h, OperatorCounts: map[string]int64{}, Passes: len(first.Passes), Drift: map[string]map[string][]float64{}}
		for _, mode := range modes {
			res.OperatorCounts[mode] = first.OperatorCounts[mode]
		}
		for _, e := range es {
			if !slices.Equal(e.m.Nodes, first.Nodes) || !slices.Equal(e.m.Classes, first.Classes) {
				return nil, fmt.Errorf("%w: model %s traces different operators on %s (%s) and %s (%s): not the same model file or not the same svc version", ErrMeasurements, h, es[0].file.Machine.CPU, es[0].file.Machine.KernelPath, e.file.Machine.CPU, e.file.Machine.KernelPath)
			}
			for _, mode := range modes {
				if !slices.Equal(e.m.Selected[mode], first.Selected[mode]) {
					return nil, fmt.Errorf("%w: model %s: the %s-mode operators differ between machines", ErrMeasurements, h, mode)
				}
			}
			res.Passes = min(res.Passes, len(e.m.Passes))
			res.Machines = append(res.Machines, e.file.Machine)
		}
		for _, mode := range modes {
			res.Drift[mode] = map[string][]float64{}
		}
		for _, refE := range es {
			for _, prodE := range es {
				for p := 0; p < min(len(refE.m.Passes), len(prodE.m.Passes)); p++ {
					if refE.file != prodE.file && refE.m.Inputs[p] != prodE.m.Inputs[p] {
						continue
					}
					ref, prod := refE.m.Passes[p], prodE.m.Passes[p]
					for _, mode := range modes {
						for j, k := range first.Selected[mode] {
							r, g := ref.Reference[k], prod.Production[mode][j]
							d := DriftScaled(trace.Operator{Mean: r[0], RMS: r[1]}, trace.Operator{Mean: g[0], RMS: g[1]}, r[2])
							res.Drift[mode][first.Classes[k]] = append(res.Drift[mode][first.Classes[k]], d)
						}
					}
				}
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// inputHash is the "sha256:<hex>" of one calibration input.
func inputHash(input []byte) string { return commitment.String(input) }

// MergeProfile reads measurements files (ParseMeasurements), merges them
// (Merge) and builds their unsigned profile (Build): what 'svc calibrate
// merge' does. names label the documents in errors (file paths).
func MergeProfile(docs [][]byte, names []string, meta Meta, opts Options) (*profile.Profile, []*Measurement, error) {
	var files []*Measurements
	for i, doc := range docs {
		f, err := ParseMeasurements(doc)
		if err != nil {
			if i < len(names) {
				return nil, nil, fmt.Errorf("%s: %w", names[i], err)
			}
			return nil, nil, err
		}
		files = append(files, f)
	}
	ms, err := Merge(files)
	if err != nil {
		return nil, nil, err
	}
	if opts.GPUClass == "" {
		opts.GPUClass = files[0].GPUClass
	}
	if opts.GPUClass != files[0].GPUClass {
		return nil, nil, fmt.Errorf("%w: the measurements are of gpu class %s, not %s", ErrOptions, files[0].GPUClass, opts.GPUClass)
	}
	opts.Passes = 1 // Build checks options; the passes are the measurements'
	p, err := Build(ms, meta, opts)
	return p, ms, err
}
