package docs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// graphBuilder writes small hand-made graphs for the selection rules.
type graphBuilder struct{ m onnxmodel.Model }

func (b *graphBuilder) node(op, name string, inputs []string, outputs ...string) {
	b.m.Nodes = append(b.m.Nodes, onnxmodel.Node{Name: name, OpType: op, Inputs: inputs, Outputs: outputs})
}

func (b *graphBuilder) attr(name string, a onnxmodel.Attr) {
	n := &b.m.Nodes[len(b.m.Nodes)-1]
	a.Name = name
	n.Attrs = append(n.Attrs, a)
}

func (b *graphBuilder) init(name string, dims []int64, v ...float32) {
	if len(v) == 0 {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		v = make([]float32, n)
		for i := range v {
			v[i] = 0.01 * float32(i%7+1)
		}
	}
	b.m.Initializers = append(b.m.Initializers, onnxmodel.Tensor{Name: name, Dims: dims, Floats: v})
}

func (b *graphBuilder) scalar(name string, v float32) { b.init(name, []int64{1}, v) }

func (b *graphBuilder) constNode(name string, v float32) {
	b.node("Constant", name, nil, name)
	b.attr("value", onnxmodel.Attr{Tensor: &onnxmodel.Tensor{Name: name, Dims: []int64{1}, Floats: []float32{v}}})
}

// decomposedLN writes ReduceMean → Sub → (Pow(2) | Mul(d,d)) → ReduceMean →
// Add(ε) → Sqrt → (Div | Reciprocal+Mul) [→ Mul(γ) → Add(β)] on x, returns
// the last value.
func (b *graphBuilder) decomposedLN(p, x string, mulSquare, reciprocal, affine bool) string {
	b.node("ReduceMean", p+"mean", []string{x}, p+"mean")
	b.attr("axes", onnxmodel.Attr{Ints: []int64{-1}})
	b.node("Sub", p+"sub", []string{x, p + "mean"}, p+"d")
	if mulSquare {
		b.node("Mul", p+"sq", []string{p + "d", p + "d"}, p+"sq")
	} else {
		b.constNode(p+"two", 2)
		b.node("Pow", p+"sq", []string{p + "d", p + "two"}, p+"sq")
	}
	b.node("ReduceMean", p+"var", []string{p + "sq"}, p+"var")
	b.attr("axes", onnxmodel.Attr{Ints: []int64{-1}})
	b.scalar(p+"eps", 1e-12)
	b.node("Add", p+"addeps", []string{p + "var", p + "eps"}, p+"ve")
	b.node("Sqrt", p+"sqrt", []string{p + "ve"}, p+"std")
	if reciprocal {
		b.node("Reciprocal", p+"recip", []string{p + "std"}, p+"inv")
		b.node("Mul", p+"norm", []string{p + "inv", p + "d"}, p+"norm")
	} else {
		b.node("Div", p+"norm", []string{p + "d", p + "std"}, p+"norm")
	}
	if !affine {
		return p + "norm"
	}
	b.init(p+"gamma", []int64{8})
	b.init(p+"beta", []int64{8})
	b.node("Mul", p+"gammamul", []string{p + "gamma", p + "norm"}, p+"scaled")
	b.node("Add", p+"betaadd", []string{p + "scaled", p + "beta"}, p+"out")
	return p + "out"
}

func (b *graphBuilder) layerNorm(name, x string) string {
	b.init(name+"_g", []int64{8})
	b.init(name+"_b", []int64{8})
	b.node("LayerNormalization", name, []string{x, name + "_g", name + "_b"}, name+"_out")
	b.attr("axis", onnxmodel.Attr{Int: ptr[int64](-1)})
	return name + "_out"
}

func (b *graphBuilder) linear(name, x string, biasFirst bool) string {
	b.init(name+"_w", []int64{8, 8})
	b.init(name+"_bias", []int64{8})
	b.node("MatMul", name+"_mm", []string{x, name + "_w"}, name+"_mm")
	in := []string{name + "_mm", name + "_bias"}
	if biasFirst {
		in = []string{name + "_bias", name + "_mm"}
	}
	b.node("Add", name+"_add", in, name+"_y")
	return name + "_y"
}

func ptr[T any](v T) *T { return &v }

func (b *graphBuilder) io(out ...string) {
	b.m.Inputs = []onnxmodel.ValueInfo{{Name: "x", ElemType: onnxmodel.Float, Shape: []int64{1, 4, 8}}}
	for _, o := range out {
		b.m.Outputs = append(b.m.Outputs, onnxmodel.ValueInfo{Name: o, ElemType: onnxmodel.Float, Shape: []int64{1, 4, 8}})
	}
}

