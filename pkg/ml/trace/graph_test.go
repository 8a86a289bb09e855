package trace_test

import (
	"math"
	"reflect"
	"sort"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// bertOpts selects the variants of a torch-style BERT layer.
type bertOpts struct {
	ln, gelu int
	distil   bool // DistilBERT/RoBERTa style: Equal/Where mask, cumsum position ids
	opset    int64
}

// bert is a built model and the values the tests look at.
type bert struct {
	*tb
	v      map[string]string // role -> value name
	lnOuts []string          // outputs of the layer normalizations
}

// Dims of the test model.
const (
	tH, tN, tD, tF = 4, 2, 2, 8
	tVocab, tPos   = 12, 16
)

// torchBERT builds an embedding layer, one BERT layer (attention with the
// mask, FFN with GELU), pooler and Gemm classifier, as torch.onnx.export
// writes them for a Hugging Face model.
func torchBERT(o bertOpts) *bert {
	if o.opset == 0 {
		o.opset = 14
	}
	b := &bert{tb: newTB(o.opset), v: map[string]string{}}
	dyn := []string{"batch_size", "sequence_length"}
	b.m.Inputs = []onnxmodel.ValueInfo{
		{Name: "input_ids", ElemType: onnxmodel.Int64, Shape: []int64{-1, -1}, DimParams: dyn},
		{Name: "attention_mask", ElemType: onnxmodel.Int64, Shape: []int64{-1, -1}, DimParams: dyn},
		// keep_initializers_as_inputs: an initializer listed as an input.
		{Name: "embeddings.word_embeddings.weight", ElemType: onnxmodel.Float, Shape: []int64{tVocab, tH}},
	}
	b.m.Outputs = []onnxmodel.ValueInfo{{Name: "logits", ElemType: onnxmodel.Float, Shape: []int64{-1, 2}, DimParams: []string{"batch_size", ""}}}
	v := b.v

	// Embeddings.
	words := b.weight("embeddings.word_embeddings.weight", tVocab, tH)
	x := b.other("Gather", words, "input_ids")
	v["word_gather"] = x
	var pos string
	if o.distil { // RoBERTa: cumsum of the non-padding mask
		ne := b.other("Not", b.other("Equal", "input_ids", b.ci(nil, 1)))
		v["not"] = ne
		p := b.op(profile.Other, "Cast", []string{ne}, intA("to", trace.TypeInt32))
		v["cast_int32"] = p
		p = b.other("CumSum", p, b.ci(nil, 1))
		v["cumsum"] = p
		p = b.op(profile.Other, "Cast", []string{p}, intA("to", onnxmodel.Int64))
		pos = b.other("Add", p, b.ci(nil, 1))
	} else { // BERT: a slice of the position_ids buffer
		ids := make([]int64, tPos)
		for i := range ids {
			ids[i] = int64(i)
		}
		b.m.Initializers = append(b.m.Initializers, onnxmodel.Tensor{Name: "embeddings.position_ids", Dims: []int64{1, tPos}, Ints: ids})
		shape := b.other("Shape", "input_ids")
		v["shape"] = shape
		seq := b.other("Gather", shape, b.ci(nil, 1))
		v["seq"] = seq
		seq = b.other("Unsqueeze", seq, b.ci([]int64{1}, 0))
		pos = b.other("Slice", "embeddings.position_ids", b.ci([]int64{1}, 0), seq, b.ci([]int64{1}, 1))
	}
	v["position_ids"] = pos
	v["position_gather"] = b.other("Gather", b.weight("embeddings.position_embeddings.weight", tPos, tH), pos)
	x = b.other("Add", x, v["position_gather"])
	x = b.layerNorm("embeddings.LayerNorm", x, tH, o.ln)
	b.lnOuts = append(b.lnOuts, x)

	// Shape subgraph: [batch, seq, heads, head dim] and [batch, seq, hidden].
	hs := b.other("Shape", x)
	dim := func(i int64) string {
		return b.other("Unsqueeze", b.other("Gather", hs, b.ci(nil, i)), b.ci([]int64{1}, 0))
	}
	bd, sd := dim(0), dim(1)
	headShape := b.op(profile.Other, "Concat", []string{bd, sd, b.ci([]int64{1}, tN), b.ci([]int64{1}, tD)}, intA("axis", 0))
	v["head_shape"] = headShape
	hiddenShape := b.op(profile.Other, "Concat", []string{bd, sd, b.ci([]int64{1}, tH)}, intA("axis", 0))

	// Attention mask.
	var mask string
	if o.distil { // (mask == 0).view(b, 1, 1, s), then masked_fill
		eq := b.other("Equal", "attention_mask", b.ci(nil, 0))
		v["equal"] = eq
		b.pre = append(b.pre, rawNode("bool_true", "Constant", "", nil, []string{"bool_true"}, tensorAttr(trace.TypeBool, nil, []byte{1})))
		v["bool_const"] = "bool_true"
		eq = b.other("And", eq, "bool_true")
		ms := b.op(profile.Other, "Concat", []string{bd, b.ci([]int64{1}, 1), b.ci([]int64{1}, 1), sd}, intA("axis", 0))
		mask = b.other("Reshape", eq, ms)
		v["bool_mask"] = mask
	} else { // (1 - mask[:, None, None, :].float()) * finfo.min
		m := b.other("Unsqueeze", "attention_mask", b.ci([]int64{1}, 1))
		m = b.other("Unsqueeze", m, b.ci([]int64{1}, 2))
		v["mask_unsqueeze"] = m
		m = b.op(profile.Other, "Cast", []string{m}, intA("to", onnxmodel.Float))
		v["mask_cast"] = m
		m = b.other("Sub", b.cf(1), m)
		mask = b.other("Mul", m, b.cf(-math.MaxFloat32))
		v["mask"] = mask
	}

	// Self-attention.
	heads := func(name string, biasFirst bool, perm ...int64) string {
		y := b.linear(name, x, tH, tH, biasFirst)
		y = b.other("Reshape", y, headShape)
		return b.op(profile.Other, "Transpose", []string{y}, ints("perm", perm...))
	}
	q := heads("attention.self.query", true, 0, 2, 1, 3)
	k := heads("attention.self.key", false, 0, 2, 3, 1)
	val := heads("attention.self.value", true, 0, 2, 1, 3)
	s := b.op(profile.Linear, "MatMul", []string{q, k})
	s = b.other("Div", s, b.cf(float32(math.Sqrt(tD))))
	if o.distil {
		s = b.other("Where", mask, b.cf(-math.MaxFloat32), s)
		v["where"] = s
	} else {
		s = b.other("Add", s, mask)
		v["masked_scores"] = s
	}
	s = b.op(profile.Softmax, "Softmax", []string{s}, intA("axis", -1))
	drop := b.opN(profile.Dropout, "Dropout", []string{s}, 2)
	v["dropout_mask"] = drop[1]
	c := b.op(profile.Linear, "MatMul", []string{drop[0], val})
	c = b.op(profile.Other, "Transpose", []string{c}, ints("perm", 0, 2, 1, 3))
	c = b.other("Reshape", c, hiddenShape)
	v["context"] = c
	a := b.linear("attention.output.dense", c, tH, tH, true)
	v["attention_out"] = a
	a = b.other("Add", a, x)
	x = b.layerNorm("attention.output.LayerNorm", a, tH, o.ln)
	b.lnOuts = append(b.lnOuts, x)

	// Feed-forward.
	f := b.linear("intermediate.dense", x, tH, tF, false)
	f = b.gelu(f, o.gelu)
	v["gelu"] = f
	f = b.linear("output.dense", f, tF, tH, true)
	v["ffn_out"] = f
	f = b.other("Add", f, x)
	x = b.layerNorm("output.LayerNorm", f, tH, o.ln)
	b.lnOuts = append(b.lnOuts, x)

	// Pooler over [CLS] and classifier.
	cls := b.op(profile.Other, "Gather", []string{x, b.ci(nil, 0)}, intA("axis", 1))
	p := b.op(profile.Linear, "Gemm", []string{cls, b.weight("pooler.dense.weight", tH, tH), b.weight("pooler.dense.bias", tH)}, intA("transB", 1))
	p = b.other("Tanh", p)
	v["pooler_tanh"] = p
	b.op(profile.Linear, "Gemm", []string{p, b.weight("classifier.weight", 2, tH), b.weight("classifier.bias", 2)}, intA("transB", 1))
	b.m.Nodes[len(b.m.Nodes)-1].Outputs[0] = "logits"
	return b
}

// expected returns the class of every node, raw nodes included.
func (b *tb) expected() []string {
	var out []string
	for range b.pre {
		out = append(out, profile.Other) // constants
	}
	return append(out, b.classes...)
}

var bertVariants = []struct {
	name string
	opts bertOpts
}{
	{"bert pow-layernorm erf-gelu", bertOpts{ln: lnPow, gelu: geluErfDiv}},
	{"bert mul-layernorm erf-gelu half first", bertOpts{ln: lnMul, gelu: geluErfHalf}},
	{"bert plain-layernorm erf-gelu half late", bertOpts{ln: lnPlain, gelu: geluErfLate}},
	{"roberta pow-layernorm tanh-gelu pow", bertOpts{ln: lnPow, gelu: geluTanhPow, distil: true}},
	{"distilbert mul-layernorm tanh-gelu torch", bertOpts{ln: lnMul, gelu: geluTanhTorch, distil: true}},
	{"opset 20 LayerNormalization Gelu", bertOpts{ln: lnOp, gelu: geluOp, opset: 20}},
	{"opset 17 LayerNormalization erf-gelu", bertOpts{ln: lnOp, gelu: geluErfDiv, opset: 17}},
}

func mustRead(t *testing.T, model []byte) *trace.Graph {
	t.Helper()
	g, err := trace.ReadGraph(model)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestClassesTorchExports(t *testing.T) {
	for _, tc := range bertVariants {
		t.Run(tc.name, func(t *testing.T) {
			b := torchBERT(tc.opts)
			g := mustRead(t, b.marshal())
			got, want := trace.Classes(g), b.expected()
			if len(got) != len(want) || len(g.Nodes) != len(want) {
				t.Fatalf("%d classes for %d nodes, want %d", len(got), len(g.Nodes), len(want))
			}
			for i, n := range g.Nodes {
				if got[i] != want[i] {
					t.Errorf("node %d %s (%s %v): class %s, want %s", i, n.Name, n.OpType, n.Inputs, got[i], want[i])
				}
			}
		})
	}
}

func TestSelectedProduction(t *testing.T) {
	for _, tc := range bertVariants {
		t.Run(tc.name, func(t *testing.T) {
			b := torchBERT(tc.opts)
			g := mustRead(t, b.marshal())
			producer := producers(g)
			var want []int
			for _, o := range append(b.lnOuts, "logits") {
				want = append(want, producer[o])
			}
			sort.Ints(want)
			got, err := trace.Selected(g, trace.Classes(g), trace.Production)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("production selects %v, want %v (the 3 layer normalizations' outputs and logits)", got, want)
			}
			for _, i := range got {
				if !g.Traceable(i) {
					t.Errorf("selected node %s is not traceable", g.Nodes[i].Name)
				}
			}
			full, err := trace.Selected(g, trace.Classes(g), trace.Full)
			if err != nil || len(full) != len(g.Nodes) {
				t.Fatalf("full selects %d of %d nodes (%v)", len(full), len(g.Nodes), err)
			}
			if _, err := trace.Selected(g, trace.Classes(g), "fast"); err == nil {
				t.Fatal("an unknown mode was accepted")
			}
		})
	}
}

// TestSelectedResidual: residual mode traces production's operators and
// what each sublayer adds to the residual stream: the two embedding
// lookups summed before the first layer normalization, the attention
// block's and the feed-forward block's outputs (the operands of the
// residual Adds that are not a layer normalization's output), never the
// residual sums themselves; the logits here are the graph output (no
// Softmax), which production already traces.
func TestSelectedResidual(t *testing.T) {
	for _, tc := range bertVariants {
		t.Run(tc.name, func(t *testing.T) {
			b := torchBERT(tc.opts)
			g := mustRead(t, b.marshal())
			producer := producers(g)
			var want []int
			for _, o := range append(b.lnOuts, "logits", b.v["word_gather"], b.v["position_gather"], b.v["attention_out"], b.v["ffn_out"]) {
				want = append(want, producer[o])
			}
			sort.Ints(want)
			got, err := trace.Selected(g, trace.Classes(g), trace.Residual)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("residual selects %v, want %v", got, want)
			}
			for _, i := range got {
				if !g.Traceable(i) {
					t.Errorf("selected node %s is not traceable", g.Nodes[i].Name)
				}
			}
		})
	}
}

