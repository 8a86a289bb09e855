package trace

import (
	"math"

	"github.com/svc-gov/svc/pkg/core/profile"
)

// Operators by class (any domain).
var (
	linearOps    = set("MatMul", "Gemm", "FusedMatMul", "MatMulInteger", "QLinearMatMul", "MatMulIntegerToFloat", "MatMulNBits", "DynamicQuantizeMatMul", "QGemm")
	layerNormOps = set("LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization")
	geluOps      = set("Gelu", "FastGelu", "BiasGelu", "QuickGelu")
	// nondeterministic operators never make a constant.
	randomOps = set("RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli")
	// scalarOps pass a scalar constant's value through.
	scalarOps = set("Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten")
)

// Classes assigns each node its operator class (profile.Linear, ...), from
// its operator and, for decomposed operators, the structure of the pattern
// it is part of (never from node names, which differ between exporters):
//
//   - Linear: MatMul, Gemm (and quantised or fused variants), and an Add of
//     a constant bias to a MatMul or Gemm output, in either input order.
//   - LayerNorm: LayerNormalization, SkipLayerNormalization and their
//     variants, and every node of the decomposed pattern opset < 17
//     exporters write: ReduceMean(x), Sub(x, mean), Pow(d, 2) or Mul(d, d),
//     ReduceMean, Add(eps), Sqrt, Div(d, ·) (or Reciprocal and Mul), then
//     optionally Mul(gamma) and Add(beta).
//   - GELU: Gelu, FastGelu, BiasGelu, QuickGelu; every node of the Erf
//     pattern, x·0.5·(1 + erf(x/√2)) with Div(x, √2) or Mul(x, 1/√2) and
//     the two multiplications in any order; and of the tanh approximation,
//     x·0.5·(1 + tanh(√(2/π)·(x + 0.044715·x³))) with x³ as Pow(x, 3) or
//     Mul(x, Mul(x, x)).
//   - Softmax; Dropout; the rest (attention-mask arithmetic, residual
//     Adds, shape subgraphs, Casts, Tanh of a pooler ...) is Other.
//
// Constants are initializers, Constant nodes and what is computed from
// constants only; the values of scalar constants are checked where they
// identify a pattern (√2, 1, 0.5, 2, 3, ...) when the model stores them.
func Classes(g *Graph) []string {
	x := newIndex(g)
	classes := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		switch {
		case linearOps[n.OpType]:
			classes[i] = profile.Linear
		case layerNormOps[n.OpType]:
			classes[i] = profile.LayerNorm
		case n.OpType == "Softmax":
			classes[i] = profile.Softmax
		case geluOps[n.OpType]:
			classes[i] = profile.GELU
		case n.OpType == "Dropout":
			classes[i] = profile.Dropout
		default:
			classes[i] = profile.Other
		}
	}
	mark := func(c string, nodes []int) {
		for _, i := range nodes {
			classes[i] = c
		}
	}
	for i, n := range g.Nodes {
		if p, ok := x.producer[first(n.Outputs)]; !ok || p != i {
			continue // no output, or a duplicate producer (invalid)
		}
		switch n.OpType {
		case "ReduceMean":
			mark(profile.LayerNorm, x.layerNorm(i))
		case "Erf":
			mark(profile.GELU, x.erfGELU(i))
		case "Tanh":
			mark(profile.GELU, x.tanhGELU(i))
		}
	}
	for i, n := range g.Nodes {
		if n.OpType != "Add" || classes[i] != profile.Other || len(n.Inputs) != 2 {
			continue
		}
		for k, in := range n.Inputs {
			if p, ok := x.producer[in]; ok && linearOps[g.Nodes[p].OpType] && x.consts[n.Inputs[1-k]] {
				classes[i] = profile.Linear
			}
		}
	}
	return classes
}

