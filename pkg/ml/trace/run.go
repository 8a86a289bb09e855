package trace

import (
	"fmt"
	"math"
	"slices"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/tokenizer"
)

// Tracer traces one model in one mode: the model with the traced values
// exposed as outputs is loaded once and reused for every inference. It is
// not safe for concurrent use: use one per goroutine.
type Tracer struct {
	m     *Model
	nodes []int
	names []string
	mode  string
	sess  *inference.Session
	// inGraph: the statistics come from the graph (WithStats), by value.
	inGraph map[string][2]string
	workers int
}

// TracerOptions choose how a Tracer computes the statistics.
type TracerOptions struct {
	// InGraph computes each traced value's mean and mean of squares in
	// float64 inside the ONNX graph (WithStats), so that ONNX Runtime
	// returns two numbers per operator instead of the tensor; otherwise
	// the tensors are returned and reduced in Go (Stats). Both give the
	// same statistics up to float64 summation order (about 1e-16 relative).
	InGraph bool
	// StatsWorkers computes the statistics of the traced tensors on up to
	// this many goroutines (at most GOMAXPROCS), each tensor's on one, so
	// the values are the same bits as on one. 0 or 1: on the calling
	// goroutine, the default: on a machine whose cores are busy (ONNX
	// Runtime's own threads, other inferences) waking a second goroutine
	// was measured to cost more than it saved (docs/BENCHMARKS.md).
	StatsWorkers int
}

// NewTracer prepares m for tracing in mode on the execution exec selects
// (ONNX Runtime must be initialised). Mode "" loads the model untraced,
// the baseline the overhead benchmark compares against.
func NewTracer(m *Model, mode string, exec inference.Options) (*Tracer, error) {
	return NewTracerWith(m, mode, exec, TracerOptions{})
}

// NewTracerWith is NewTracer with the statistics computed as opts says.
func NewTracerWith(m *Model, mode string, exec inference.Options, opts TracerOptions) (*Tracer, error) {
	t := &Tracer{m: m, mode: mode, workers: opts.StatsWorkers}
	if mode != "" {
		nodes, err := m.TracedNodes(mode)
		if err != nil {
			return nil, err
		}
		for _, i := range nodes {
			t.nodes = append(t.nodes, i)
			t.names = append(t.names, m.Graph.Nodes[i].Outputs[0])
		}
	}
	var err error
	if opts.InGraph {
		model, added := WithStats(m.Bytes, m.Graph, t.names)
		t.inGraph = map[string][2]string{}
		outs := []string{m.output}
		for k, v := range t.names {
			t.inGraph[v] = [2]string{added[2*k], added[2*k+1]}
		}
		outs = append(outs, added...)
		if t.sess, err = inference.NewSession(WithOutputs(model, m.Graph, []string{m.output}), m.inputNames(), outs, exec); err != nil {
			return nil, err
		}
		return t, nil
	}
	if !contains(t.names, m.output) {
		t.names = append(t.names, m.output)
	}
	if t.sess, err = inference.NewSession(WithOutputs(m.Bytes, m.Graph, t.names), m.inputNames(), t.names, exec); err != nil {
		return nil, err
	}
	return t, nil
}

// Trace tokenizes input, runs one inference and returns its trace.
func (t *Tracer) Trace(input []byte) (*Trace, error) {
	return t.TraceEncoded(t.m.Encode(input), input)
}

// TraceEncoded is Trace for an input already tokenized: enc must be the
// model's Encode(input) (callers that need the tokens too, or trace one
// input several ways, tokenize once).
func (t *Tracer) TraceEncoded(enc tokenizer.Encoding, input []byte) (*Trace, error) {
	tr, _, err := t.trace(enc, input, false)
	return tr, err
}

// ValueStats are statistics of one tensor that an auditor computes beside
// a trace's records from its own (reference) execution: they never enter
// a trace or its Merkle root. N is the element count; MaxAbs and MinAbs
// the largest and smallest magnitude of an element.
type ValueStats struct {
	Mean, RMS, MaxAbs, MinAbs float64
	N                         int
}