// TestSelectedResidualSoftmax: when the model ends in a Softmax, residual
// mode also traces the Softmax's input (the logits); a layer
// normalization whose input is not a residual sum (here the embeddings'
// Gather directly) has that input traced.
func TestSelectedResidualSoftmax(t *testing.T) {
	n := func(op, name string, in ...string) trace.Node {
		return trace.Node{Name: name, OpType: op, Inputs: in, Outputs: []string{name + "_out"}}
	}
	g := &trace.Graph{
		Nodes: []trace.Node{
			n("Gather", "emb", "w", "ids"),
			n("LayerNormalization", "ln", "emb_out", "gamma", "beta"),
			n("MatMul", "mm", "ln_out", "wc"),
			n("Add", "bias", "mm_out", "bc"),
			n("Softmax", "sm", "bias_out"),
		},
		Initializers: map[string]int32{"w": trace.TypeFloat, "gamma": trace.TypeFloat, "beta": trace.TypeFloat, "wc": trace.TypeFloat, "bc": trace.TypeFloat},
		Outputs:      []string{"sm_out"},
	}
	classes := trace.Classes(g)
	prod, err := trace.Selected(g, classes, trace.Production)
	if err != nil || !reflect.DeepEqual(prod, []int{1, 4}) {
		t.Fatalf("production selects %v (%v), want [1 4]", prod, err)
	}
	got, err := trace.Selected(g, classes, trace.Residual)
	if err != nil || !reflect.DeepEqual(got, []int{0, 1, 3, 4}) {
		t.Fatalf("residual selects %v (%v), want [0 1 3 4]: the LayerNorm's input, its output, the logits and the probabilities", got, err)
	}
}

