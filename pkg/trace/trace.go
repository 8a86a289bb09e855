// Package trace records a model's per-operator execution trace for Bounded
// Inference: for each traced operator, in the graph's topological order,
// its index, node name, op type, operator class, and the mean and RMS of
// its output; the trace is committed as an RFC 6962 Merkle root over the
// canonical JSON of each operator record. The trace stays local; only the
// root (and operator count) is ever sent.
package trace

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-gov/svc/pkg/canonical"
	"github.com/svc-gov/svc/pkg/merkle"
	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/vpec"
)

// Modes: full traces every operator with a float output; production
// traces the LayerNormalization outputs and the model's output only (low
// overhead: the other nodes stay fusable).
const (
	Full       = "full"
	Production = "production"
)

// ErrModel reports a model file that cannot be read as ONNX.
var ErrModel = errors.New("not a readable ONNX model")

// Node is a node of the model graph.
type Node struct {
	Name    string
	OpType  string
	Inputs  []string
	Outputs []string
}

// Graph is what tracing needs of a model: its nodes in file order (ONNX
// requires topological order) and its outputs.
type Graph struct {
	Nodes   []Node
	Outputs []string
}

// ReadGraph decodes the nodes and outputs of an ONNX ModelProto.
func ReadGraph(model []byte) (*Graph, error) {
	var g Graph
	err := fields(model, func(num protowire.Number, v []byte) error {
		if num != 7 { // ModelProto.graph (repeated occurrences merge)
			return nil
		}
		return fields(v, func(num protowire.Number, v []byte) error {
			switch num {
			case 1: // GraphProto.node
				var n Node
				err := fields(v, func(num protowire.Number, v []byte) error {
					switch num {
					case 1:
						n.Inputs = append(n.Inputs, string(v))
					case 2:
						n.Outputs = append(n.Outputs, string(v))
					case 3:
						n.Name = string(v)
					case 4:
						n.OpType = string(v)
					}
					return nil
				})
				g.Nodes = append(g.Nodes, n)
				return err
			case 12: // GraphProto.output
				return fields(v, func(num protowire.Number, v []byte) error {
					if num == 1 {
						g.Outputs = append(g.Outputs, string(v))
					}
					return nil
				})
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrModel, err)
	}
	if len(g.Nodes) == 0 {
		return nil, fmt.Errorf("%w: no graph nodes", ErrModel)
	}
	return &g, nil
}

// fields calls fn for every length-delimited field of a protobuf message
// and skips the others.
func fields(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			if err := fn(num, v); err != nil {
				return err
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}

// Classes assigns each node its operator class (profile.Linear, ...):
// MatMul and Gemm, and an Add fed by one, are Linear; LayerNormalization
// is LayerNorm; Softmax; Gelu, and the Erf pattern (Div, Erf, Add, Mul,
// Mul) are GELU; Dropout; the rest is Other.
func Classes(g *Graph) []string {
	producer := map[string]int{}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			producer[o] = i
		}
	}
	classes := make([]string, len(g.Nodes))
	fromOp := func(in string, ops ...string) bool {
		i, ok := producer[in]
		if !ok {
			return false
		}
		for _, op := range ops {
			if g.Nodes[i].OpType == op {
				return true
			}
		}
		return false
	}
	for i, n := range g.Nodes {
		c := profile.Other
		switch n.OpType {
		case "MatMul", "Gemm":
			c = profile.Linear
		case "LayerNormalization":
			c = profile.LayerNorm
		case "Softmax":
			c = profile.Softmax
		case "Gelu", "Erf":
			c = profile.GELU
		case "Dropout":
			c = profile.Dropout
		case "Add":
			for _, in := range n.Inputs {
				if fromOp(in, "MatMul", "Gemm") {
					c = profile.Linear
				}
				if fromOp(in, "Erf") {
					c = profile.GELU
				}
			}
		case "Mul":
			for _, in := range n.Inputs {
				if i2, ok := producer[in]; ok && classes[i2] == profile.GELU {
					c = profile.GELU
				}
			}
		case "Div":
			for _, o := range n.Outputs {
				for _, m := range g.Nodes {
					if m.OpType == "Erf" && len(m.Inputs) > 0 && m.Inputs[0] == o {
						c = profile.GELU
					}
				}
			}
		}
		classes[i] = c
	}
	return classes
}

// Selected returns the indexes of the nodes a mode traces: every node
// (full) or the LayerNorm nodes and the node producing the first graph
// output (production).
func Selected(g *Graph, classes []string, mode string) ([]int, error) {
	var out []int
	for i, n := range g.Nodes {
		switch mode {
		case Full:
			out = append(out, i)
		case Production:
			if classes[i] == profile.LayerNorm || (len(g.Outputs) > 0 && contains(n.Outputs, g.Outputs[0])) {
				out = append(out, i)
			}
		default:
			return nil, fmt.Errorf("trace mode %q: use %s or %s", mode, Full, Production)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WithOutputs returns the model with the named values added as graph
// outputs (float tensors), by appending a graph field that protobuf merges
// into the model's graph. Names already outputs are skipped.
func WithOutputs(model []byte, g *Graph, names []string) []byte {
	var add []byte
	for _, n := range names {
		if contains(g.Outputs, n) {
			continue
		}
		tensor := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1) // elem_type FLOAT
		typ := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), tensor)
		vi := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte(n))
		vi = protowire.AppendBytes(protowire.AppendTag(vi, 2, protowire.BytesType), typ)
		add = protowire.AppendBytes(protowire.AppendTag(add, 12, protowire.BytesType), vi)
	}
	out := append([]byte(nil), model...)
	if len(add) == 0 {
		return out
	}
	return protowire.AppendBytes(protowire.AppendTag(out, 7, protowire.BytesType), add)
}

// Operator is one traced operator's record (a Merkle leaf).
type Operator struct {
	Index  int64   `json:"index"`
	Node   string  `json:"node"`
	OpType string  `json:"op_type"`
	Class  string  `json:"class"`
	Mean   float64 `json:"mean"`
	RMS    float64 `json:"rms"`
}

// Stats returns the mean and RMS of values (0, 0 for none). Values are
// summed in float64.
func Stats(values []float32) (mean, rms float64) {
	if len(values) == 0 {
		return 0, 0
	}
	var s, ss float64
	for _, v := range values {
		f := float64(v)
		s += f
		ss += f * f
	}
	n := float64(len(values))
	return s / n, math.Sqrt(ss / n)
}

// Leaf returns the canonical JSON bytes of an operator record.
func (o Operator) Leaf() ([]byte, error) { return canonical.Marshal(o) }

// Root returns the RFC 6962 Merkle root over the operators' leaves, as
// "sha256:<hex>".
func Root(ops []Operator) (string, error) {
	leaves := make([]merkle.Hash, len(ops))
	for i, o := range ops {
		b, err := o.Leaf()
		if err != nil {
			return "", err
		}
		leaves[i] = merkle.LeafHash(b)
	}
	return vpec.FormatHash(merkle.RootFromLeafHashes(leaves)), nil
}

// Trace is a trace file (it stays local).
type Trace struct {
	Schema          string     `json:"schema"`
	ONNXModelHash   string     `json:"onnx_model_hash"`
	InputCommitment string     `json:"input_commitment"`
	Mode            string     `json:"mode"`
	OperatorCount   int64      `json:"operator_count"`
	MerkleRoot      string     `json:"merkle_root"`
	Output          []float64  `json:"output"`
	Operators       []Operator `json:"operators"`
}

// Schema is the schema field of a v1 trace file.
const Schema = "svc.trace/v1"

// Verify recomputes the Merkle root and operator count of a trace.
func (t *Trace) Verify() error {
	root, err := Root(t.Operators)
	if err != nil {
		return err
	}
	if root != t.MerkleRoot || int64(len(t.Operators)) != t.OperatorCount {
		return fmt.Errorf("trace: merkle_root %s / operator_count %d do not match its %d operators (root %s)", t.MerkleRoot, t.OperatorCount, len(t.Operators), root)
	}
	return nil
}
