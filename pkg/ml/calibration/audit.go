package calibration

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// ErrAudit reports an audit that could not run: the trace, model or input
// given do not belong together. A profile mismatch is not an error: it is
// the audit's finding (Audit.Consistent false).
var ErrAudit = errors.New("audit cannot run")

// Rules an operator's drift can be accepted by.
const (
	// RuleAnalytic: within the worst-case floating-point bound computed
	// from the graph and the reference execution (full mode only).
	RuleAnalytic = "analytic"
	// RuleCalibrated: within its class's p99.99 bound of the profile.
	RuleCalibrated = "calibrated"
	// RuleBoth: within both.
	RuleBoth = "both"
	// RuleNone: within neither (a finding).
	RuleNone = "none"
)

// Finding is one operator whose drift exceeds its class's p99.99 bound
// and its analytic bound.
type Finding struct {
	Index int64   `json:"index"`
	Node  string  `json:"node"`
	Class string  `json:"class"`
	Drift float64 `json:"drift"`
	Bound float64 `json:"bound"`
	// Analytic is the operator's analytic bound (+Inf when none: omitted).
	Analytic float64 `json:"analytic,omitempty"`
}

// OperatorResult is the audit of one operator: its drift (under the
// profile's definition), both bounds (Analytic +Inf when the analytic
// rule does not bound it) and the rule that accepted it.
type OperatorResult struct {
	Index      int64   `json:"index"`
	Node       string  `json:"node"`
	Class      string  `json:"class"`
	Drift      float64 `json:"drift"`
	Calibrated float64 `json:"calibrated_bound"`
	Analytic   float64 `json:"-"`
	Rule       string  `json:"rule"`
}

// Audit is the result of replaying one traced inference against a profile.
type Audit struct {
	ProfileID  string `json:"profile_id"`
	GPUClass   string `json:"gpu_class"`
	Mode       string `json:"mode"`
	Operators  int    `json:"operators"`
	Consistent bool   `json:"consistent"`
	// DriftDefinition is the drift the profile's bounds measure, which
	// the audit used.
	DriftDefinition string `json:"drift_definition"`
	// Problems says why the trace is not consistent with the profile.
	Problems []string `json:"problems,omitempty"`
	// Exceeded lists the operators beyond both bounds.
	Exceeded []Finding `json:"exceeded,omitempty"`
	// OverP99 counts operators beyond their class's p99 bound (expected
	// now and then; informative only).
	OverP99 int `json:"over_p99"`
	// MaxRatio is the largest drift / p99.99 bound over the operators.
	MaxRatio float64 `json:"max_ratio"`
	// MaxAnalyticRatio is the largest drift / analytic bound over the
	// operators the analytic rule bounds (AnalyticBounded of them).
	MaxAnalyticRatio float64 `json:"max_analytic_ratio"`
	AnalyticBounded  int     `json:"analytic_bounded"`
	// Accepted counts the operators by the rule that accepted them
	// (RuleAnalytic, RuleCalibrated, RuleBoth).
	Accepted map[string]int `json:"accepted"`
	// Results holds every compared operator's audit, in trace order.
	Results []OperatorResult `json:"results,omitempty"`
}

// Summary is the audit in one line: operators replayed, the drift
// definition, the largest drift as a fraction of each rule's bound, and
// which rule accepted how many operators.
func (a *Audit) Summary() string {
	s := fmt.Sprintf("%d operators replayed (%s), largest drift %s of its p99.99 bound", a.Operators, a.DriftDefinition, ratio(a.MaxRatio))
	if a.AnalyticBounded > 0 {
		s += fmt.Sprintf(" and %s of its analytic bound (%d operators bounded)", ratio(a.MaxAnalyticRatio), a.AnalyticBounded)
	} else {
		s += "; no analytic bound (" + a.Mode + " mode)"
	}
	s += fmt.Sprintf("; accepted by calibrated %d, analytic %d, both %d; %d beyond p99",
		a.Accepted[RuleCalibrated], a.Accepted[RuleAnalytic], a.Accepted[RuleBoth], a.OverP99)
	return s
}

// ratio prints a fraction with three significant digits (0.0123, 1.2e-05).
func ratio(r float64) string {
	if r == 0 {
		return "0"
	}
	if r >= 1e-3 && r < 1e4 {
		return strconv.FormatFloat(r, 'g', 3, 64)
	}
	return strconv.FormatFloat(r, 'e', 2, 64)
}