// Selected returns the indexes of the nodes a mode traces, in node order:
// every node (full), or (production) the terminal node of each LayerNorm
// group, a LayerNorm node whose first output is a graph output or feeds a
// node of another class, and the node producing the first graph output;
// residual adds to production's, for every input of a LayerNorm node
// that is the first output of a node p of another class: p's operands'
// producers of another class than LayerNorm when p is an Add of class
// Other (a residual sum x + sublayer(x): the sublayer's output, and for
// the embeddings' sum the embedding lookups), else p itself; and, when
// the first graph output is a Softmax's, the producer of the Softmax's
// input (the logits). Only producers whose first output is the value
// count, and never a constant (what is computed from constants only).
// The residual sum itself is not traced: exposing it stops ONNX Runtime
// fusing the Add into SkipLayerNormalization (docs/BOUNDED.md).
func Selected(g *Graph, classes []string, mode string) ([]int, error) {
	if !ValidMode(mode) {
		return nil, modeError(mode)
	}
	var out []int
	if mode == Full {
		for i := range g.Nodes {
			out = append(out, i)
		}
		return out, nil
	}
	class := func(i int) string {
		if i < len(classes) {
			return classes[i]
		}
		return ""
	}
	consumers := map[string][]int{}
	for i, n := range g.Nodes {
		for _, in := range n.Inputs {
			consumers[in] = append(consumers[in], i)
		}
	}
	// residual mode: what each sublayer adds to the residual stream (the
	// operands of the sums that layer normalizations take), and the logits.
	extra := map[int]bool{}
	if mode == Residual {
		producer := map[string]int{}
		for i, n := range g.Nodes {
			for _, o := range n.Outputs {
				if _, ok := producer[o]; !ok && o != "" {
					producer[o] = i
				}
			}
		}
		consts := newIndex(g).consts
		// from returns the node whose first output is v, if v is not a
		// constant and the node not of class LayerNorm.
		from := func(v string) (int, bool) {
			p, ok := producer[v]
			return p, ok && !consts[v] && class(p) != profile.LayerNorm && first(g.Nodes[p].Outputs) == v
		}
		for i, n := range g.Nodes {
			if class(i) == profile.LayerNorm {
				for _, in := range n.Inputs {
					p, ok := from(in)
					if !ok {
						continue
					}
					if g.Nodes[p].OpType != "Add" || class(p) != profile.Other {
						extra[p] = true
						continue
					}
					for _, operand := range g.Nodes[p].Inputs { // a residual sum: its operands
						if q, ok := from(operand); ok {
							extra[q] = true
						}
					}
				}
			}
			if n.OpType == "Softmax" && len(g.Outputs) > 0 && first(n.Outputs) == g.Outputs[0] && len(n.Inputs) > 0 {
				if p, ok := from(n.Inputs[0]); ok {
					extra[p] = true
				}
			}
		}
	}
	for i, n := range g.Nodes {
		if len(g.Outputs) > 0 && contains(n.Outputs, g.Outputs[0]) || extra[i] {
			out = append(out, i)
			continue
		}
		if class(i) != profile.LayerNorm || len(n.Outputs) == 0 || n.Outputs[0] == "" {
			continue
		}
		terminal := contains(g.Outputs, n.Outputs[0])
		for _, c := range consumers[n.Outputs[0]] {
			if class(c) != profile.LayerNorm {
				terminal = true
			}
		}
		if terminal {
			out = append(out, i)
		}
	}
	return out, nil
}

// index is a graph's producers, consumers and constants.
type index struct {
	g         *Graph
	producer  map[string]int
	consumers map[string][]int
	consts    map[string]bool
	scalars   map[string]float64
}

