// Package modelgen generates a small, deterministic BERT-like text
// classifier as an ONNX model, with its WordPiece vocabulary, for trying
// the toolkit and for tests. The weights are random (normal times 0.02,
// from a seeded math/rand/v2 PCG), so the model classifies nothing
// meaningful.
//
// Two graph styles are generated (Config.Style):
//
//   - "bert" (the default): opset 17, one input input_ids int64 [1, seq]
//     of fixed shape, LayerNormalization operators, output probabilities
//     [1, classes] after a Softmax; written with a vocab.txt.
//   - "torch": the graph patterns of a torch.onnx.export (opset 14) of a
//     Hugging Face DistilBertForSequenceClassification: inputs input_ids
//     and attention_mask int64 [batch_size, sequence_length] with symbolic
//     dimensions, shapes computed at run time (Shape, Gather, Unsqueeze,
//     Concat, Reshape, Slice of the position ids), LayerNorm decomposed
//     into ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add, linear layers as MatMul
//     then Add(bias, x), the Erf GELU, the additive attention mask, and a
//     Gemm classifier on [CLS] with output logits [batch_size, classes];
//     torch-style node names ("/distilbert/transformer/layer.0/...");
//     written with a Hugging Face tokenizer.json and config.json. It stands
//     in for real exported models, which tests cannot download.
//
// Random weight matrices of the layers are stored as float16 initializers
// followed by a Cast to float, which halves the file (the default bert
// model is about 270 KB instead of about 520 KB); all arithmetic is
// float32.
package modelgen

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
)

// Config sizes the generated model. Zero fields take the defaults:
// 2 layers, hidden 64, 4 heads, sequence length 32, vocabulary size
// len(Vocabulary()), 2 classes, seed 1, style "bert".
type Config struct {
	Layers, Hidden, Heads, SeqLen, Vocab, Classes int
	Seed                                          int64
	// Style is the graph style: StyleBERT ("" is the same) or StyleTorch.
	// For StyleTorch, SeqLen is the maximum sequence length (the number
	// of position embeddings); inputs may be shorter.
	Style string
	// Variant, if set, substitutes some of the model's weights (the same
	// graph, other numbers): see Variant.
	Variant *Variant
}

// Graph styles (Config.Style).
const (
	StyleBERT  = "bert"  // opset 17, fixed shapes, probabilities output
	StyleTorch = "torch" // torch.onnx.export of a Hugging Face DistilBERT
)

// Styles returns the graph styles, default first (a new slice each call).
func Styles() []string { return []string{StyleBERT, StyleTorch} }

// Input and output names of the generated graph. Both styles take
// InputName; the torch style also takes MaskName and outputs LogitsName.
const (
	InputName  = "input_ids"      // int64 [1, SeqLen]; torch: [batch_size, sequence_length]
	MaskName   = "attention_mask" // torch only: int64 [batch_size, sequence_length], 1 = token, 0 = padding
	OutputName = "probabilities"  // bert: float [1, Classes]
	LogitsName = "logits"         // torch: float [batch_size, Classes]
)

// WithDefaults returns c with zero fields set to the defaults.
func (c Config) WithDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Layers, 2)
	def(&c.Hidden, 64)
	def(&c.Heads, 4)
	def(&c.SeqLen, 32)
	def(&c.Vocab, len(Vocabulary()))
	def(&c.Classes, 2)
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Style == "" {
		c.Style = StyleBERT
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Style != StyleBERT && c.Style != StyleTorch:
		return fmt.Errorf("modelgen: unknown style %q (want %s)", c.Style, strings.Join(Styles(), " or "))
	case c.Layers < 0 || c.Hidden < 0 || c.Heads < 0 || c.SeqLen < 0 || c.Vocab < 0 || c.Classes < 0:
		return errors.New("modelgen: negative size in config")
	case c.Hidden%c.Heads != 0:
		return fmt.Errorf("modelgen: hidden %d not divisible by heads %d", c.Hidden, c.Heads)
	case c.SeqLen < 2:
		return fmt.Errorf("modelgen: sequence length %d below 2 ([CLS] and [SEP])", c.SeqLen)
	case c.Vocab < len(Vocabulary()):
		return fmt.Errorf("modelgen: vocabulary size %d below the generated vocabulary's %d", c.Vocab, len(Vocabulary()))
	}
	return nil
}

// Generate builds the model for cfg (zero fields take the defaults) in
// cfg.Style and its vocabulary (Vocabulary(), padded with [unusedN]
// tokens up to cfg.Vocab). The same cfg always gives identical bytes.
func Generate(cfg Config) (model []byte, vocab []string, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	b := &builder{
		rng:    rand.New(rand.NewPCG(uint64(cfg.Seed), 0)),
		names:  map[string]bool{},
		counts: map[string]int{},
		layer:  -1,
	}
	if v := cfg.Variant; v != nil {
		b.variant, b.vrng = v, rand.New(rand.NewPCG(uint64(v.Seed), 0x7a71))
	}
	if cfg.Style == StyleTorch {
		b.buildTorch(cfg)
	} else {
		b.build(cfg)
	}
	return b.m.Marshal(), padVocabulary(Vocabulary(), cfg.Vocab), nil
}

