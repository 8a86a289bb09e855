package trace_test

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
)

// tb builds a small model the way torch.onnx.export writes one (opset 14
// by default): Constant nodes for scalars, decomposed operators. Every
// node is added with the class Classes must give it.
type tb struct {
	m       onnxmodel.Model
	classes []string
	count   int
	pre     [][]byte // raw NodeProtos written before the others (constants)
	post    [][]byte // raw NodeProtos written after the others
}

func newTB(opset int64) *tb { return &tb{m: onnxmodel.Model{Name: "torch-test", Opset: opset}} }

// op adds a node of class c and returns its first output (named after the
// node: "<op>_<n>").
func (b *tb) op(c, op string, inputs []string, attrs ...onnxmodel.Attr) string {
	return b.opN(c, op, inputs, 1, attrs...)[0]
}

// opN adds a node with n outputs.
func (b *tb) opN(c, op string, inputs []string, n int, attrs ...onnxmodel.Attr) []string {
	name := fmt.Sprintf("%s_%d", op, b.count)
	b.count++
	outs := make([]string, n)
	for i := range outs {
		outs[i] = fmt.Sprintf("%s_out%d", name, i)
	}
	b.m.Nodes = append(b.m.Nodes, onnxmodel.Node{Name: name, OpType: op, Inputs: inputs, Outputs: outs, Attrs: attrs})
	b.classes = append(b.classes, c)
	return outs
}

// other adds a node of class Other.
func (b *tb) other(op string, inputs ...string) string { return b.op(profile.Other, op, inputs) }

// cf adds a torch-style float scalar Constant node.
func (b *tb) cf(v float32) string {
	return b.op(profile.Other, "Constant", nil, onnxmodel.Attr{Name: "value", Tensor: &onnxmodel.Tensor{Floats: []float32{v}}})
}

// ci adds an int64 Constant node (a scalar when dims is nil).
func (b *tb) ci(dims []int64, v ...int64) string {
	return b.op(profile.Other, "Constant", nil, onnxmodel.Attr{Name: "value", Tensor: &onnxmodel.Tensor{Dims: dims, Ints: v}})
}

// weight adds a float initializer of dims with small deterministic values.
func (b *tb) weight(name string, dims ...int64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(math.Sin(float64(len(b.m.Initializers)*131+i))) * 0.5
	}
	b.m.Initializers = append(b.m.Initializers, onnxmodel.Tensor{Name: name, Dims: dims, Floats: f})
	return name
}

// fill adds a float initializer filled with v.
func (b *tb) fill(name string, v float32, dims ...int64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = v
	}
	b.m.Initializers = append(b.m.Initializers, onnxmodel.Tensor{Name: name, Dims: dims, Floats: f})
	return name
}

func ints(name string, v ...int64) onnxmodel.Attr { return onnxmodel.Attr{Name: name, Ints: v} }
func intA(name string, v int64) onnxmodel.Attr    { return onnxmodel.Attr{Name: name, Int: &v} }

// linear adds x·W + b as torch writes it: MatMul, then Add with the bias
// first when biasFirst.
func (b *tb) linear(name, x string, in, out int64, biasFirst bool) string {
	w := b.weight(name+".weight", in, out)
	bias := b.weight(name+".bias", out)
	y := b.op(profile.Linear, "MatMul", []string{x, w})
	if biasFirst {
		return b.op(profile.Linear, "Add", []string{bias, y})
	}
	return b.op(profile.Linear, "Add", []string{y, bias})
}

// LayerNorm variants.
const (
	lnPow   = iota // Pow(d, 2), Div(d, √·), Mul(·, gamma), Add(·, beta)
	lnMul          // Mul(d, d), Reciprocal and Mul, Mul(gamma, ·), Add(beta, ·)
	lnPlain        // no affine: the Div is the last node
	lnOp           // LayerNormalization (opset 17)
)

// layerNorm adds a layer normalization over the last axis and returns its
// output.
func (b *tb) layerNorm(name, x string, hidden int64, variant int) string {
	const c = profile.LayerNorm
	if variant == lnOp {
		g, beta := b.fill(name+".weight", 1, hidden), b.fill(name+".bias", 0, hidden)
		return b.op(c, "LayerNormalization", []string{x, g, beta}, intA("axis", -1))
	}
	mean := b.op(c, "ReduceMean", []string{x}, ints("axes", -1))
	d := b.op(c, "Sub", []string{x, mean})
	var sq string
	if variant == lnMul {
		sq = b.op(c, "Mul", []string{d, d})
	} else {
		sq = b.op(c, "Pow", []string{d, b.cf(2)})
	}
	v := b.op(c, "ReduceMean", []string{sq}, ints("axes", -1))
	v = b.op(c, "Add", []string{v, b.cf(1e-12)})
	s := b.op(c, "Sqrt", []string{v})
	switch variant {
	case lnPlain:
		return b.op(c, "Div", []string{d, s})
	case lnMul:
		r := b.op(c, "Reciprocal", []string{s})
		n := b.op(c, "Mul", []string{r, d})
		n = b.op(c, "Mul", []string{b.fill(name+".weight", 1, hidden), n})
		return b.op(c, "Add", []string{b.fill(name+".bias", 0, hidden), n})
	}
	n := b.op(c, "Div", []string{d, s})
	n = b.op(c, "Mul", []string{n, b.fill(name+".weight", 1, hidden)})
	return b.op(c, "Add", []string{n, b.fill(name+".bias", 0, hidden)})
}