func newIndex(g *Graph) *index {
	x := &index{g: g, producer: map[string]int{}, consumers: map[string][]int{}, consts: map[string]bool{}, scalars: map[string]float64{}}
	for name := range g.Initializers {
		x.consts[name] = true
	}
	for name, t := range g.tensors {
		x.consts[name] = true
		if v, ok := t.Scalar(); ok {
			x.scalars[name] = v
		}
	}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			if _, ok := x.producer[o]; !ok && o != "" {
				x.producer[o] = i
			}
		}
		for _, in := range n.Inputs {
			if c := x.consumers[in]; in != "" && (len(c) == 0 || c[len(c)-1] != i) {
				x.consumers[in] = append(x.consumers[in], i)
			}
		}
	}
	// Constant folding, in order (twice, should the file not be sorted).
	for pass := 0; pass < 2; pass++ {
		for _, n := range g.Nodes {
			if !x.constant(n) {
				continue
			}
			for _, o := range n.Outputs {
				if o != "" {
					x.consts[o] = true
				}
			}
			if len(n.Outputs) == 0 || n.Outputs[0] == "" {
				continue
			}
			if v, ok := constantScalar(n); ok {
				x.scalars[n.Outputs[0]] = v
			} else if v, ok := x.scalars[first(n.Inputs)]; ok && scalarOps[n.OpType] {
				x.scalars[n.Outputs[0]] = v
			}
		}
	}
	return x
}

// constant reports whether node n computes a constant.
func (x *index) constant(n Node) bool {
	if n.OpType == "Constant" {
		return true
	}
	if randomOps[n.OpType] || opaqueOps[n.OpType] {
		return false
	}
	seen := false
	for _, in := range n.Inputs {
		if in == "" {
			continue
		}
		if !x.consts[in] {
			return false
		}
		seen = true
	}
	return seen
}

// constantScalar is the value of a Constant node's one-element value.
func constantScalar(n Node) (float64, bool) {
	if n.OpType != "Constant" {
		return 0, false
	}
	if a, ok := n.Attrs["value"]; ok {
		return a.Tensor.Scalar()
	}
	if a, ok := n.Attrs["value_float"]; ok && a.HasFloat {
		return float64(a.Float), true
	}
	if a, ok := n.Attrs["value_int"]; ok && a.HasInt {
		return float64(a.Int), true
	}
	return 0, false
}

func first(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}

// near reports whether constant value c is about want, or of a value not
// known (not stored in the model as a scalar).
func (x *index) near(c string, want float64) bool {
	v, ok := x.scalars[c]
	return !ok || math.Abs(v-want) <= 1e-2*math.Abs(want)
}

// out is node i's first output.
func (x *index) out(i int) string { return first(x.g.Nodes[i].Outputs) }

// is reports whether node i is a op with n inputs.
func (x *index) is(i int, op string, inputs int) bool {
	n := x.g.Nodes[i]
	return n.OpType == op && len(n.Inputs) == inputs && len(n.Outputs) > 0
}

// withConst splits binary node i into its non-constant and its constant
// input: ok if exactly one is constant and that one is about want (want
// NaN: any value).
func (x *index) withConst(i int, want float64) (act, c string, ok bool) {
	in := x.g.Nodes[i].Inputs
	if len(in) != 2 || x.consts[in[0]] == x.consts[in[1]] {
		return "", "", false
	}
	act, c = in[0], in[1]
	if x.consts[act] {
		act, c = c, act
	}
	if !math.IsNaN(want) && !x.near(c, want) {
		return "", "", false
	}
	return act, c, true
}

// other returns the input of binary node i that is not v (v itself for
// v op v), ok if v is an input.
func (x *index) other(i int, v string) (string, bool) {
	in := x.g.Nodes[i].Inputs
	switch {
	case len(in) != 2:
		return "", false
	case in[0] == v:
		return in[1], true
	case in[1] == v:
		return in[0], true
	}
	return "", false
}

// consumer returns the first node of op with two inputs consuming v for
// which accept holds.
func (x *index) consumer(v, op string, accept func(i int) bool) (int, bool) {
	if v == "" {
		return 0, false
	}
	for _, i := range x.consumers[v] {
		if x.is(i, op, 2) && accept(i) {
			return i, true
		}
	}
	return 0, false
}

// unary returns the first consumer of v that is a one-input op node.
func (x *index) unary(v, op string) (int, bool) {
	for _, i := range x.consumers[v] {
		if x.is(i, op, 1) {
			return i, true
		}
	}
	return 0, false
}