// Replay audits tr, the trace of one inference of m on input claimed on
// gpuClass, against prof: the trace's root and operator count are
// recomputed, the model and input must be the ones it commits to, the
// profile must cover the model, its operator count and the GPU class, and
// the inference is re-executed on the reference execution (every value
// traced, for the drift's scale and the analytic bounds): every
// operator's drift, under the profile's drift definition, must be within
// its class's p99.99 bound or, in full mode, within its analytic bound.
// Errors mean the audit could not run (ErrAudit, or inference failures).
func Replay(m *trace.Model, tr *trace.Trace, input []byte, prof *profile.Profile, gpuClass string) (*Audit, error) {
	if err := tr.Verify(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAudit, err)
	}
	if tr.ONNXModelHash != m.Hash {
		return nil, fmt.Errorf("%w: the trace is of model %s, the model given is %s", ErrAudit, tr.ONNXModelHash, m.Hash)
	}
	if h := commitment.String(input); h != tr.InputCommitment {
		return nil, fmt.Errorf("%w: the input given hashes to %s, the trace commits to %s", ErrAudit, h, tr.InputCommitment)
	}
	def := prof.Definition()
	a := &Audit{ProfileID: prof.ProfileID, GPUClass: gpuClass, Mode: tr.Mode, Operators: len(tr.Operators), DriftDefinition: def, Accepted: map[string]int{}}
	mismatch := func(format string, args ...any) { a.Problems = append(a.Problems, fmt.Sprintf(format, args...)) }
	if !prof.CoversGPU(gpuClass) {
		mismatch("gpu_class %s is not among the profile's calibrated classes %v", gpuClass, prof.CalibratedGPUClasses)
	}
	if pm, ok := prof.Model(m.Hash); !ok {
		mismatch("model %s is not covered by the profile", m.Hash)
	} else if want, ok := pm.OperatorCounts[tr.Mode]; !ok || want != tr.OperatorCount {
		mismatch("operator_count %d in %s mode; the profile gives %d for this model", tr.OperatorCount, tr.Mode, want)
	}
	nodes, err := m.TracedNodes(tr.Mode)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAudit, err)
	}
	r, err := NewReference(m, input)
	if err != nil {
		return nil, err
	}
	if len(nodes) != len(tr.Operators) {
		mismatch("the trace has %d operators; the model traces %d in %s mode", len(tr.Operators), len(nodes), tr.Mode)
	}
	for i := 0; i < min(len(nodes), len(tr.Operators)); i++ {
		n := m.Graph.Nodes[nodes[i]]
		got := tr.Operators[i]
		want, scale, analytic, _ := r.Operator(trace.NodeID(n))
		if want.Node != got.Node || want.OpType != got.OpType || want.Class != got.Class || got.Index != int64(i) {
			mismatch("operator %d is %s (%s, %s) in the trace, %s (%s, %s) in the model", i, got.Node, got.OpType, got.Class, want.Node, want.OpType, want.Class)
			continue
		}
		b, ok := prof.Operators[got.Class]
		if !ok {
			mismatch("operator %d (%s): the profile has no bounds for class %s", i, got.Node, got.Class)
			continue
		}
		d, s := r.driftBy(def, want, got, scale)
		if tr.Mode != trace.Full {
			analytic = math.Inf(1) // fused kernels compute the untraced nodes: no per-node analysis holds
		}
		analyticRel := analytic / s // the analytic bound on the statistics, in units of the drift
		if s == 0 {
			analyticRel = math.Inf(1)
		}
		ratioOf := func(d, b float64) float64 {
			if b == 0 {
				if d == 0 {
					return 0
				}
				return math.Inf(1)
			}
			return d / b
		}
		a.MaxRatio = math.Max(a.MaxRatio, ratioOf(d, b.P9999))
		if !math.IsInf(analyticRel, 1) {
			a.AnalyticBounded++
			a.MaxAnalyticRatio = math.Max(a.MaxAnalyticRatio, ratioOf(d, analyticRel))
		}
		if d > b.P99 {
			a.OverP99++
		}
		cal, ana := d <= b.P9999, !math.IsInf(analyticRel, 1) && d <= analyticRel
		res := OperatorResult{Index: got.Index, Node: got.Node, Class: got.Class, Drift: d, Calibrated: b.P9999, Analytic: analyticRel, Rule: RuleNone}
		switch {
		case cal && ana:
			res.Rule = RuleBoth
		case cal:
			res.Rule = RuleCalibrated
		case ana:
			res.Rule = RuleAnalytic
		default:
			f := Finding{Index: got.Index, Node: got.Node, Class: got.Class, Drift: d, Bound: b.P9999}
			if !math.IsInf(analyticRel, 1) {
				f.Analytic = analyticRel
			}
			a.Exceeded = append(a.Exceeded, f)
		}
		if res.Rule != RuleNone {
			a.Accepted[res.Rule]++
		}
		a.Results = append(a.Results, res)
	}
	if n := len(a.Exceeded); n > 0 {
		f := a.Exceeded[0]
		extra := ""
		if f.Analytic > 0 {
			extra = fmt.Sprintf(", analytic bound %.3g", f.Analytic)
		}
		mismatch("%d operator(s) drift beyond the p99.99 bound (%s), first %d %s (%s): drift %.3g, bound %.3g%s", n, def, f.Index, f.Node, f.Class, f.Drift, f.Bound, extra)
	}
	a.Consistent = len(a.Problems) == 0
	return a, nil
}

// RuleDetails says which rule accepted which operators, one line per
// rule that accepted any, operators by trace index in ranges:
// "calibrated rule only: operators 2-74", "both rules: operators 0-1,
// 75". Findings are in Problems.
func (a *Audit) RuleDetails() []string {
	var out []string
	for _, rule := range []struct{ name, label string }{
		{RuleBoth, "both rules"}, {RuleCalibrated, "calibrated rule only"}, {RuleAnalytic, "analytic rule only"}} {
		var idx []int64
		for _, r := range a.Results {
			if r.Rule == rule.name {
				idx = append(idx, r.Index)
			}
		}
		if len(idx) > 0 {
			out = append(out, fmt.Sprintf("%s: operators %s", rule.label, ranges(idx)))
		}
	}
	return out
}

// ranges writes ascending indices as "0-3, 7, 9-10".
func ranges(idx []int64) string {
	var b strings.Builder
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", idx[i], idx[j])
		} else {
			fmt.Fprintf(&b, "%d", idx[i])
		}
		i = j + 1
	}
	return b.String()
}