func TestInputsAndInitializers(t *testing.T) {
	g := mustRead(t, torchBERT(bertOpts{}).marshal())
	want := []trace.ValueInfo{
		{Name: "input_ids", ElemType: trace.TypeInt64, Dims: []int64{-1, -1}},
		{Name: "attention_mask", ElemType: trace.TypeInt64, Dims: []int64{-1, -1}},
	}
	if !reflect.DeepEqual(g.Inputs, want) {
		t.Fatalf("inputs %+v, want %+v (the initializer listed as an input excluded)", g.Inputs, want)
	}
	for name, dt := range map[string]int32{
		"embeddings.word_embeddings.weight": trace.TypeFloat,
		"embeddings.position_ids":           trace.TypeInt64,
		"classifier.bias":                   trace.TypeFloat,
	} {
		if got, ok := g.Initializers[name]; !ok || got != dt {
			t.Errorf("initializer %s: type %d (present %v), want %d", name, got, ok, dt)
		}
	}
	if _, ok := g.Initializers["input_ids"]; ok {
		t.Error("input_ids is an initializer")
	}
	if !reflect.DeepEqual(g.Outputs, []string{"logits"}) {
		t.Errorf("outputs %v", g.Outputs)
	}
	// Fixed dims are kept.
	m := onnxmodel.Model{
		Nodes:   []onnxmodel.Node{{Name: "n", OpType: "Identity", Inputs: []string{"x"}, Outputs: []string{"y"}}},
		Inputs:  []onnxmodel.ValueInfo{{Name: "x", ElemType: onnxmodel.Int64, Shape: []int64{1, 32}}},
		Outputs: []onnxmodel.ValueInfo{{Name: "y", ElemType: onnxmodel.Int64, Shape: []int64{1, 32}}},
	}
	g = mustRead(t, m.Marshal())
	if !reflect.DeepEqual(g.Inputs, []trace.ValueInfo{{Name: "x", ElemType: trace.TypeInt64, Dims: []int64{1, 32}}}) {
		t.Fatalf("inputs %+v", g.Inputs)
	}
}