// sole reports whether node i is the only consumer of v.
func (x *index) sole(v string, i int) bool {
	c := x.consumers[v]
	return len(c) == 1 && c[0] == i
}

// anyValue accepts any constant value.
var anyValue = math.NaN()

// layerNorm matches the decomposed layer normalization starting at
// ReduceMean node r and returns its nodes (nil if r does not start one).
func (x *index) layerNorm(r int) []int {
	n := x.g.Nodes[r]
	if len(n.Inputs) == 0 || x.consts[n.Inputs[0]] || len(n.Outputs) == 0 {
		return nil
	}
	in, mean := n.Inputs[0], x.out(r)
	sub, ok := x.consumer(mean, "Sub", func(i int) bool {
		return x.g.Nodes[i].Inputs[0] == in && x.g.Nodes[i].Inputs[1] == mean
	})
	if !ok {
		return nil
	}
	d := x.out(sub)
	sq, ok := x.consumer(d, "Pow", func(i int) bool {
		a, _, ok := x.withConst(i, 2)
		return ok && a == d && x.g.Nodes[i].Inputs[0] == d
	})
	if !ok {
		sq, ok = x.consumer(d, "Mul", func(i int) bool {
			in := x.g.Nodes[i].Inputs
			return in[0] == d && in[1] == d
		})
	}
	if !ok {
		return nil
	}
	var r2 int
	found := false
	for _, i := range x.consumers[x.out(sq)] {
		if x.g.Nodes[i].OpType == "ReduceMean" && len(x.g.Nodes[i].Inputs) > 0 && x.g.Nodes[i].Inputs[0] == x.out(sq) && len(x.g.Nodes[i].Outputs) > 0 {
			r2, found = i, true
			break
		}
	}
	if !found {
		return nil
	}
	eps, ok := x.consumer(x.out(r2), "Add", func(i int) bool { _, _, ok := x.withConst(i, anyValue); return ok })
	if !ok {
		return nil
	}
	sqrt, ok := x.unary(x.out(eps), "Sqrt")
	if !ok {
		return nil
	}
	nodes := []int{r, sub, sq, r2, eps, sqrt}
	norm, ok := x.consumer(x.out(sqrt), "Div", func(i int) bool { return x.g.Nodes[i].Inputs[0] == d })
	if !ok { // d · 1/√(var + eps)
		recip, ok := x.unary(x.out(sqrt), "Reciprocal")
		if !ok {
			return nil
		}
		if norm, ok = x.consumer(x.out(recip), "Mul", func(i int) bool { o, ok := x.other(i, x.out(recip)); return ok && o == d }); !ok {
			return nil
		}
		nodes = append(nodes, recip)
	}
	nodes = append(nodes, norm)
	last := norm
	if m, ok := x.consumer(x.out(last), "Mul", func(i int) bool { _, _, ok := x.withConst(i, anyValue); return ok }); ok && x.sole(x.out(last), m) {
		nodes = append(nodes, m)
		last = m
		if a, ok := x.consumer(x.out(last), "Add", func(i int) bool { _, _, ok := x.withConst(i, anyValue); return ok }); ok && x.sole(x.out(last), a) {
			nodes = append(nodes, a)
		}
	}
	return nodes
}

// erfGELU matches the Erf GELU around Erf node e and returns its nodes
// (at least e: Erf is not used otherwise in these models).
func (x *index) erfGELU(e int) []int {
	nodes := []int{e}
	n := x.g.Nodes[e]
	if len(n.Inputs) == 0 || len(n.Outputs) == 0 {
		return nodes
	}
	in := ""
	if p, ok := x.producer[n.Inputs[0]]; ok {
		switch {
		case x.is(p, "Div", 2):
			if a, _, ok := x.withConst(p, math.Sqrt2); ok && a == x.g.Nodes[p].Inputs[0] {
				in = a
			}
		case x.is(p, "Mul", 2):
			if a, _, ok := x.withConst(p, 1/math.Sqrt2); ok {
				in = a
			}
		}
		if in != "" {
			nodes = append(nodes, p)
		}
	}
	return append(nodes, x.geluTail(x.out(e), in)...)
}

