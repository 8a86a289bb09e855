package trace

import (
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

// Run executes model (ONNX Runtime must be initialised) on token ids and
// returns its trace in the given mode. inputName is the token-id input;
// the model's first output is the score.
func Run(model []byte, inputName string, ids []int64, input []byte, mode string) (*Trace, error) {
	g, err := ReadGraph(model)
	if err != nil {
		return nil, err
	}
	classes := Classes(g)
	sel, err := Selected(g, classes, mode)
	if err != nil {
		return nil, err
	}
	var nodes []int
	var names []string
	for _, i := range sel {
		n := g.Nodes[i]
		if intOps[n.OpType] || len(n.Outputs) == 0 || onlyCast(g, n.Outputs[0]) {
			continue
		}
		nodes = append(nodes, i)
		names = append(names, n.Outputs[0])
	}
	if len(g.Outputs) > 0 && !contains(names, g.Outputs[0]) {
		names = append(names, g.Outputs[0])
	}
	values, err := inference.RunInt64(WithOutputs(model, g, names), inputName, ids, names)
	if err != nil {
		return nil, err
	}
	t := &Trace{Schema: Schema, ONNXModelHash: commitment.String(model), InputCommitment: commitment.String(input), Mode: mode}
	for k, i := range nodes {
		n := g.Nodes[i]
		mean, rms := Stats(values[n.Outputs[0]])
		t.Operators = append(t.Operators, Operator{Index: int64(k), Node: n.Name, OpType: n.OpType, Class: classes[i], Mean: mean, RMS: rms})
	}
	if len(g.Outputs) > 0 {
		for _, v := range values[g.Outputs[0]] {
			t.Output = append(t.Output, float64(v))
		}
	}
	t.OperatorCount = int64(len(t.Operators))
	if t.MerkleRoot, err = Root(t.Operators); err != nil {
		return nil, err
	}
	return t, nil
}
