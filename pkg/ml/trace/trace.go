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

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/merkle"
	"github.com/svc-gov/svc/pkg/core/profile"
)

// Modes: full traces every operator with a float output; production
// traces the output of each layer normalization (the terminal node of each
// LayerNorm group, see Selected) and the model's output only (low
// overhead: the other nodes stay fusable); residual traces what production
// does and, in addition, each layer normalization's input (the residual
// stream) and, when the model ends in Softmax, the logits it normalises:
// values that depend on the weights whatever the normalization's gamma and
// beta (docs/BOUNDED.md).
// They are the trace modes of pkg/core/profile, the one list a profile's
// operator_counts and a VPEC record's trace_mode are checked against.
const (
	Full       = profile.TraceFull
	Production = profile.TraceProduction
	Residual   = profile.TraceResidual
)

// Modes returns the trace modes, in the order documents list them.
func Modes() []string { return []string{Full, Production, Residual} }

// ValidMode reports whether mode is a trace mode.
func ValidMode(mode string) bool { return mode == Full || mode == Production || mode == Residual }

// modeError is the error for an unknown trace mode.
func modeError(mode string) error {
	return fmt.Errorf("trace mode %q: use %s, %s or %s", mode, Full, Production, Residual)
}

// ErrModel reports a model file that cannot be read as ONNX.
var ErrModel = errors.New("not a readable ONNX model")

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
// summed in float64 in four interleaved partial sums: element i goes to
// sum i mod 4 (squares likewise, each square rounded before it is added,
// never fused), in index order, the elements after the last whole block
// of four to sum 0; the result is ((s0+s1)+(s2+s3))/n and
// sqrt(((q0+q1)+(q2+q3))/n). The order is fixed so that every build
// (pure Go or SSE2 on amd64, sumBlocks) gives the same bits; another order
// would change the result by about 1e-16 relative, far below any drift
// bound, but not the definition a trace's Merkle root commits to.
func Stats(values []float32) (mean, rms float64) {
	var acc [8]float64 // s0..s3, q0..q3
	sumBlocks(values[:len(values)&^3], &acc)
	return finishStats(values, &acc)
}

// finishStats adds the elements of values after its last whole block of
// four to the partial sums in acc (which hold the blocks) and returns the
// mean and RMS (0, 0 for no values).
func finishStats(values []float32, acc *[8]float64) (mean, rms float64) {
	if len(values) == 0 {
		return 0, 0
	}
	s0, s1, s2, s3, q0, q1, q2, q3 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	for _, v := range values[len(values)&^3:] {
		f := float64(v)
		s0 += f
		q0 += float64(f * f) // the conversion forbids fusing into an FMA
	}
	n := float64(len(values))
	return ((s0 + s1) + (s2 + s3)) / n, math.Sqrt(((q0 + q1) + (q2 + q3)) / n)
}

// statsPair is Stats of a and of b (the same bits), with the blocks the
// two have in common summed in one loop (sumBlocks2): the two tensors'
// addition chains are independent, so the processor overlaps them.
func statsPair(a, b []float32) (ma, ra, mb, rb float64) {
	var accA, accB [8]float64
	n := min(len(a), len(b)) &^ 3
	sumBlocks2(a[:n], b[:n], &accA, &accB)
	sumBlocks(a[n:len(a)&^3], &accA)
	sumBlocks(b[n:len(b)&^3], &accB)
	ma, ra = finishStats(a, &accA)
	mb, rb = finishStats(b, &accB)
	return
}

// sumBlocksGo is sumBlocks in Go: it adds v's elements and their squares,
// v a whole number of blocks of four, to the partial sums in acc.
func sumBlocksGo(v []float32, acc *[8]float64) {
	s0, s1, s2, s3, q0, q1, q2, q3 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	for i := 0; i+4 <= len(v); i += 4 {
		a, b, c, d := float64(v[i]), float64(v[i+1]), float64(v[i+2]), float64(v[i+3])
		s0, s1, s2, s3 = s0+a, s1+b, s2+c, s3+d
		q0, q1, q2, q3 = q0+float64(a*a), q1+float64(b*b), q2+float64(c*c), q3+float64(d*d)
	}
	*acc = [8]float64{s0, s1, s2, s3, q0, q1, q2, q3}
}

// Leaf returns the canonical JSON (RFC 8785) bytes of an operator record:
// {"class":…,"index":…,"mean":…,"node":…,"op_type":…,"rms":…}, members in
// that (sorted) order. Written directly; canonical.Marshal gives the same
// bytes, slower.
func (o Operator) Leaf() ([]byte, error) {
	if math.IsNaN(o.Mean) || math.IsInf(o.Mean, 0) || math.IsNaN(o.RMS) || math.IsInf(o.RMS, 0) || o.Index < 0 || o.Index > 1<<53 {
		return nil, fmt.Errorf("trace: operator %d (%s): mean %v, rms %v: not representable in JSON", o.Index, o.Node, o.Mean, o.RMS)
	}
	b := make([]byte, 0, 96+len(o.Node)+len(o.Class)+len(o.OpType))
	var ok1, ok2, ok3 bool
	b = append(b, `{"class":`...)
	b, ok1 = canonical.AppendString(b, o.Class)
	b = append(b, `,"index":`...)
	b = canonical.AppendNumber(b, float64(o.Index))
	b = append(b, `,"mean":`...)
	b = canonical.AppendNumber(b, o.Mean)
	b = append(b, `,"node":`...)
	b, ok2 = canonical.AppendString(b, o.Node)
	b = append(b, `,"op_type":`...)
	b, ok3 = canonical.AppendString(b, o.OpType)
	b = append(b, `,"rms":`...)
	b = canonical.AppendNumber(b, o.RMS)
	b = append(b, '}')
	if !ok1 || !ok2 || !ok3 {
		return canonical.Marshal(o) // invalid UTF-8 in a name: encoding/json's replacement rules
	}
	return b, nil
}

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
	return commitment.OfSHA256(merkle.RootFromLeafHashes(leaves)).String(), nil
}

// Trace is a trace file (it stays local).
type Trace struct {
	Schema          string     `json:"schema"`
	ONNXModelHash   string     `json:"onnx_model_hash"`
	InputCommitment string     `json:"input_commitment"`
	Mode            string     `json:"mode"`
	OperatorCount   int64      `json:"operator_count"`
	MerkleRoot      string     `json:"merkle_root"`
	Tokens          int64      `json:"tokens"`
	Truncated       bool       `json:"truncated"`
	Output          []float64  `json:"output"`
	Probabilities   []float64  `json:"probabilities"`
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