// tanhGELU matches the tanh-approximated GELU around Tanh node t and
// returns its nodes (nil if t is not part of one: Tanh has other uses,
// such as BERT's pooler).
func (x *index) tanhGELU(t int) []int {
	n := x.g.Nodes[t]
	if len(n.Inputs) != 1 || len(n.Outputs) == 0 {
		return nil
	}
	scale, ok := x.producer[n.Inputs[0]]
	if !ok || !x.is(scale, "Mul", 2) {
		return nil
	}
	inner, _, ok := x.withConst(scale, math.Sqrt(2/math.Pi))
	if !ok {
		return nil
	}
	sum, ok := x.producer[inner]
	if !ok || !x.is(sum, "Add", 2) {
		return nil
	}
	for k, in := range x.g.Nodes[sum].Inputs {
		cubic, ok := x.producer[x.g.Nodes[sum].Inputs[1-k]]
		if !ok || !x.is(cubic, "Mul", 2) {
			continue
		}
		cube, _, ok := x.withConst(cubic, 0.044715)
		if !ok {
			continue
		}
		cubeNodes := x.cube(cube, in)
		if cubeNodes == nil {
			continue
		}
		nodes := append([]int{t, scale, sum, cubic}, cubeNodes...)
		return append(nodes, x.geluTail(x.out(t), in)...)
	}
	return nil
}

// cube returns the nodes computing v = in³: Pow(in, 3), or in·(in·in) in
// either order; nil if v is not in³.
func (x *index) cube(v, in string) []int {
	p, ok := x.producer[v]
	if !ok {
		return nil
	}
	if x.is(p, "Pow", 2) {
		if a, _, ok := x.withConst(p, 3); ok && a == in && x.g.Nodes[p].Inputs[0] == in {
			return []int{p}
		}
		return nil
	}
	if !x.is(p, "Mul", 2) {
		return nil
	}
	sq, ok := x.other(p, in)
	if !ok {
		return nil
	}
	q, ok := x.producer[sq]
	if !ok || !x.is(q, "Mul", 2) || x.g.Nodes[q].Inputs[0] != in || x.g.Nodes[q].Inputs[1] != in {
		return nil
	}
	return []int{p, q}
}

// geluTail matches the end of a GELU from t = erf(·) or tanh(·):
// Add(t, 1), then the product with x (in; "" if not known) and 0.5 in any
// order: Mul(Mul(x, a), 0.5), Mul(Mul(a, 0.5), x) or Mul(Mul(x, 0.5), a).
func (x *index) geluTail(t, in string) []int {
	add, ok := x.consumer(t, "Add", func(i int) bool { a, _, ok := x.withConst(i, 1); return ok && a == t })
	if !ok {
		return nil
	}
	nodes := []int{add}
	a := x.out(add)
	if in == "" {
		return nodes
	}
	for _, m1 := range x.consumers[a] {
		if !x.is(m1, "Mul", 2) {
			continue
		}
		o, ok := x.other(m1, a)
		if !ok || o == a {
			continue
		}
		switch {
		case o == in: // Mul(x, a) then Mul(·, 0.5)
			if m2, ok := x.consumer(x.out(m1), "Mul", func(i int) bool { _, _, ok := x.withConst(i, 0.5); return ok }); ok {
				return append(nodes, m1, m2)
			}
		case x.consts[o] && x.near(o, 0.5): // Mul(a, 0.5) then Mul(·, x)
			if m2, ok := x.consumer(x.out(m1), "Mul", func(i int) bool { o, ok := x.other(i, x.out(m1)); return ok && o == in }); ok {
				return append(nodes, m1, m2)
			}
		default: // Mul(Mul(x, 0.5), a)
			if h, ok := x.producer[o]; ok && x.is(h, "Mul", 2) {
				if act, _, ok := x.withConst(h, 0.5); ok && act == in {
					return append(nodes, h, m1)
				}
			}
		}
	}
	return nodes
}