func TestElemTypes(t *testing.T) {
	for _, distil := range []bool{false, true} {
		b := torchBERT(bertOpts{distil: distil})
		g := mustRead(t, b.marshal())
		want := map[string]int32{
			"input_ids": trace.TypeInt64, "attention_mask": trace.TypeInt64, "logits": trace.TypeFloat,
			"embeddings.word_embeddings.weight": trace.TypeFloat,
			b.v["word_gather"]:                  trace.TypeFloat,
			b.v["position_ids"]:                 trace.TypeInt64,
			b.v["head_shape"]:                   trace.TypeInt64,
			b.v["context"]:                      trace.TypeFloat,
			b.v["dropout_mask"]:                 trace.TypeBool,
			b.v["gelu"]:                         trace.TypeFloat,
			b.v["pooler_tanh"]:                  trace.TypeFloat,
			"no such value":                     trace.TypeUnknown,
		}
		for _, o := range b.lnOuts {
			want[o] = trace.TypeFloat
		}
		if distil {
			want[b.v["not"]] = trace.TypeBool
			want[b.v["cast_int32"]] = trace.TypeInt32
			want[b.v["cumsum"]] = trace.TypeInt32
			want[b.v["equal"]] = trace.TypeBool
			want[b.v["bool_const"]] = trace.TypeBool
			want[b.v["bool_mask"]] = trace.TypeBool
			want[b.v["where"]] = trace.TypeFloat
		} else {
			want[b.v["shape"]] = trace.TypeInt64
			want[b.v["seq"]] = trace.TypeInt64
			want[b.v["mask_unsqueeze"]] = trace.TypeInt64
			want[b.v["mask_cast"]] = trace.TypeFloat
			want[b.v["mask"]] = trace.TypeFloat
			want[b.v["masked_scores"]] = trace.TypeFloat
		}
		for value, dt := range want {
			if got := g.ElemType(value); got != dt {
				t.Errorf("distil %v: ElemType(%s) = %d, want %d", distil, value, got, dt)
			}
		}
		// Every node's first output has a known type.
		for _, n := range g.Nodes {
			if g.ElemType(n.Outputs[0]) == trace.TypeUnknown {
				t.Errorf("distil %v: %s (%s): output type unknown", distil, n.Name, n.OpType)
			}
		}
	}
}