// DetailStats returns the ValueStats of values: Mean and RMS exactly as
// Stats computes them, and the extreme magnitudes.
func DetailStats(values []float32) ValueStats {
	st := ValueStats{N: len(values)}
	st.Mean, st.RMS = Stats(values)
	if len(values) == 0 {
		return st
	}
	lo, hi := float32(math.Inf(1)), float32(0)
	for _, v := range values {
		a := float32(math.Abs(float64(v)))
		if a != a { // NaN
			return ValueStats{Mean: math.NaN(), RMS: math.NaN(), MaxAbs: math.NaN(), MinAbs: math.NaN(), N: len(values)}
		}
		lo, hi = min(lo, a), max(hi, a)
	}
	st.MinAbs, st.MaxAbs = float64(lo), float64(hi)
	return st
}

// TraceDetail is TraceEncoded that also returns the ValueStats of every
// traced value, by value (output) name: what an auditor's reference
// execution computes to normalise drift and bound it analytically.
func (t *Tracer) TraceDetail(enc tokenizer.Encoding, input []byte) (*Trace, map[string]ValueStats, error) {
	return t.trace(enc, input, true)
}

func (t *Tracer) trace(enc tokenizer.Encoding, input []byte, detail bool) (*Trace, map[string]ValueStats, error) {
	if t.inGraph != nil && detail {
		return nil, nil, fmt.Errorf("trace: value statistics need the tensors: use a tracer without in-graph statistics")
	}
	tr, h, err := t.start(enc, input)
	if err != nil {
		return nil, nil, err
	}
	defer h.Release()
	details, err := t.finish(tr, h.Outputs(), detail)
	if err != nil {
		return nil, nil, err
	}
	return tr, details, nil
}

// start runs one inference with its outputs held and returns the trace's
// header with the model's output and probabilities (copied from the held
// tensors): everything but the operators and the Merkle root, which
// finish computes from the held outputs. The caller releases them.
func (t *Tracer) start(enc tokenizer.Encoding, input []byte) (*Trace, *inference.Held, error) {
	tr := &Trace{Schema: Schema, ONNXModelHash: t.m.Hash, InputCommitment: commitment.String(input), Mode: t.mode,
		Tokens: int64(enc.Tokens), Truncated: enc.Truncated}
	h, err := t.sess.Hold(t.m.inputs(enc))
	if err != nil {
		return nil, nil, err
	}
	for _, o := range h.Outputs() {
		if o.Name == t.m.output && o.F64 == nil {
			for _, v := range o.F32 {
				tr.Output = append(tr.Output, float64(v))
			}
		}
	}
	tr.Probabilities = probabilities(tr.Output, t.m.outputIsProbability)
	return tr, h, nil
}

// finish computes the statistics of the traced values from outs (a run's
// outputs, in the session's order) and fills tr's operators and Merkle
// root; with detail it also returns every traced value's ValueStats. It
// reads only what NewTracer set, so it may run on another goroutine than
// the tracer's.
func (t *Tracer) finish(tr *Trace, outs []inference.Output, detail bool) (map[string]ValueStats, error) {
	type stat struct{ mean, rms float64 }
	stats := make(map[string]stat, len(t.names))
	var details map[string]ValueStats
	if detail {
		details = make(map[string]ValueStats, len(t.names))
	}
	var doubles map[string][]float64
	if t.inGraph != nil {
		doubles = make(map[string][]float64, 2*len(t.names))
	}
	res := make([]ValueStats, len(outs))
	pairs, elements := pairBySize(outs)
	eachParallel(len(pairs), elements, t.workers, func(k int) {
		i, j := pairs[k][0], pairs[k][1]
		switch {
		case detail:
			res[i] = DetailStats(outs[i].F32)
			if j >= 0 {
				res[j] = DetailStats(outs[j].F32)
			}
		case j < 0:
			res[i].Mean, res[i].RMS = Stats(outs[i].F32) // no copy: the statistics are taken in place
		default:
			res[i].Mean, res[i].RMS, res[j].Mean, res[j].RMS = statsPair(outs[i].F32, outs[j].F32)
		}
	})
	for i, o := range outs {
		if o.F64 != nil {
			if doubles == nil {
				return nil, fmt.Errorf("trace: output %s is not a float tensor", o.Name)
			}
			doubles[o.Name] = o.F64
			continue
		}
		if detail {
			details[o.Name] = res[i]
		}
		stats[o.Name] = stat{res[i].Mean, res[i].RMS}
	}
	for v, o := range t.inGraph {
		mean, rms := statsFromGraph(doubles[o[0]], doubles[o[1]])
		stats[v] = stat{mean, rms}
	}
	for k, i := range t.nodes {
		n := t.m.Graph.Nodes[i]
		st := stats[n.Outputs[0]]
		tr.Operators = append(tr.Operators, Operator{Index: int64(k), Node: nodeID(n), OpType: n.OpType, Class: t.m.classes[i], Mean: st.mean, RMS: st.rms})
	}
	tr.OperatorCount = int64(len(tr.Operators))
	var err error
	if tr.MerkleRoot, err = Root(tr.Operators); err != nil {
		return nil, err
	}
	return details, nil
}