// GELU variants.
const (
	geluErfDiv    = iota // Div(x, √2), Erf, Add(·, 1), Mul(x, ·), Mul(·, 0.5)
	geluErfHalf          // Mul(x, 1/√2), Erf, Add(1, ·), Mul(Mul(x, 0.5), ·)
	geluErfLate          // Div(x, √2), Erf, Add, Mul(·, 0.5), Mul(·, x)
	geluTanhPow          // Hugging Face NewGELU: Pow(x, 3) ...
	geluTanhTorch        // torch's symbolic: Mul(x, Mul(x, x)) ...
	geluOp               // Gelu (opset 20 and contrib)
	geluVariants
)

// gelu adds a GELU of x and returns its output.
func (b *tb) gelu(x string, variant int) string {
	const c = profile.GELU
	k := func(v float32) string { // a constant of the pattern: Constant nodes are Other
		return b.cf(v)
	}
	switch variant {
	case geluErfDiv:
		e := b.op(c, "Div", []string{x, k(1.4142135)})
		e = b.op(c, "Erf", []string{e})
		e = b.op(c, "Add", []string{e, k(1)})
		e = b.op(c, "Mul", []string{x, e})
		return b.op(c, "Mul", []string{e, k(0.5)})
	case geluErfHalf:
		e := b.op(c, "Mul", []string{x, k(0.70710677)})
		e = b.op(c, "Erf", []string{e})
		e = b.op(c, "Add", []string{k(1), e})
		h := b.op(c, "Mul", []string{k(0.5), x})
		return b.op(c, "Mul", []string{h, e})
	case geluErfLate:
		e := b.op(c, "Div", []string{x, k(1.4142135)})
		e = b.op(c, "Erf", []string{e})
		e = b.op(c, "Add", []string{e, k(1)})
		e = b.op(c, "Mul", []string{e, k(0.5)})
		return b.op(c, "Mul", []string{e, x})
	case geluTanhPow:
		h := b.op(c, "Mul", []string{x, k(0.5)})
		p := b.op(c, "Pow", []string{x, k(3)})
		p = b.op(c, "Mul", []string{k(0.044715), p})
		p = b.op(c, "Add", []string{x, p})
		p = b.op(c, "Mul", []string{k(0.7978846), p})
		p = b.op(c, "Tanh", []string{p})
		p = b.op(c, "Add", []string{k(1), p})
		return b.op(c, "Mul", []string{h, p})
	case geluTanhTorch:
		sq := b.op(c, "Mul", []string{x, x})
		cube := b.op(c, "Mul", []string{x, sq})
		p := b.op(c, "Mul", []string{k(0.044715), cube})
		p = b.op(c, "Add", []string{x, p})
		p = b.op(c, "Mul", []string{k(0.7978846), p})
		p = b.op(c, "Tanh", []string{p})
		p = b.op(c, "Add", []string{k(1), p})
		p = b.op(c, "Mul", []string{x, p})
		return b.op(c, "Mul", []string{k(0.5), p})
	}
	return b.op(c, "Gelu", []string{x})
}

// marshal returns the model bytes, with the raw nodes spliced in.
func (b *tb) marshal() []byte {
	model := b.m.Marshal()
	if len(b.pre) == 0 && len(b.post) == 0 {
		return model
	}
	var out []byte
	for len(model) > 0 {
		num, typ, n := protowire.ConsumeTag(model)
		m := protowire.ConsumeFieldValue(num, typ, model[n:])
		if num == 7 && typ == protowire.BytesType {
			graph, _ := protowire.ConsumeBytes(model[n:])
			var g []byte
			for _, node := range b.pre {
				g = protowire.AppendBytes(protowire.AppendTag(g, 1, protowire.BytesType), node)
			}
			g = append(g, graph...)
			for _, node := range b.post {
				g = protowire.AppendBytes(protowire.AppendTag(g, 1, protowire.BytesType), node)
			}
			out = protowire.AppendBytes(protowire.AppendTag(out, 7, protowire.BytesType), g)
		} else {
			out = append(out, model[:n+m]...)
		}
		model = model[n+m:]
	}
	return out
}

// rawNode encodes a NodeProto with a domain and attributes (encoded
// AttributeProtos).
func rawNode(name, op, domain string, inputs, outputs []string, attrs ...[]byte) []byte {
	var b []byte
	str := func(field protowire.Number, s string) {
		b = protowire.AppendBytes(protowire.AppendTag(b, field, protowire.BytesType), []byte(s))
	}
	for _, in := range inputs {
		str(1, in)
	}
	for _, o := range outputs {
		str(2, o)
	}
	str(3, name)
	str(4, op)
	for _, a := range attrs {
		b = protowire.AppendBytes(protowire.AppendTag(b, 5, protowire.BytesType), a)
	}
	if domain != "" {
		str(7, domain)
	}
	return b
}

// tensorAttr encodes a tensor attribute "value" holding a tensor of data
// type dt, dims and raw data.
func tensorAttr(dt int32, dims []int64, raw []byte) []byte {
	var t []byte
	for _, d := range dims {
		t = protowire.AppendVarint(protowire.AppendTag(t, 1, protowire.VarintType), uint64(d))
	}
	t = protowire.AppendVarint(protowire.AppendTag(t, 2, protowire.VarintType), uint64(dt))
	t = protowire.AppendBytes(protowire.AppendTag(t, 9, protowire.BytesType), raw)
	a := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("value"))
	a = protowire.AppendBytes(protowire.AppendTag(a, 5, protowire.BytesType), t)
	return protowire.AppendVarint(protowire.AppendTag(a, 20, protowire.VarintType), 4)
}