func TestTraceable(t *testing.T) {
	b := torchBERT(bertOpts{distil: true})
	g := mustRead(t, b.marshal())
	producer := map[string]int{}
	for i, n := range g.Nodes {
		producer[n.Outputs[0]] = i
	}
	for value, want := range map[string]bool{
		b.v["word_gather"]:  true,
		b.v["gelu"]:         true,
		b.v["where"]:        true,
		b.v["context"]:      true,
		"logits":            true,
		b.v["equal"]:        false, // bool
		b.v["bool_const"]:   false, // Constant
		b.v["bool_mask"]:    false,
		b.v["cast_int32"]:   false,
		b.v["position_ids"]: false,
		b.v["head_shape"]:   false,
	} {
		if got := g.Traceable(producer[value]); got != want {
			t.Errorf("Traceable(%s) = %v, want %v", g.Nodes[producer[value]].Name, got, want)
		}
	}
	for i, n := range g.Nodes {
		if n.OpType == "Constant" && g.Traceable(i) {
			t.Errorf("Constant %s (type %d) is traceable", n.Name, g.ElemType(n.Outputs[0]))
		}
	}
	if g.Traceable(-1) || g.Traceable(len(g.Nodes)) {
		t.Error("a node out of range is traceable")
	}
}

// TestReadGraphDetails reads domains, attributes, Constant values and
// declared types (value_info wins over inference).
func TestReadGraphDetails(t *testing.T) {
	b := torchBERT(bertOpts{})
	b.post = append(b.post,
		rawNode("fused_gelu", "Gelu", "com.microsoft", []string{b.v["context"]}, []string{"fused_gelu_out"}),
		rawNode("fused_ln", "SkipLayerNormalization", "com.microsoft", []string{b.v["context"], b.lnOuts[0], "embeddings.LayerNorm.weight"}, []string{"fused_ln_out"}),
		rawNode("half_const", "Constant", "", nil, []string{"half_out"}, tensorAttr(trace.TypeFloat16, []int64{1}, []byte{0x00, 0x38})), // 0.5
	)
	model := b.marshal()
	// value_info declares the Gelu output INT32 (a lie, but declared types win).
	vi := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("fused_gelu_out"))
	tensor := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), trace.TypeInt32)
	typ := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), tensor)
	vi = protowire.AppendBytes(protowire.AppendTag(vi, 2, protowire.BytesType), typ)
	graph := protowire.AppendBytes(protowire.AppendTag(nil, 13, protowire.BytesType), vi)
	model = protowire.AppendBytes(protowire.AppendTag(model, 7, protowire.BytesType), graph)

	g := mustRead(t, model)
	classes := trace.Classes(g)
	byName := map[string]int{}
	for i, n := range g.Nodes {
		byName[n.Name] = i
	}
	gi, li, hi := byName["fused_gelu"], byName["fused_ln"], byName["half_const"]
	if n := g.Nodes[gi]; n.Domain != "com.microsoft" || classes[gi] != profile.GELU {
		t.Errorf("fused Gelu: domain %q class %s", n.Domain, classes[gi])
	}
	if classes[li] != profile.LayerNorm || g.ElemType("fused_ln_out") != trace.TypeFloat {
		t.Errorf("SkipLayerNormalization: class %s type %d", classes[li], g.ElemType("fused_ln_out"))
	}
	if got := g.ElemType("fused_gelu_out"); got != trace.TypeInt32 {
		t.Errorf("declared INT32 value inferred %d", got)
	}
	if g.Traceable(gi) {
		t.Error("a value declared INT32 is traceable")
	}
	h := g.Nodes[hi].Attrs["value"].Tensor
	if h == nil || h.DataType != trace.TypeFloat16 || !reflect.DeepEqual(h.Dims, []int64{1}) || !reflect.DeepEqual(h.Values, []float64{0.5}) {
		t.Errorf("float16 Constant value %+v", h)
	}
	if g.ElemType("half_out") != trace.TypeFloat16 || g.Traceable(hi) {
		t.Errorf("float16 Constant: type %d", g.ElemType("half_out"))
	}
	// Attributes.
	for i, n := range g.Nodes {
		switch n.OpType {
		case "Cast":
			if a := n.Attrs["to"]; !a.HasInt || a.Int != trace.TypeFloat {
				t.Errorf("Cast %s: to %+v", n.Name, a)
			}
		case "Softmax":
			if a := n.Attrs["axis"]; !a.HasInt || a.Int != -1 {
				t.Errorf("Softmax axis %+v", a)
			}
		case "ReduceMean":
			if a := n.Attrs["axes"]; !reflect.DeepEqual(a.Ints, []int64{-1}) {
				t.Errorf("ReduceMean axes %+v", a)
			}
		case "Constant":
			if a := n.Attrs["value"]; a.Tensor == nil || len(a.Tensor.Values) != 1 && i != byName["half_const"] && len(a.Tensor.Dims) == 0 {
				t.Errorf("Constant %s: value %+v", n.Name, a.Tensor)
			}
		}
	}
}