// Files returns the files WriteDir writes for cfg, by name: for the bert
// style model.onnx and vocab.txt (one token per line); for the torch style
// model.onnx, tokenizer.json and config.json (Hugging Face formats, see
// TokenizerJSON and ConfigJSON). The same cfg always gives identical bytes.
func Files(cfg Config) (map[string][]byte, error) {
	model, vocab, err := Generate(cfg)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"model.onnx": model}
	if cfg.WithDefaults().Style != StyleTorch {
		files["vocab.txt"] = []byte(strings.Join(vocab, "\n") + "\n")
		return files, nil
	}
	if files["tokenizer.json"], err = TokenizerJSON(vocab); err != nil {
		return nil, err
	}
	if files["config.json"], err = ConfigJSON(cfg); err != nil {
		return nil, err
	}
	return files, nil
}

// WriteDir generates the model for cfg and writes its files (see Files)
// into dir, creating dir if needed: model.onnx and vocab.txt for the bert
// style, model.onnx, tokenizer.json and config.json for the torch style.
func WriteDir(dir string, cfg Config) error {
	files, err := Files(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

type builder struct {
	m       onnxmodel.Model
	rng     *rand.Rand
	names   map[string]bool // node and value names, to keep them unique
	counts  map[string]int  // torch style: nodes so far by scope and op type
	matmuls int             // torch style: onnx::MatMul_<n> weights so far
	layer   int             // encoder layer being built (-1 outside)
	variant *Variant
	vrng    *rand.Rand
}

func (b *builder) unique(name string) {
	if b.names[name] {
		panic("modelgen: duplicate name " + name)
	}
	b.names[name] = true
}

// node adds a node named name with one output, name+"_output_0" unless
// out is given, and returns the output.
func (b *builder) node(name, op string, inputs []string, attrs []onnxmodel.Attr, out ...string) string {
	b.unique(name)
	o := name + "_output_0"
	if len(out) > 0 {
		o = out[0]
	}
	b.unique(o)
	b.m.Nodes = append(b.m.Nodes, onnxmodel.Node{Name: name, OpType: op, Inputs: inputs, Outputs: []string{o}, Attrs: attrs})
	return o
}

func intAttr(name string, v int64) onnxmodel.Attr     { return onnxmodel.Attr{Name: name, Int: &v} }
func floatAttr(name string, v float32) onnxmodel.Attr { return onnxmodel.Attr{Name: name, Float: &v} }
func intsAttr(name string, v ...int64) onnxmodel.Attr { return onnxmodel.Attr{Name: name, Ints: v} }

// floats adds a float32 initializer filled with v.
func (b *builder) floats(name string, v float32, dims ...int64) string {
	b.unique(name)
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

func (b *builder) ints(name string, dims []int64, v ...int64) string {
	b.unique(name)
	b.m.Initializers = append(b.m.Initializers, onnxmodel.Tensor{Name: name, Dims: dims, Ints: v})
	return name
}

// random adds a float16 initializer of normal(0, 1)*0.02 values and
// returns its name (the float16 tensor, not cast).
func (b *builder) random(name string, dims ...int64) string {
	f := b.normals(name, dims)
	bits := make([]uint16, len(f))
	for i, v := range f {
		bits[i] = onnxmodel.Float16Bits(v)
	}
	if b.varies() {
		// Stored as float32 so that a perturbation below float16's
		// precision survives (the Cast to float stays, as a no-op).
		for i, h := range bits {
			f[i] = onnxmodel.Float16Value(h)
		}
		b.m.Initializers = append(b.m.Initializers, onnxmodel.Tensor{Name: name, Dims: dims, Floats: b.vary(f)})
		return name
	}
	b.m.Initializers = append(b.m.Initializers, onnxmodel.Tensor{Name: name, Dims: dims, Halves: bits})
	return name
}

// weight adds a random float16 matrix and a Cast of it to float; it
// returns the float value's name.
func (b *builder) weight(name string, dims ...int64) string {
	w := b.random(name, dims...)
	return b.node(name+"/Cast", "Cast", []string{w}, []onnxmodel.Attr{intAttr("to", onnxmodel.Float)})
}

// dense adds prefix/MatMul (x·weight) and prefix/Add (+bias, zeros).
func (b *builder) dense(prefix, x string, in, out int64) string {
	w := b.weight(prefix+"/weight", in, out)
	bias := b.floats(prefix+"/bias", 0, out)
	y := b.node(prefix+"/MatMul", "MatMul", []string{x, w}, nil)
	return b.node(prefix+"/Add", "Add", []string{y, bias}, nil)
}

func (b *builder) layerNorm(prefix, x string, hidden int64) string {
	gamma := b.floats(prefix+"/gamma", 1, hidden)
	beta := b.floats(prefix+"/beta", 0, hidden)
	return b.node(prefix+"/LayerNormalization", "LayerNormalization", []string{x, gamma, beta},
		[]onnxmodel.Attr{intAttr("axis", -1), floatAttr("epsilon", 1e-12)})
}

func (b *builder) build(c Config) {
	S, H, N := int64(c.SeqLen), int64(c.Hidden), int64(c.Heads)
	D := H / N
	b.m = onnxmodel.Model{
		Name:    fmt.Sprintf("modelgen-bert-l%d-h%d-a%d-s%d-v%d-c%d-seed%d", c.Layers, c.Hidden, c.Heads, c.SeqLen, c.Vocab, c.Classes, c.Seed),
		Opset:   17,
		Inputs:  []onnxmodel.ValueInfo{{Name: InputName, ElemType: onnxmodel.Int64, Shape: []int64{1, S}}},
		Outputs: []onnxmodel.ValueInfo{{Name: OutputName, ElemType: onnxmodel.Float, Shape: []int64{1, int64(c.Classes)}}},
	}
	b.unique(InputName)

	// Shared constants.
	headsShape := b.ints("const/heads_shape", []int64{4}, 1, S, N, D)
	hiddenShape := b.ints("const/hidden_shape", []int64{3}, 1, S, H)
	scale := b.floats("const/attention_scale", float32(1/math.Sqrt(float64(D))))
	sqrt2 := b.floats("const/sqrt2", float32(math.Sqrt2))
	one := b.floats("const/one", 1)
	half := b.floats("const/half", 0.5)
	cls := b.ints("const/cls_index", nil, 0)

	// Embeddings.
	words := b.random("embeddings/word_embeddings", int64(c.Vocab), H)
	x := b.node("embeddings/word_embeddings/Gather", "Gather", []string{words, InputName}, []onnxmodel.Attr{intAttr("axis", 0)})
	x = b.node("embeddings/word_embeddings/Cast", "Cast", []string{x}, []onnxmodel.Attr{intAttr("to", onnxmodel.Float)})
	pos := b.weight("embeddings/position_embeddings", 1, S, H)
	x = b.node("embeddings/position_embeddings/Add", "Add", []string{x, pos}, nil)
	x = b.layerNorm("embeddings/LayerNorm", x, H)

	for l := 0; l < c.Layers; l++ {
		b.layer = l
		p := fmt.Sprintf("layer%d", l)
		heads := func(name, v string, perm ...int64) string {
			r := b.node(p+"/attention/"+name+"/Reshape", "Reshape", []string{v, headsShape}, nil)
			return b.node(p+"/attention/"+name+"/Transpose", "Transpose", []string{r}, []onnxmodel.Attr{intsAttr("perm", perm...)})
		}
		q := heads("query", b.dense(p+"/attention/query", x, H, H), 0, 2, 1, 3)
		k := heads("key", b.dense(p+"/attention/key", x, H, H), 0, 2, 3, 1)
		v := heads("value", b.dense(p+"/attention/value", x, H, H), 0, 2, 1, 3)
		s := b.node(p+"/attention/scores/MatMul", "MatMul", []string{q, k}, nil)
		s = b.node(p+"/attention/scores/Mul", "Mul", []string{s, scale}, nil)
		s = b.node(p+"/attention/probs/Softmax", "Softmax", []string{s}, []onnxmodel.Attr{intAttr("axis", -1)})
		ctx := b.node(p+"/attention/context/MatMul", "MatMul", []string{s, v}, nil)
		ctx = b.node(p+"/attention/context/Transpose", "Transpose", []string{ctx}, []onnxmodel.Attr{intsAttr("perm", 0, 2, 1, 3)})
		ctx = b.node(p+"/attention/context/Reshape", "Reshape", []string{ctx, hiddenShape}, nil)
		a := b.dense(p+"/attention/output", ctx, H, H)
		a = b.node(p+"/attention/output/residual/Add", "Add", []string{a, x}, nil)
		x = b.layerNorm(p+"/attention/output/LayerNorm", a, H)

		f := b.dense(p+"/intermediate", x, H, 4*H)
		g := b.node(p+"/intermediate/gelu/Div", "Div", []string{f, sqrt2}, nil)
		g = b.node(p+"/intermediate/gelu/Erf", "Erf", []string{g}, nil)
		g = b.node(p+"/intermediate/gelu/Add", "Add", []string{g, one}, nil)
		g = b.node(p+"/intermediate/gelu/Mul", "Mul", []string{f, g}, nil)
		g = b.node(p+"/intermediate/gelu/Mul_half", "Mul", []string{g, half}, nil)
		o := b.dense(p+"/output", g, 4*H, H)
		o = b.node(p+"/output/residual/Add", "Add", []string{o, x}, nil)
		x = b.layerNorm(p+"/output/LayerNorm", o, H)
	}
	b.layer = -1

	// Pooler over [CLS], classifier, softmax.
	x = b.node("pooler/cls/Gather", "Gather", []string{x, cls}, []onnxmodel.Attr{intAttr("axis", 1)})
	x = b.dense("pooler/dense", x, H, H)
	x = b.node("pooler/Tanh", "Tanh", []string{x}, nil)
	x = b.dense("classifier", x, H, int64(c.Classes))
	b.node("classifier/Softmax", "Softmax", []string{x}, []onnxmodel.Attr{intAttr("axis", -1)}, OutputName)
}
