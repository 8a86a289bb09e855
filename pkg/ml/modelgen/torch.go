package modelgen

import (
	"fmt"
	"math"
	"strconv"

	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
)

// Symbolic dimension names of the torch style's inputs and output, as the
// dynamic_axes of a typical Hugging Face export name them.
const (
	BatchDim    = "batch_size"
	SequenceDim = "sequence_length"
)

// maskFill is torch.finfo(torch.float32).min, what Hugging Face multiplies
// (1 - attention_mask) by before adding it to the attention scores.
const maskFill = -math.MaxFloat32

// op adds a node named as torch.onnx.export names them: scope/OpType for
// the first node of that type in scope, then scope/OpType_1, ... Its
// output is name+"_output_0".
func (b *builder) op(scope, opType string, inputs []string, attrs ...onnxmodel.Attr) string {
	key := scope + "/" + opType
	name := key
	if n := b.counts[key]; n > 0 {
		name += "_" + strconv.Itoa(n)
	}
	b.counts[key]++
	return b.node(name, opType, inputs, attrs)
}

// constant adds a Constant node in scope holding t and returns its output.
func (b *builder) constant(scope string, t onnxmodel.Tensor) string {
	return b.op(scope, "Constant", nil, onnxmodel.Attr{Name: "value", Tensor: &t})
}

// constInts adds an int64 Constant: a scalar when dims is nil.
func (b *builder) constInts(scope string, dims []int64, v ...int64) string {
	return b.constant(scope, onnxmodel.Tensor{Dims: dims, Ints: v})
}

// constFloat adds a float scalar Constant.
func (b *builder) constFloat(scope string, v float32) string {
	return b.constant(scope, onnxmodel.Tensor{Floats: []float32{v}})
}

// normals claims name and draws the values of an initializer of shape
// dims: normal(0, 1)*0.02, in row-major order.
func (b *builder) normals(name string, dims []int64) []float32 {
	b.unique(name)
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(b.rng.NormFloat64() * 0.02)
	}
	return f
}

// normal adds a float32 initializer of normal(0, 1)*0.02 values.
func (b *builder) normal(name string, dims ...int64) string {
	f := b.normals(name, dims)
	if b.varies() {
		f = b.vary(f)
	}
	b.m.Initializers = append(b.m.Initializers, onnxmodel.Tensor{Name: name, Dims: dims, Floats: f})
	return name
}

// linear adds a torch nn.Linear on a 3-D input, as exported: the weight,
// transposed to [in, out], is an initializer named onnx::MatMul_<n> (here
// float16, cast to float in scope/Cast), then scope/MatMul and
// scope/Add(bias, x) with the bias first. param is the module's state-dict
// prefix (for the bias's name).
func (b *builder) linear(scope, param, x string, in, out int64) string {
	b.matmuls++
	w := b.random(fmt.Sprintf("onnx::MatMul_%d", b.matmuls), in, out)
	w = b.op(scope, "Cast", []string{w}, intAttr("to", onnxmodel.Float))
	bias := b.normal(param+".bias", out)
	y := b.op(scope, "MatMul", []string{x, w})
	return b.op(scope, "Add", []string{bias, y})
}

// gemm adds a torch nn.Linear on a 2-D input, as exported: one Gemm with
// the [out, in] weight and transB=1.
func (b *builder) gemm(scope, param, x string, in, out int64, output ...string) string {
	w := b.normal(param+".weight", out, in)
	bias := b.normal(param+".bias", out)
	attrs := []onnxmodel.Attr{floatAttr("alpha", 1), floatAttr("beta", 1), intAttr("transB", 1)}
	if len(output) > 0 {
		b.counts[scope+"/Gemm"]++
		return b.node(scope+"/Gemm", "Gemm", []string{x, w, bias}, attrs, output[0])
	}
	return b.op(scope, "Gemm", []string{x, w, bias}, attrs...)
}

