package trace

import (
	"fmt"

	"github.com/svc-gov/svc/pkg/commitment"
	"github.com/svc-gov/svc/pkg/inference"
)

// intOps produce integer tensors in shape subgraphs of real exports; they
// are never traced, nor are Cast nodes and values that only feed a Cast
// (their element type is not float, or not known without type inference).
var intOps = map[string]bool{"Shape": true, "Size": true, "NonZero": true, "ArgMax": true, "ArgMin": true,
	"Equal": true, "Less": true, "Greater": true, "Not": true, "And": true, "Or": true, "ConstantOfShape": true,
	"Range": true, "Constant": true, "Cast": true}

// onlyCast reports whether every consumer of value is a Cast node.
func onlyCast(g *Graph, value string) bool {
	seen := false
	for _, n := range g.Nodes {
		if contains(n.Inputs, value) {
			if n.OpType != "Cast" {
				return false
			}
			seen = true
		}
	}
	return seen
}

// Tracer traces one model in one mode: the model with the traced values
// exposed as outputs is loaded once and reused for every inference.
type Tracer struct {
	g       *Graph
	classes []string
	nodes   []int
	names   []string
	mode    string
	hash    string
	sess    *inference.Session
}

// NewTracer prepares model (ONNX Runtime must be initialised) for tracing
// in mode; inputName is the token-id input. threads > 0 bounds ONNX
// Runtime's threads. mode "" loads the model untraced (the baseline).
func NewTracer(model []byte, inputName, mode string, threads int) (*Tracer, error) {
	g, err := ReadGraph(model)
	if err != nil {
		return nil, err
	}
	t := &Tracer{g: g, classes: Classes(g), mode: mode, hash: commitment.String(model)}
	if mode != "" {
		sel, err := Selected(g, t.classes, mode)
		if err != nil {
			return nil, err
		}
		for _, i := range sel {
			n := g.Nodes[i]
			if intOps[n.OpType] || len(n.Outputs) == 0 || onlyCast(g, n.Outputs[0]) {
				continue
			}
			t.nodes = append(t.nodes, i)
			t.names = append(t.names, n.Outputs[0])
		}
	}
	if len(g.Outputs) > 0 && !contains(t.names, g.Outputs[0]) {
		t.names = append(t.names, g.Outputs[0])
	}
	if t.sess, err = inference.NewSession(WithOutputs(model, g, t.names), inputName, t.names, threads); err != nil {
		return nil, err
	}
	return t, nil
}

// Trace runs one inference on token ids and returns its trace; input is
// the raw input, of which only the commitment is kept.
func (t *Tracer) Trace(ids []int64, input []byte) (*Trace, error) {
	type stat struct{ mean, rms float64 }
	stats := make(map[string]stat, len(t.names))
	tr := &Trace{Schema: Schema, ONNXModelHash: t.hash, InputCommitment: commitment.String(input), Mode: t.mode}
	err := t.sess.Each(ids, func(name string, data []float32) {
		mean, rms := Stats(data) // no copy: the statistics are taken in place
		stats[name] = stat{mean, rms}
		if len(t.g.Outputs) > 0 && name == t.g.Outputs[0] {
			for _, v := range data {
				tr.Output = append(tr.Output, float64(v))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for k, i := range t.nodes {
		n := t.g.Nodes[i]
		st := stats[n.Outputs[0]]
		tr.Operators = append(tr.Operators, Operator{Index: int64(k), Node: n.Name, OpType: n.OpType, Class: t.classes[i], Mean: st.mean, RMS: st.rms})
	}
	tr.OperatorCount = int64(len(tr.Operators))
	if tr.MerkleRoot, err = Root(tr.Operators); err != nil {
		return nil, err
	}
	return tr, nil
}

// Close releases the loaded model.
func (t *Tracer) Close() error { return t.sess.Close() }

// Run traces one inference of model in mode (loading it for this call).
func Run(model []byte, inputName string, ids []int64, input []byte, mode string) (*Trace, error) {
	if mode != Full && mode != Production {
		return nil, fmt.Errorf("trace mode %q: use %s or %s", mode, Full, Production)
	}
	t, err := NewTracer(model, inputName, mode, 0)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Trace(ids, input)
}
