package calibration

import (
	"fmt"
	"math"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// inputScaled are the operators whose drift svc.drift/v2 normalises by
// the scale of their inputs as well as their output's: reductions and
// additions, whose output can be much smaller than what they sum (the
// per-token mean of a residual stream is 1e-4 to 1e-3 of it), so that
// rounding of the inputs' magnitude, not the output's, sets their
// difference between kernels.
var inputScaled = map[string]bool{"ReduceMean": true, "ReduceSum": true, "Add": true, "Sub": true, "Sum": true}

// InputScaled reports whether svc.drift/v2 normalises an operator of
// opType by its inputs' RMS (docs/BOUNDED.md).
func InputScaled(opType string) bool { return inputScaled[opType] }

// Reference is one reference execution of a model with every traced value
// (full mode) and its statistics: what drift is normalised by and the
// analytic bounds are computed from. It is the auditor's (or the
// calibrator's) own execution, never read from a trace.
type Reference struct {
	m     *trace.Model
	trace *trace.Trace
	stats map[string]trace.ValueStats
	byID  map[string]int // node id -> index in trace.Operators
	// scale[k] is the svc.drift/v2 scale of trace.Operators[k].
	scale []float64
	// bound[k] is the analytic bound (absolute) of trace.Operators[k].
	bound []float64
}

// newReference wraps a full-mode reference trace of m with its value
// statistics.
func newReference(m *trace.Model, tr *trace.Trace, stats map[string]trace.ValueStats) (*Reference, error) {
	nodes, err := m.TracedNodes(trace.Full)
	if err != nil {
		return nil, err
	}
	if len(nodes) != len(tr.Operators) {
		return nil, fmt.Errorf("reference execution: %d operators for %d traced nodes", len(tr.Operators), len(nodes))
	}
	r := &Reference{m: m, trace: tr, stats: stats, byID: make(map[string]int, len(nodes)), scale: make([]float64, len(nodes))}
	for k, i := range nodes {
		n := m.Graph.Nodes[i]
		r.byID[tr.Operators[k].Node] = k
		s := tr.Operators[k].RMS
		if inputScaled[n.OpType] {
			for _, in := range n.Inputs {
				if st, ok := r.value(in); ok && !math.IsNaN(st.RMS) {
					s = math.Max(s, st.RMS)
				}
			}
		}
		r.scale[k] = s
	}
	r.bound = analyticBounds(m, nodes, r)
	return r, nil
}

// NewReference runs the reference execution of m on input with every
// value traced: the drift scales and analytic bounds an audit of a trace
// of that input uses (ONNX Runtime must be initialised).
func NewReference(m *trace.Model, input []byte) (*Reference, error) {
	ref, err := trace.NewTracer(m, trace.Full, inference.Options{Reference: true})
	if err != nil {
		return nil, err
	}
	defer ref.Close()
	rt, stats, err := ref.TraceDetail(m.Encode(input), input)
	if err != nil {
		return nil, fmt.Errorf("reference execution: %w", err)
	}
	return newReference(m, rt, stats)
}

// value returns the statistics of a FLOAT value of the graph: a traced
// value of the reference execution, or an initializer stored in the model.
func (r *Reference) value(name string) (trace.ValueStats, bool) {
	if name == "" || r.m.Graph.ElemType(name) != trace.TypeFloat {
		return trace.ValueStats{}, false
	}
	if st, ok := r.stats[name]; ok {
		return st, true
	}
	if t := r.m.Graph.Tensor(name); t != nil && t.Stats != nil {
		return *t.Stats, true
	}
	return trace.ValueStats{}, false
}

// Operator returns the reference record of the operator named node, with
// its svc.drift/v2 scale and its analytic bound (+Inf when none).
func (r *Reference) Operator(node string) (op trace.Operator, scale, bound float64, ok bool) {
	k, ok := r.byID[node]
	if !ok {
		return trace.Operator{}, 0, 0, false
	}
	return r.trace.Operators[k], r.scale[k], r.bound[k], true
}

// DriftScaled is drift normalised by scale: max(|Δmean|, |ΔRMS|) / scale,
// 0 when the statistics agree exactly, +Inf when scale is 0 or the
// difference is not a number.
func DriftScaled(ref, got trace.Operator, scale float64) float64 {
	d := math.Max(math.Abs(got.Mean-ref.Mean), math.Abs(got.RMS-ref.RMS))
	if d == 0 {
		return 0
	}
	if scale == 0 || math.IsNaN(d) || math.IsNaN(scale) {
		return math.Inf(1)
	}
	return d / scale
}

// driftBy returns the drift of got against the reference under the drift
// definition def, and the scale it divides by.
func (r *Reference) driftBy(def string, ref, got trace.Operator, scale float64) (float64, float64) {
	if def == profile.DriftV1 {
		return DriftScaled(ref, got, ref.RMS), ref.RMS
	}
	return DriftScaled(ref, got, scale), scale
}