// torchLayerNorm adds nn.LayerNorm as torch exports it below opset 17.
func (b *builder) torchLayerNorm(scope, param, x string, hidden int64) string {
	gamma := b.floats(param+".weight", 1, hidden)
	beta := b.floats(param+".bias", 0, hidden)
	axes := intsAttr("axes", -1)
	keep := intAttr("keepdims", 1)
	mean := b.op(scope, "ReduceMean", []string{x}, axes, keep)
	d := b.op(scope, "Sub", []string{x, mean})
	sq := b.op(scope, "Pow", []string{d, b.constFloat(scope, 2)})
	v := b.op(scope, "ReduceMean", []string{sq}, axes, keep)
	v = b.op(scope, "Add", []string{v, b.constFloat(scope, 1e-12)})
	s := b.op(scope, "Sqrt", []string{v})
	n := b.op(scope, "Div", []string{d, s})
	n = b.op(scope, "Mul", []string{n, gamma})
	return b.op(scope, "Add", []string{n, beta})
}

// gelu adds torch's exact GELU as exported below opset 20:
// x * (1 + erf(x / sqrt 2)) * 0.5.
func (b *builder) gelu(scope, x string) string {
	g := b.op(scope, "Div", []string{x, b.constFloat(scope, float32(math.Sqrt2))})
	g = b.op(scope, "Erf", []string{g})
	g = b.op(scope, "Add", []string{g, b.constFloat(scope, 1)})
	g = b.op(scope, "Mul", []string{x, g})
	return b.op(scope, "Mul", []string{g, b.constFloat(scope, 0.5)})
}

