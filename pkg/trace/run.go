package trace

import (
	"fmt"
	"math"

	"github.com/svc-gov/svc/pkg/commitment"
	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/tokenizer"
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
}

// NewTracer prepares m for tracing in mode on the execution exec selects
// (ONNX Runtime must be initialised). Mode "" loads the model untraced,
// the baseline the overhead benchmark compares against.
func NewTracer(m *Model, mode string, exec inference.Options) (*Tracer, error) {
	t := &Tracer{m: m, mode: mode}
	if mode != "" {
		sel, err := Selected(m.Graph, m.classes, mode)
		if err != nil {
			return nil, err
		}
		for _, i := range sel {
			if !m.Graph.Traceable(i) {
				continue
			}
			t.nodes = append(t.nodes, i)
			t.names = append(t.names, m.Graph.Nodes[i].Outputs[0])
		}
	}
	if !contains(t.names, m.output) {
		t.names = append(t.names, m.output)
	}
	var err error
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
	type stat struct{ mean, rms float64 }
	stats := make(map[string]stat, len(t.names))
	tr := &Trace{Schema: Schema, ONNXModelHash: t.m.Hash, InputCommitment: commitment.String(input), Mode: t.mode,
		Tokens: int64(enc.Tokens), Truncated: enc.Truncated}
	err := t.sess.Each(t.m.inputs(enc), func(name string, data []float32) {
		mean, rms := Stats(data) // no copy: the statistics are taken in place
		stats[name] = stat{mean, rms}
		if name == t.m.output {
			for _, v := range data {
				tr.Output = append(tr.Output, float64(v))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	tr.Probabilities = probabilities(tr.Output, t.m.outputIsProbability)
	for k, i := range t.nodes {
		n := t.m.Graph.Nodes[i]
		st := stats[n.Outputs[0]]
		tr.Operators = append(tr.Operators, Operator{Index: int64(k), Node: nodeID(n), OpType: n.OpType, Class: t.m.classes[i], Mean: st.mean, RMS: st.rms})
	}
	tr.OperatorCount = int64(len(tr.Operators))
	if tr.MerkleRoot, err = Root(tr.Operators); err != nil {
		return nil, err
	}
	return tr, nil
}

// Close releases the loaded model.
func (t *Tracer) Close() error { return t.sess.Close() }

// Run traces one inference of m in mode on the production execution,
// loading the model for this call.
func Run(m *Model, input []byte, mode string) (*Trace, error) {
	if mode != Full && mode != Production {
		return nil, fmt.Errorf("trace mode %q: use %s or %s", mode, Full, Production)
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

// Operators is the number of operators each trace records.
func (t *Tracer) Operators() int { return len(t.nodes) }
