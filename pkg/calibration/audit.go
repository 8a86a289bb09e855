package calibration

import (
	"errors"
	"fmt"
	"math"

	"github.com/svc-gov/svc/pkg/commitment"
	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/trace"
)

// ErrAudit reports an audit that could not run: the trace, model or input
// given do not belong together. A profile mismatch is not an error: it is
// the audit's finding (Audit.Consistent false).
var ErrAudit = errors.New("audit cannot run")

// Finding is one operator whose drift exceeds its class's p99.99 bound.
type Finding struct {
	Index int64   `json:"index"`
	Node  string  `json:"node"`
	Class string  `json:"class"`
	Drift float64 `json:"drift"`
	Bound float64 `json:"bound"`
}

// Audit is the result of replaying one traced inference against a profile.
type Audit struct {
	ProfileID  string `json:"profile_id"`
	GPUClass   string `json:"gpu_class"`
	Mode       string `json:"mode"`
	Operators  int    `json:"operators"`
	Consistent bool   `json:"consistent"`
	// Problems says why the trace is not consistent with the profile.
	Problems []string `json:"problems,omitempty"`
	// Exceeded lists the operators beyond their p99.99 bound.
	Exceeded []Finding `json:"exceeded,omitempty"`
	// OverP99 counts operators beyond their class's p99 bound (expected
	// now and then; informative only).
	OverP99 int `json:"over_p99"`
	// MaxRatio is the largest drift / p99.99 bound over the operators.
	MaxRatio float64 `json:"max_ratio"`
}

// Replay audits tr, the trace of one inference of m on input claimed on
// gpuClass, against prof: the trace's root and operator count are
// recomputed, the model and input must be the ones it commits to, the
// profile must cover the model, its operator count and the GPU class, and
// the inference is re-executed on the reference execution: every
// operator's drift must be within its class's p99.99 bound. Errors mean the
// audit could not run (ErrAudit, or inference failures).
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
	a := &Audit{ProfileID: prof.ProfileID, GPUClass: gpuClass, Mode: tr.Mode, Operators: len(tr.Operators)}
	mismatch := func(format string, args ...any) { a.Problems = append(a.Problems, fmt.Sprintf(format, args...)) }
	if !prof.CoversGPU(gpuClass) {
		mismatch("gpu_class %s is not among the profile's calibrated classes %v", gpuClass, prof.CalibratedGPUClasses)
	}
	if pm, ok := prof.Model(m.Hash); !ok {
		mismatch("model %s is not covered by the profile", m.Hash)
	} else if want, ok := pm.OperatorCounts[tr.Mode]; !ok || want != tr.OperatorCount {
		mismatch("operator_count %d in %s mode; the profile gives %d for this model", tr.OperatorCount, tr.Mode, want)
	}
	ref, err := trace.NewTracer(m, tr.Mode, inference.Options{Reference: true})
	if err != nil {
		return nil, err
	}
	defer ref.Close()
	r, err := ref.Trace(input)
	if err != nil {
		return nil, fmt.Errorf("reference execution: %w", err)
	}
	if len(r.Operators) != len(tr.Operators) {
		mismatch("the trace has %d operators; the model traces %d in %s mode", len(tr.Operators), len(r.Operators), tr.Mode)
	}
	for i := 0; i < min(len(r.Operators), len(tr.Operators)); i++ {
		want, got := r.Operators[i], tr.Operators[i]
		if want.Node != got.Node || want.OpType != got.OpType || want.Class != got.Class {
			mismatch("operator %d is %s (%s, %s) in the trace, %s (%s, %s) in the model", i, got.Node, got.OpType, got.Class, want.Node, want.OpType, want.Class)
			continue
		}
		b, ok := prof.Operators[got.Class]
		if !ok {
			mismatch("operator %d (%s): the profile has no bounds for class %s", i, got.Node, got.Class)
			continue
		}
		d := Drift(want, got)
		ratio := d / b.P9999
		if b.P9999 == 0 {
			ratio = math.Inf(1)
			if d == 0 {
				ratio = 0
			}
		}
		a.MaxRatio = math.Max(a.MaxRatio, ratio)
		if d > b.P99 {
			a.OverP99++
		}
		if d > b.P9999 {
			a.Exceeded = append(a.Exceeded, Finding{Index: got.Index, Node: got.Node, Class: got.Class, Drift: d, Bound: b.P9999})
		}
	}
	if n := len(a.Exceeded); n > 0 {
		f := a.Exceeded[0]
		mismatch("%d operator(s) drift beyond the p99.99 bound, first %d %s (%s): drift %.3g, bound %.3g", n, f.Index, f.Node, f.Class, f.Drift, f.Bound)
	}
	a.Consistent = len(a.Problems) == 0
	return a, nil
}