// buildTorch builds the graph of a torch.onnx.export (opset 14, dynamic
// batch and sequence axes) of a Hugging Face
// DistilBertForSequenceClassification, with BERT's additive attention
// mask.
func (b *builder) buildTorch(c Config) {
	S, H, N := int64(c.SeqLen), int64(c.Hidden), int64(c.Heads)
	D := H / N
	C := int64(c.Classes)
	dyn := []string{BatchDim, SequenceDim}
	b.m = onnxmodel.Model{
		Name:  "main_graph",
		Opset: 14,
		Inputs: []onnxmodel.ValueInfo{
			{Name: InputName, ElemType: onnxmodel.Int64, Shape: []int64{-1, -1}, DimParams: dyn},
			{Name: MaskName, ElemType: onnxmodel.Int64, Shape: []int64{-1, -1}, DimParams: dyn},
		},
		Outputs: []onnxmodel.ValueInfo{{Name: LogitsName, ElemType: onnxmodel.Float, Shape: []int64{-1, C}, DimParams: []string{BatchDim}}},
	}
	b.unique(InputName)
	b.unique(MaskName)

	// Extended attention mask: (1 - mask[:, None, None, :]) * finfo.min,
	// [batch, 1, 1, seq], added to every layer's scores.
	const top = "/distilbert"
	m := b.op(top, "Unsqueeze", []string{MaskName, b.constInts(top, []int64{2}, 1, 2)})
	m = b.op(top, "Cast", []string{m}, intAttr("to", onnxmodel.Float))
	m = b.op(top, "Sub", []string{b.constFloat(top, 1), m})
	mask := b.op(top, "Mul", []string{m, b.constFloat(top, maskFill)})

	// Embeddings: words + positions[:, :seq], LayerNorm.
	const emb = "/distilbert/embeddings"
	words := b.normal("distilbert.embeddings.word_embeddings.weight", int64(c.Vocab), H)
	positions := b.normal("distilbert.embeddings.position_embeddings.weight", S, H)
	ids := make([]int64, S)
	for i := range ids {
		ids[i] = int64(i)
	}
	posIDs := b.ints("distilbert.embeddings.position_ids", []int64{1, S}, ids...)
	shape := b.op(emb, "Shape", []string{InputName})
	seq := b.op(emb, "Gather", []string{shape, b.constInts(emb, nil, 1)}, intAttr("axis", 0))
	seq = b.op(emb, "Unsqueeze", []string{seq, b.constInts(emb, []int64{1}, 0)})
	pos := b.op(emb, "Slice", []string{posIDs, b.constInts(emb, []int64{1}, 0), seq,
		b.constInts(emb, []int64{1}, 1), b.constInts(emb, []int64{1}, 1)})
	we := b.op(emb+"/word_embeddings", "Gather", []string{words, InputName})
	pe := b.op(emb+"/position_embeddings", "Gather", []string{positions, pos})
	x := b.op(emb, "Add", []string{we, pe})
	x = b.torchLayerNorm(emb+"/LayerNorm", "distilbert.embeddings.LayerNorm", x, H)

	for l := 0; l < c.Layers; l++ {
		b.layer = l
		scope := fmt.Sprintf("/distilbert/transformer/layer.%d", l)
		param := fmt.Sprintf("distilbert.transformer.layer.%d", l)
		att, attParam := scope+"/attention", param+".attention"

		// bs = query.size(0); view(bs, -1, heads, dim_per_head)
		bs := b.op(att, "Shape", []string{x})
		bs = b.op(att, "Gather", []string{bs, b.constInts(att, nil, 0)}, intAttr("axis", 0))
		view := func(v string, tail ...int64) string {
			parts := []string{b.op(att, "Unsqueeze", []string{bs, b.constInts(att, []int64{1}, 0)})}
			for _, t := range tail {
				parts = append(parts, b.constInts(att, []int64{1}, t))
			}
			s := b.op(att, "Concat", parts, intAttr("axis", 0))
			return b.op(att, "Reshape", []string{v, s})
		}
		heads := func(name, v string, perm ...int64) string {
			y := b.linear(att+"/"+name, attParam+"."+name, v, H, H)
			return b.op(att, "Transpose", []string{view(y, -1, N, D)}, intsAttr("perm", perm...))
		}
		q := heads("q_lin", x, 0, 2, 1, 3)
		k := heads("k_lin", x, 0, 2, 3, 1) // shape(k).transpose(2, 3), fused
		v := heads("v_lin", x, 0, 2, 1, 3)
		q = b.op(att, "Div", []string{q, b.constFloat(att, float32(math.Sqrt(float64(D))))})
		s := b.op(att, "MatMul", []string{q, k})
		s = b.op(att, "Add", []string{s, mask})
		s = b.op(att, "Softmax", []string{s}, intAttr("axis", -1))
		ctx := b.op(att, "MatMul", []string{s, v})
		ctx = b.op(att, "Transpose", []string{ctx}, intsAttr("perm", 0, 2, 1, 3))
		ctx = view(ctx, -1, H)
		a := b.linear(att+"/out_lin", attParam+".out_lin", ctx, H, H)
		a = b.op(scope, "Add", []string{a, x})
		a = b.torchLayerNorm(scope+"/sa_layer_norm", param+".sa_layer_norm", a, H)

		f := b.linear(scope+"/ffn/lin1", param+".ffn.lin1", a, H, 4*H)
		f = b.gelu(scope+"/ffn/activation", f)
		f = b.linear(scope+"/ffn/lin2", param+".ffn.lin2", f, 4*H, H)
		f = b.op(scope, "Add", []string{f, a})
		x = b.torchLayerNorm(scope+"/output_layer_norm", param+".output_layer_norm", f, H)
	}
	b.layer = -1

	// hidden_state[:, 0] -> pre_classifier -> ReLU -> classifier.
	cls := b.op("", "Gather", []string{x, b.constInts("", nil, 0)}, intAttr("axis", 1))
	p := b.gemm("/pre_classifier", "pre_classifier", cls, H, H)
	p = b.op("", "Relu", []string{p})
	b.gemm("/classifier", "classifier", p, H, C, LogitsName)
}