// selectionCase is a hand-made graph and what BOUNDED.md's rules select in
// it, by node name (each node's name is its first output's).
type selectionCase struct {
	name  string
	build func(b *graphBuilder)
	// classes of some nodes, and the production and residual selections.
	classes              map[string]string
	production, residual []string
}

// TestSecondImplTraceSelectionRules: on hand-made graphs that exercise each
// rule of BOUNDED.md's node selection the generated models do not (the
// decomposed LayerNorm's alternatives, the GELU orders, a LayerNorm feeding
// only LayerNorm, residual operands that are a LayerNorm's, a second
// output's or a constant, a final Softmax fed by a LayerNorm, element types
// through Where and unknown operators), svc (trace.Classes,
// trace.Selected, Graph.Traceable) and the second implementation
// (testdata/secondimpl/onnxsel.py) both select what the docs say.
func TestSecondImplTraceSelectionRules(t *testing.T) {
	py := python3(t)
	cases := []selectionCase{{
		name: "decomposed LayerNorm: Mul(d,d), no γ/β, Reciprocal",
		build: func(b *graphBuilder) {
			y := b.linear("l1", "x", true)
			b.node("Add", "res1", []string{"x", y}, "res1")
			n1 := b.decomposedLN("a_", "res1", true, false, false)
			y2 := b.linear("l2", n1, false)
			b.node("Add", "res2", []string{n1, y2}, "res2")
			n2 := b.decomposedLN("b_", "res2", false, true, true)
			b.node("Relu", "out", []string{n2}, "out")
			b.io("out")
		},
		classes: map[string]string{"l1_add": "Linear", "l2_add": "Linear", "res1": "Other", "a_sq": "LayerNorm",
			"a_norm": "LayerNorm", "b_recip": "LayerNorm", "b_norm": "LayerNorm", "b_gammamul": "LayerNorm",
			"b_betaadd": "LayerNorm", "a_two": "Other", "out": "Other"},
		production: []string{"a_norm", "b_betaadd", "out"},
		// res1's operands: x (a graph input, no producer) and l1_add; res2's: a_norm (LayerNorm) and l2_add.
		residual: []string{"l1_add", "a_norm", "l2_add", "b_betaadd", "out"},
	}, {
		name: "γ Mul not the normalised value's only consumer",
		build: func(b *graphBuilder) {
			n := b.decomposedLN("c_", "x", false, false, true)
			// a second consumer of c_norm: the Mul(γ) and Add(β) are not LayerNorm
			b.node("Relu", "side", []string{"c_norm"}, "side")
			b.node("Add", "out", []string{n, "side"}, "out")
			b.io("out")
		},
		classes:    map[string]string{"c_norm": "LayerNorm", "c_gammamul": "Other", "c_betaadd": "Other", "c_mean": "LayerNorm"},
		production: []string{"c_norm", "out"},
		residual:   []string{"c_norm", "out"},
	}, {
		name: "LayerNorm chain, dead LayerNorm, second outputs, Dropout, constants",
		build: func(b *graphBuilder) {
			n1 := b.layerNorm("ln1", "x")
			n2 := b.layerNorm("ln2", n1) // ln1 feeds only a LayerNorm: not production's
			b.layerNorm("dead", "x")     // feeds nothing, not an output
			b.node("Split", "split", []string{n2}, "s0", "s1")
			b.attr("axis", onnxmodel.Attr{Int: ptr[int64](-1)})
			b.node("Concat", "cat", []string{"s0", "s1"}, "cat")
			b.attr("axis", onnxmodel.Attr{Int: ptr[int64](-1)})
			b.node("Dropout", "drop", []string{"cat"}, "drop")
			b.node("Add", "sum", []string{"s1", "drop"}, "sum") // s1 is split's second output
			n3 := b.layerNorm("ln3", "sum")
			b.init("k", []int64{8})
			b.node("Cast", "kc", []string{"k"}, "kc") // a constant: never traced
			b.attr("to", onnxmodel.Attr{Int: ptr[int64](1)})
			n4 := b.layerNorm("ln4", "kc")
			b.node("Sub", "diff", []string{n3, n4}, "diff")
			n5 := b.layerNorm("ln5", "diff") // from a Sub: the Sub itself
			b.io(n5)
		},
		classes:    map[string]string{"drop": "Dropout", "sum": "Other", "ln1": "LayerNorm", "kc": "Other"},
		production: []string{"ln2", "ln3", "ln5"},
		// ln4 reads a constant and computes one: not traced in any mode.
		residual: []string{"ln2", "drop", "ln3", "diff", "ln5"},
	}, {
		name: "GELU orders, a lone Erf, tanh GELUs and a pooler Tanh",
		build: func(b *graphBuilder) {
			b.scalar("sqrt2", float32(math.Sqrt2))
			b.scalar("isqrt2", float32(1/math.Sqrt2))
			b.scalar("one", 1)
			b.scalar("half", 0.5)
			// (x·(1+e))·0.5, Div by √2
			b.node("Div", "g1_div", []string{"x", "sqrt2"}, "g1_div")
			b.node("Erf", "g1_erf", []string{"g1_div"}, "g1_erf")
			b.node("Add", "g1_add", []string{"g1_erf", "one"}, "g1_add")
			b.node("Mul", "g1_m1", []string{"x", "g1_add"}, "g1_m1")
			b.node("Mul", "g1_m2", []string{"g1_m1", "half"}, "g1_m2")
			// ((1+e)·0.5)·x, Mul by 1/√2
			b.node("Mul", "g2_div", []string{"isqrt2", "g1_m2"}, "g2_div")
			b.node("Erf", "g2_erf", []string{"g2_div"}, "g2_erf")
			b.node("Add", "g2_add", []string{"one", "g2_erf"}, "g2_add")
			b.node("Mul", "g2_m1", []string{"g2_add", "half"}, "g2_m1")
			b.node("Mul", "g2_m2", []string{"g1_m2", "g2_m1"}, "g2_m2")
			// (x·0.5)·(1+e)
			b.node("Div", "g3_div", []string{"g2_m2", "sqrt2"}, "g3_div")
			b.node("Erf", "g3_erf", []string{"g3_div"}, "g3_erf")
			b.node("Add", "g3_add", []string{"g3_erf", "one"}, "g3_add")
			b.node("Mul", "g3_h", []string{"g2_m2", "half"}, "g3_h")
			b.node("Mul", "g3_m", []string{"g3_h", "g3_add"}, "g3_m")
			// a lone Erf (still GELU), its Add(1) too
			b.node("Erf", "lone_erf", []string{"g3_m"}, "lone_erf")
			b.node("Add", "lone_add", []string{"lone_erf", "one"}, "lone_add")
			// tanh GELU with Pow(x, 3)
			b.scalar("three", 3)
			b.scalar("c044", 0.044715)
			b.scalar("s2pi", float32(math.Sqrt(2/math.Pi)))
			b.node("Pow", "t1_cube", []string{"lone_add", "three"}, "t1_cube")
			b.node("Mul", "t1_cubic", []string{"c044", "t1_cube"}, "t1_cubic")
			b.node("Add", "t1_sum", []string{"t1_cubic", "lone_add"}, "t1_sum")
			b.node("Mul", "t1_scale", []string{"t1_sum", "s2pi"}, "t1_scale")
			b.node("Tanh", "t1_tanh", []string{"t1_scale"}, "t1_tanh")
			b.node("Add", "t1_add", []string{"t1_tanh", "one"}, "t1_add")
			b.node("Mul", "t1_m1", []string{"lone_add", "t1_add"}, "t1_m1")
			b.node("Mul", "t1_m2", []string{"t1_m1", "half"}, "t1_m2")
			// tanh GELU with x·(x·x) and no tail
			b.node("Mul", "t2_sq", []string{"t1_m2", "t1_m2"}, "t2_sq")
			b.node("Mul", "t2_cube", []string{"t2_sq", "t1_m2"}, "t2_cube")
			b.node("Mul", "t2_cubic", []string{"t2_cube", "c044"}, "t2_cubic")
			b.node("Add", "t2_sum", []string{"t1_m2", "t2_cubic"}, "t2_sum")
			b.node("Mul", "t2_scale", []string{"s2pi", "t2_sum"}, "t2_scale")
			b.node("Tanh", "t2_tanh", []string{"t2_scale"}, "t2_tanh")
			// a pooler's Tanh
			b.node("Tanh", "pool", []string{"t2_tanh"}, "pool")
			b.io("pool")
		},
		classes: map[string]string{
			"g1_div": "GELU", "g1_erf": "GELU", "g1_add": "GELU", "g1_m1": "GELU", "g1_m2": "GELU",
			"g2_div": "GELU", "g2_erf": "GELU", "g2_add": "GELU", "g2_m1": "GELU", "g2_m2": "GELU",
			"g3_div": "GELU", "g3_erf": "GELU", "g3_add": "GELU", "g3_h": "GELU", "g3_m": "GELU",
			"lone_erf": "GELU", "lone_add": "GELU",
			"t1_cube": "GELU", "t1_cubic": "GELU", "t1_sum": "GELU", "t1_scale": "GELU", "t1_tanh": "GELU",
			"t1_add": "GELU", "t1_m1": "GELU", "t1_m2": "GELU",
			"t2_sq": "GELU", "t2_cube": "GELU", "t2_cubic": "GELU", "t2_sum": "GELU", "t2_scale": "GELU", "t2_tanh": "GELU",
			"pool": "Other",
		},
		production: []string{"pool"},
		residual:   []string{"pool"},
	}, {
		name: "final Softmax fed by a LayerNorm; Softmax on the second output; types",
		build: func(b *graphBuilder) {
			b.node("Greater", "mask", []string{"x", "x"}, "mask")
			b.node("Where", "where", []string{"mask", "x", "x"}, "where") // FLOAT: input 1's
			b.node("Shape", "shape", []string{"x"}, "shape")
			b.node("MyOp", "custom", []string{"shape", "where"}, "custom") // unknown: input 0's (INT64)
			b.node("Cast", "castf", []string{"custom"}, "castf")           // FLOAT, not constant
			b.attr("to", onnxmodel.Attr{Int: ptr[int64](1)})
			b.node("Add", "sum", []string{"castf", "where"}, "sum")
			n := b.layerNorm("ln", "sum")
			b.node("Softmax", "probs", []string{n}, "probs")
			b.node("Softmax", "other_probs", []string{"where"}, "other_probs")
			b.io("probs", "other_probs")
		},
		classes:    map[string]string{"where": "Other", "custom": "Other", "ln": "LayerNorm", "probs": "Softmax"},
		production: []string{"ln", "probs"},
		// sum's operands: castf and where; the Softmax's input is a LayerNorm's (not added again)
		residual: []string{"where", "castf", "ln", "probs"},
	}}

	dir := t.TempDir()
	var paths []string
	for i, c := range cases {
		b := &graphBuilder{m: onnxmodel.Model{Name: "rules"}}
		c.build(b)
		p := filepath.Join(dir, string(rune('a'+i))+".onnx")
		if err := os.WriteFile(p, b.m.Marshal(), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out := selectBatch(t, py, paths)
	var sels []pySelection
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var s pySelection
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		sels = append(sels, s)
	}
	if len(sels) != len(cases) {
		t.Fatalf("onnxsel.py answered %d of %d", len(sels), len(cases))
	}
	for k, c := range cases {
		s := sels[k]
		if s.Error != "" {
			t.Errorf("%s: second implementation: %s", c.name, s.Error)
			continue
		}
		g, err := trace.ReadGraph(mustRead(t, paths[k]))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		names := func(idx []int) []string {
			var out []string
			for _, i := range idx {
				out = append(out, g.Nodes[i].Name)
			}
			return out
		}
		classes := trace.Classes(g)
		for i, n := range g.Nodes {
			if want, ok := c.classes[n.Name]; ok && (classes[i] != want || s.Classes[i] != want) {
				t.Errorf("%s: node %s: the docs say %s; trace.Classes %s, second implementation %s", c.name, n.Name, want, classes[i], s.Classes[i])
			} else if classes[i] != s.Classes[i] {
				t.Errorf("%s: node %s: trace.Classes %s, second implementation %s", c.name, n.Name, classes[i], s.Classes[i])
			}
		}
		for _, m := range []struct {
			mode string
			py   []int
			want []string
		}{{trace.Production, s.Production, c.production}, {trace.Residual, s.Residual, c.residual}} {
			all, err := trace.Selected(g, classes, m.mode)
			if err != nil {
				t.Fatal(err)
			}
			sel := slices.DeleteFunc(all, func(i int) bool { return !g.Traceable(i) })
			if got, gotPy := names(sel), names(m.py); !slices.Equal(got, m.want) || !slices.Equal(gotPy, m.want) {
				t.Errorf("%s, %s mode: the docs say %v\ntrace.Selected     %v\nsecond implementation %v", c.name, m.mode, m.want, got, gotPy)
			}
		}
	}
}