// TestElemTypeRules checks operators a hand-built graph does not read from
// a file: the rules of inference.
func TestElemTypeRules(t *testing.T) {
	n := func(op string, in []string, out string, attrs map[string]trace.Attr) trace.Node {
		return trace.Node{Name: out, OpType: op, Inputs: in, Outputs: []string{out}, Attrs: attrs}
	}
	g := &trace.Graph{
		Inputs:       []trace.ValueInfo{{Name: "ids", ElemType: trace.TypeInt64}, {Name: "x", ElemType: trace.TypeFloat}, {Name: "h", ElemType: trace.TypeFloat16}},
		Initializers: map[string]int32{"w": trace.TypeFloat, "idx": trace.TypeInt64},
		Nodes: []trace.Node{
			n("Gather", []string{"unknown", "idx"}, "gather_unknown", nil), // data type unknown: not the indices'
			n("Cast", []string{"ids"}, "cast_double", map[string]trace.Attr{"to": {Int: trace.TypeDouble, HasInt: true}}),
			n("ConstantOfShape", []string{"shape"}, "cos_default", nil),
			n("ConstantOfShape", []string{"shape"}, "cos_int", map[string]trace.Attr{"value": {Tensor: &trace.TensorInfo{DataType: trace.TypeInt64}}}),
			n("Constant", nil, "const_f", map[string]trace.Attr{"value_float": {Float: 1, HasFloat: true}}),
			n("Constant", nil, "const_ints", map[string]trace.Attr{"value_ints": {Ints: []int64{1}}}),
			n("Range", []string{"start", "limit", "delta"}, "range_unknown", nil),
			n("Range", []string{"const_ints", "limit", "delta"}, "range", nil),
			n("Add", []string{"unknown", "x"}, "add", nil),
			n("Where", []string{"cond", "unknown", "x"}, "where", nil),
			n("ArgMax", []string{"x"}, "argmax", nil),
			n("IsNaN", []string{"x"}, "isnan", nil),
			n("Size", []string{"x"}, "size", nil),
			n("MatMul", []string{"h", "h"}, "matmul_half", nil),
			n("Erf", []string{"x"}, "erf", nil),
			n("FastGelu", []string{"unknown"}, "fastgelu", nil),
			n("Attention", []string{"x", "w"}, "attention", nil),
			n("SomeCustomOp", []string{"h"}, "custom", nil),
			n("If", []string{"cond"}, "if", nil),
			n("Identity", []string{"later"}, "before", nil), // not in topological order
			n("Relu", []string{"x"}, "later", nil),
			n("Constant", nil, "const_tensor", map[string]trace.Attr{"value": {Tensor: &trace.TensorInfo{DataType: trace.TypeBool}}}),
		},
	}
	for value, want := range map[string]int32{
		"gather_unknown": 0, "cast_double": trace.TypeDouble, "cos_default": trace.TypeFloat, "cos_int": trace.TypeInt64,
		"const_f": trace.TypeFloat, "const_ints": trace.TypeInt64, "range_unknown": 0, "range": trace.TypeInt64,
		"add": trace.TypeFloat, "where": trace.TypeFloat, "argmax": trace.TypeInt64, "isnan": trace.TypeBool,
		"size": trace.TypeInt64, "matmul_half": trace.TypeFloat16, "erf": trace.TypeFloat, "fastgelu": trace.TypeFloat,
		"attention": trace.TypeFloat, "custom": trace.TypeFloat16, "if": 0, "before": trace.TypeFloat,
		"const_tensor": trace.TypeBool, "w": trace.TypeFloat, "ids": trace.TypeInt64,
	} {
		if got := g.ElemType(value); got != want {
			t.Errorf("ElemType(%s) = %d, want %d", value, got, want)
		}
	}
}