// Close releases the loaded model.
func (t *Tracer) Close() error { return t.sess.Close() }

// Run traces one inference of m in mode on the production execution,
// loading the model for this call.
func Run(m *Model, input []byte, mode string) (*Trace, error) {
	if !ValidMode(mode) {
		return nil, modeError(mode)
	}
	t, err := NewTracer(m, mode, inference.Options{})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Trace(input)
}

// nodeID names a node in a trace: its name, or its first output's name for
// unnamed nodes (names are optional in ONNX).
func nodeID(n Node) string {
	if n.Name != "" || len(n.Outputs) == 0 {
		return n.Name
	}
	return n.Outputs[0]
}

// probabilities returns the class probabilities of a model output: the
// output itself when the model ends in a Softmax, else its softmax
// (exported classifiers return logits).
func probabilities(out []float64, already bool) []float64 {
	if already || len(out) == 0 {
		return append([]float64(nil), out...)
	}
	mx := math.Inf(-1)
	for _, v := range out {
		mx = math.Max(mx, v)
	}
	p := make([]float64, len(out))
	var sum float64
	for i, v := range out {
		p[i] = math.Exp(v - mx)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// TracedNodes returns the indices of the graph nodes a trace in mode
// records, in trace order.
func (m *Model) TracedNodes(mode string) ([]int, error) {
	sel, err := Selected(m.Graph, m.classes, mode)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, i := range sel {
		if m.Graph.Traceable(i) {
			out = append(out, i)
		}
	}
	return out, nil
}

// NodeID names node n of a graph in a trace: its name, or its first
// output's name when unnamed.
func NodeID(n Node) string { return nodeID(n) }

// Class returns the operator class of graph node i.
func (m *Model) Class(i int) string { return m.classes[i] }

// Operators is the number of operators each trace records.
func (t *Tracer) Operators() int { return len(t.nodes) }

// Narrow returns the trace in mode of the same inference as tr, derived
// from tr's records: the operators of mode, in mode's order and
// re-indexed, with their Merkle root. Every operator of mode must be in
// tr (a residual trace holds production's). The statistics are tr's: the
// result is the trace a tracer in mode would give only when that
// tracer's execution computes those values with the same bits, which is
// the case when exposing tr's extra values leaves ONNX Runtime's
// optimised graph as it is (residual and production modes,
// TestResidualKeepsFusions); callers that rely on it check it
// (calibration compares a derived trace with a traced one).
func (m *Model) Narrow(tr *Trace, mode string) (*Trace, error) {
	nodes, err := m.TracedNodes(mode)
	if err != nil {
		return nil, err
	}
	byNode := make(map[string]int, len(tr.Operators))
	for k, o := range tr.Operators {
		byNode[o.Node] = k
	}
	out := *tr
	out.Mode = mode
	out.Operators = make([]Operator, 0, len(nodes))
	for k, i := range nodes {
		id := nodeID(m.Graph.Nodes[i])
		j, ok := byNode[id]
		if !ok {
			return nil, fmt.Errorf("trace: %s-mode operator %s is not in the %s trace", mode, id, tr.Mode)
		}
		o := tr.Operators[j]
		o.Index = int64(k)
		out.Operators = append(out.Operators, o)
	}
	out.OperatorCount = int64(len(out.Operators))
	if out.MerkleRoot, err = Root(out.Operators); err != nil {
		return nil, err
	}
	out.Output, out.Probabilities = slices.Clone(tr.Output), slices.Clone(tr.Probabilities)
	return &out, nil
}