// TestClassesHandBuilt covers fused operators and what must stay Other.
func TestClassesHandBuilt(t *testing.T) {
	n := func(op, domain string, in ...string) trace.Node {
		return trace.Node{OpType: op, Domain: domain, Inputs: in, Outputs: []string{op + "_" + in[0] + "_out"}}
	}
	tests := []struct {
		name  string
		init  []string
		nodes []trace.Node
		want  []string
	}{
		{"fused contrib ops", []string{"w", "b"},
			[]trace.Node{n("FastGelu", "com.microsoft", "x", "b"), n("BiasGelu", "com.microsoft", "x", "b"), n("Gelu", "", "x"),
				n("SkipLayerNormalization", "com.microsoft", "x", "y", "w"), n("LayerNormalization", "", "x", "w"), n("Dropout", "", "x")},
			[]string{profile.GELU, profile.GELU, profile.GELU, profile.LayerNorm, profile.LayerNorm, profile.Dropout}},
		{"Add of two activations after a MatMul stays Other", []string{"w"},
			[]trace.Node{n("MatMul", "", "x", "w"), n("Add", "", "MatMul_x_out", "mask")},
			[]string{profile.Linear, profile.Other}},
		{"bias Add of a Gemm, bias first", []string{"w", "b"},
			[]trace.Node{n("Gemm", "", "x", "w"), n("Add", "", "b", "Gemm_x_out")},
			[]string{profile.Linear, profile.Linear}},
		{"lone Tanh, Pow, Sub and ReduceMean stay Other", []string{"two"},
			[]trace.Node{n("Tanh", "", "x"), n("Pow", "", "x", "two"), n("ReduceMean", "", "x"), n("Sub", "", "x", "ReduceMean_x_out")},
			[]string{profile.Other, profile.Other, profile.Other, profile.Other}},
		{"Erf alone is GELU", nil,
			[]trace.Node{n("Erf", "", "x")},
			[]string{profile.GELU}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &trace.Graph{Nodes: tc.nodes, Initializers: map[string]int32{}}
			for _, i := range tc.init {
				g.Initializers[i] = trace.TypeFloat
			}
			if got := trace.Classes(g); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("classes %v, want %v", got, tc.want)
			}
		})
	}
}

// legacyClasses is Classes as it was for generated graphs only.
func legacyClasses(g *trace.Graph) []string {
	producer := producers(g)
	classes := make([]string, len(g.Nodes))
	fromOp := func(in string, ops ...string) bool {
		i, ok := producer[in]
		return ok && (g.Nodes[i].OpType == ops[0] || len(ops) > 1 && g.Nodes[i].OpType == ops[1])
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

// TestGeneratedGraphUnchanged: the generated (bert style) graph keeps its
// classes and production selection.
func TestGeneratedGraphUnchanged(t *testing.T) {
	for _, cfg := range []modelgen.Config{{}, {Layers: 3, Hidden: 32, Heads: 2, SeqLen: 16, Classes: 3}} {
		model, _, err := modelgen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		g := mustRead(t, model)
		classes := trace.Classes(g)
		if want := legacyClasses(g); !reflect.DeepEqual(classes, want) {
			for i := range classes {
				if classes[i] != want[i] {
					t.Errorf("%s: %s, was %s", g.Nodes[i].Name, classes[i], want[i])
				}
			}
		}
		sel, err := trace.Selected(g, classes, trace.Production)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for i, n := range g.Nodes {
			if n.OpType == "LayerNormalization" || n.Outputs[0] == g.Outputs[0] {
				want = append(want, i)
			}
		}
		layers := cfg.WithDefaults().Layers
		if !reflect.DeepEqual(sel, want) || len(sel) != 2*layers+2 {
			t.Fatalf("production selects %v, want %v", sel, want)
		}
	}
}

// TestTorchStyleGenerated: modelgen's torch style (a DistilBERT export)
// has a layer normalization per embedding and sublayer, GELUs, and its
// production trace is their outputs and the logits.
func TestTorchStyleGenerated(t *testing.T) {
	cfg := modelgen.Config{Style: modelgen.StyleTorch}
	model, _, err := modelgen.Generate(cfg)
	if err != nil {
		t.Skip(err)
	}
	g := mustRead(t, model)
	classes := trace.Classes(g)
	count := map[string]int{}
	for _, c := range classes {
		count[c]++
	}
	for _, c := range []string{profile.Linear, profile.LayerNorm, profile.GELU, profile.Softmax} {
		if count[c] == 0 {
			t.Errorf("no %s node: %v", c, count)
		}
	}
	sel, err := trace.Selected(g, classes, trace.Production)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*cfg.WithDefaults().Layers + 2; len(sel) != want {
		t.Errorf("production selects %d nodes, want %d", len(sel), want)
	}
	for _, i := range sel {
		if !g.Traceable(i) {
			t.Errorf("selected %s is not traceable", g.Nodes[i].Name)
		}
	}
}

// FuzzReadGraph: ReadGraph never panics, nor do Classes, Selected,
// ElemType and Traceable on what it returns.
func FuzzReadGraph(f *testing.F) {
	// Small seeds only (a generated model's embedding table is hundreds of
	// KB, which stalls minimisation): the torch-style graphs.
	for _, tc := range bertVariants {
		f.Add(torchBERT(tc.opts).marshal())
	}
	b := torchBERT(bertOpts{distil: true})
	b.post = append(b.post, rawNode("c", "Constant", "com.microsoft", nil, []string{"c"}, tensorAttr(trace.TypeFloat16, []int64{2}, []byte{0, 0x38})))
	f.Add(b.marshal())
	f.Add([]byte{})
	f.Add([]byte{0x3a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := trace.ReadGraph(data)
		if err != nil {
			return
		}
		classes := trace.Classes(g)
		if len(classes) != len(g.Nodes) {
			t.Fatalf("%d classes for %d nodes", len(classes), len(g.Nodes))
		}
		for _, mode := range trace.Modes() {
			if _, err := trace.Selected(g, classes, mode); err != nil {
				t.Fatal(err)
			}
		}
		for i, n := range g.Nodes {
			g.Traceable(i)
			for _, v := range append(n.Inputs, n.Outputs...) {
				g.ElemType(v)
			}
		}
		trace.WithOutputs(data, g, g.Outputs)
	})
}

// producers maps each value of g to the index of the node producing it.
func producers(g *trace.Graph) map[string]int {
	producer := map[string]int{}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			producer[o] = i
		}
	}
	return producer
}
