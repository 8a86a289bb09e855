package modelgen

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// message is a decoded protobuf message: bytes and varint fields by number.
type message struct {
	bytes   map[protowire.Number][][]byte
	varints map[protowire.Number][]uint64
}

func decode(t *testing.T, b []byte) message {
	t.Helper()
	m := message{map[protowire.Number][][]byte{}, map[protowire.Number][]uint64{}}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatal(protowire.ParseError(n))
		}
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				t.Fatal(protowire.ParseError(k))
			}
			m.bytes[num] = append(m.bytes[num], v)
			n = k
		case protowire.VarintType:
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				t.Fatal(protowire.ParseError(k))
			}
			m.varints[num] = append(m.varints[num], v)
			n = k
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				t.Fatal(protowire.ParseError(n))
			}
		}
		b = b[n:]
	}
	return m
}

func (m message) str(num protowire.Number) string {
	if v := m.bytes[num]; len(v) > 0 {
		return string(v[0])
	}
	return ""
}

type graphNode struct {
	name, op        string
	inputs, outputs []string
	attrs           map[string]message
}

type graphValue struct {
	name     string
	elemType uint64
	dims     []string // dim_value in decimal or dim_param
}

type graph struct {
	opset         uint64
	nodes         []graphNode
	inputs        []graphValue
	outputs       []graphValue
	initializers  map[string]message
	valueProducer map[string]int // node index by output name
}

// readGraph decodes what the tests check of a generated ModelProto.
func readGraph(t *testing.T, model []byte) graph {
	t.Helper()
	mp := decode(t, model)
	g := graph{initializers: map[string]message{}, valueProducer: map[string]int{}}
	for _, os := range mp.bytes[8] {
		if o := decode(t, os); o.str(1) == "" {
			g.opset = o.varints[2][0]
		}
	}
	if len(mp.bytes[7]) != 1 {
		t.Fatalf("%d graphs", len(mp.bytes[7]))
	}
	gp := decode(t, mp.bytes[7][0])
	for _, nb := range gp.bytes[1] {
		nm := decode(t, nb)
		n := graphNode{name: nm.str(3), op: nm.str(4), attrs: map[string]message{}}
		for _, v := range nm.bytes[1] {
			n.inputs = append(n.inputs, string(v))
		}
		for _, v := range nm.bytes[2] {
			n.outputs = append(n.outputs, string(v))
			g.valueProducer[string(v)] = len(g.nodes)
		}
		for _, ab := range nm.bytes[5] {
			a := decode(t, ab)
			n.attrs[a.str(1)] = a
		}
		g.nodes = append(g.nodes, n)
	}
	for _, ib := range gp.bytes[5] {
		im := decode(t, ib)
		g.initializers[im.str(8)] = im
	}
	value := func(b []byte) graphValue {
		vm := decode(t, b)
		v := graphValue{name: vm.str(1)}
		tensor := decode(t, decode(t, vm.bytes[2][0]).bytes[1][0])
		v.elemType = tensor.varints[1][0]
		for _, db := range decode(t, tensor.bytes[2][0]).bytes[1] {
			dm := decode(t, db)
			if p := dm.str(2); p != "" {
				v.dims = append(v.dims, p)
			} else {
				v.dims = append(v.dims, strconv.FormatUint(dm.varints[1][0], 10))
			}
		}
		return v
	}
	for _, b := range gp.bytes[11] {
		g.inputs = append(g.inputs, value(b))
	}
	for _, b := range gp.bytes[12] {
		g.outputs = append(g.outputs, value(b))
	}
	return g
}

func TestTorchGraphStructure(t *testing.T) {
	const L = 2
	model, _, err := Generate(Config{Style: StyleTorch, Layers: L, Classes: 3})
	if err != nil {
		t.Fatal(err)
	}
	g := readGraph(t, model)
	if g.opset != 14 {
		t.Errorf("opset %d, want 14", g.opset)
	}
	// Inputs and output with symbolic dimensions.
	wantIn := []graphValue{
		{InputName, 7, []string{"batch_size", "sequence_length"}},
		{MaskName, 7, []string{"batch_size", "sequence_length"}},
	}
	if len(g.inputs) != 2 {
		t.Fatalf("inputs %v", g.inputs)
	}
	for i, w := range wantIn {
		if got := g.inputs[i]; got.name != w.name || got.elemType != w.elemType || !slices.Equal(got.dims, w.dims) {
			t.Errorf("input %d = %+v, want %+v", i, got, w)
		}
	}
	if len(g.outputs) != 1 || g.outputs[0].name != LogitsName || g.outputs[0].elemType != 1 ||
		!slices.Equal(g.outputs[0].dims, []string{"batch_size", "3"}) {
		t.Errorf("outputs %+v", g.outputs)
	}

	ops := map[string]int{}
	names := map[string]bool{}
	for _, n := range g.nodes {
		if names[n.name] {
			t.Errorf("duplicate node name %q", n.name)
		}
		names[n.name] = true
		ops[n.op]++
		if !strings.HasPrefix(n.name, "/") {
			t.Errorf("node name %q is not a torch export name", n.name)
		}
	}
	want := map[string]int{
		"LayerNormalization": 0,
		"Gelu":               0,
		"Dropout":            0,
		"ReduceMean":         2 * (1 + 2*L),
		"Sqrt":               1 + 2*L,
		"Pow":                1 + 2*L,
		"Erf":                L,
		"Softmax":            L, // none on the output
		"Gemm":               2,
		"Relu":               1,
		"Shape":              1 + L,
		"Slice":              1,
		"Concat":             4 * L,
		"Reshape":            4 * L,
		"Transpose":          4 * L,
		"MatMul":             8 * L,
		"Cast":               1 + 6*L, // the mask, float16 weights
		"Gather":             4 + L,   // words, positions, sequence length, [CLS]; batch size per layer
	}
	for op, n := range want {
		if ops[op] != n {
			t.Errorf("%d %s nodes, want %d", ops[op], op, n)
		}
	}
	for _, n := range []string{
		"/distilbert/embeddings/Shape",
		"/distilbert/embeddings/Slice",
		"/distilbert/embeddings/word_embeddings/Gather",
		"/distilbert/embeddings/LayerNorm/ReduceMean_1",
		"/distilbert/transformer/layer.0/attention/q_lin/MatMul",
		"/distilbert/transformer/layer.1/attention/Softmax",
		"/distilbert/transformer/layer.1/ffn/activation/Erf",
		"/distilbert/transformer/layer.1/output_layer_norm/Sqrt",
		"/pre_classifier/Gemm",
		"/classifier/Gemm",
	} {
		if !names[n] {
			t.Errorf("missing node %q", n)
		}
	}
	for _, n := range []string{"distilbert.embeddings.word_embeddings.weight", "distilbert.embeddings.position_ids",
		"distilbert.transformer.layer.1.ffn.lin2.bias", "onnx::MatMul_1", "classifier.weight"} {
		if _, ok := g.initializers[n]; !ok {
			t.Errorf("missing initializer %q", n)
		}
	}

	byName := map[string]graphNode{}
	for _, n := range g.nodes {
		byName[n.name] = n
	}
	// Linear layers: Add(bias, MatMul) with the bias initializer first.
	for _, n := range g.nodes {
		if strings.HasSuffix(n.name, "_lin/Add") || strings.HasSuffix(n.name, "/lin1/Add") || strings.HasSuffix(n.name, "/lin2/Add") {
			if _, ok := g.initializers[n.inputs[0]]; !ok || !strings.HasSuffix(n.inputs[0], ".bias") {
				t.Errorf("%s: first input %q is not a bias initializer", n.name, n.inputs[0])
			}
			if p := g.nodes[g.valueProducer[n.inputs[1]]]; p.op != "MatMul" {
				t.Errorf("%s: second input from %s, want a MatMul", n.name, p.op)
			}
		}
	}
	// Classifier: Gemm with transB=1 on the [CLS] vector.
	cls := byName["/classifier/Gemm"]
	if tb := cls.attrs["transB"]; len(tb.varints[3]) != 1 || tb.varints[3][0] != 1 {
		t.Error("classifier Gemm has no transB=1")
	}
	if len(cls.outputs) != 1 || cls.outputs[0] != LogitsName {
		t.Errorf("classifier outputs %v", cls.outputs)
	}
	gather := byName["/Gather"]
	if ax := gather.attrs["axis"]; len(ax.varints[3]) != 1 || ax.varints[3][0] != 1 {
		t.Error("[CLS] Gather not on axis 1")
	}
	// LayerNorm decomposition, in order.
	var ln []string
	for _, n := range g.nodes {
		if strings.HasPrefix(n.name, "/distilbert/embeddings/LayerNorm/") && n.op != "Constant" {
			ln = append(ln, n.op)
		}
	}
	if w := []string{"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add"}; !slices.Equal(ln, w) {
		t.Errorf("LayerNorm ops %v, want %v", ln, w)
	}
	// GELU as Div -> Erf -> Add -> Mul -> Mul.
	var gelu []string
	for _, n := range g.nodes {
		if strings.HasPrefix(n.name, "/distilbert/transformer/layer.0/ffn/activation/") && n.op != "Constant" {
			gelu = append(gelu, n.op)
		}
	}
	if w := []string{"Div", "Erf", "Add", "Mul", "Mul"}; !slices.Equal(gelu, w) {
		t.Errorf("GELU ops %v, want %v", gelu, w)
	}
	// The mask path starts at attention_mask and ends in every layer's scores.
	un := byName["/distilbert/Unsqueeze"]
	if len(un.inputs) != 2 || un.inputs[0] != MaskName {
		t.Errorf("mask Unsqueeze inputs %v", un.inputs)
	}
	maskOut := byName["/distilbert/Mul"].outputs[0]
	for l := range L {
		add := byName["/distilbert/transformer/layer."+strconv.Itoa(l)+"/attention/Add"]
		if len(add.inputs) != 2 || add.inputs[1] != maskOut {
			t.Errorf("layer %d scores Add inputs %v", l, add.inputs)
		}
	}
	// Every node input is a graph input, an initializer or an earlier output.
	known := map[string]bool{InputName: true, MaskName: true}
	for name := range maps.Keys(g.initializers) {
		known[name] = true
	}
	for _, n := range g.nodes {
		for _, in := range n.inputs {
			if !known[in] {
				t.Errorf("%s: input %q not defined before", n.name, in)
			}
		}
		for _, out := range n.outputs {
			known[out] = true
		}
	}
}

func TestStyles(t *testing.T) {
	a, va, err := Generate(Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, vb, err := Generate(Config{Style: StyleBERT})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || !slices.Equal(va, vb) {
		t.Error(`style "" and "bert" differ`)
	}
	c, vc, err := Generate(Config{Style: StyleTorch})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Error("bert and torch styles gave the same model")
	}
	if !slices.Equal(va, vc) {
		t.Error("bert and torch styles gave different vocabularies")
	}
	if got := (Config{}).WithDefaults().Style; got != StyleBERT {
		t.Errorf("default style %q", got)
	}
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // "" = valid
	}{
		{"default style", Config{}, ""},
		{"bert", Config{Style: "bert"}, ""},
		{"torch", Config{Style: "torch"}, ""},
		{"torch small", Config{Style: "torch", Layers: 1, Hidden: 8, Heads: 1, SeqLen: 2, Classes: 1}, ""},
		{"torch big vocabulary", Config{Style: "torch", Vocab: 1000}, ""},
		{"unknown style", Config{Style: "onnx"}, `unknown style "onnx" (want bert or torch)`},
		{"style case", Config{Style: "Torch"}, "unknown style"},
		{"torch heads do not divide hidden", Config{Style: "torch", Hidden: 10, Heads: 4}, "not divisible"},
		{"torch negative classes", Config{Style: "torch", Classes: -1}, "negative"},
		{"torch sequence too short", Config{Style: "torch", SeqLen: 1}, "sequence length"},
		{"torch vocabulary too small", Config{Style: "torch", Vocab: 10}, "vocabulary size"},
		{"bert heads do not divide hidden", Config{Hidden: 10, Heads: 4}, "not divisible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Generate(tt.cfg)
			_, ferr := Files(tt.cfg)
			switch {
			case tt.wantErr == "" && (err != nil || ferr != nil):
				t.Errorf("unexpected errors %v, %v", err, ferr)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			case tt.wantErr != "" && ferr == nil:
				t.Error("Files: no error")
			}
		})
	}
}

func TestWriteDirStyles(t *testing.T) {
	tests := []struct {
		cfg  Config
		want []string
	}{
		{Config{Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8}, []string{"model.onnx", "vocab.txt"}},
		{Config{Style: StyleBERT}, []string{"model.onnx", "vocab.txt"}},
		{Config{Style: StyleTorch}, []string{"config.json", "model.onnx", "tokenizer.json"}},
		{Config{Style: StyleTorch, Classes: 12, Seed: 3}, []string{"config.json", "model.onnx", "tokenizer.json"}},
	}
	for _, tt := range tests {
		name := tt.cfg.WithDefaults().Style
		t.Run(name, func(t *testing.T) {
			var runs [2]map[string][]byte
			for i := range runs {
				dir := filepath.Join(t.TempDir(), "m")
				if err := WriteDir(dir, tt.cfg); err != nil {
					t.Fatal(err)
				}
				entries, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				runs[i] = map[string][]byte{}
				for _, e := range entries {
					if runs[i][e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := slices.Sorted(maps.Keys(runs[0])); !slices.Equal(got, tt.want) {
				t.Fatalf("files %v, want %v", got, tt.want)
			}
			for name, b := range runs[0] {
				if !bytes.Equal(b, runs[1][name]) {
					t.Errorf("%s differs between two runs", name)
				}
			}
			model, _, err := Generate(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(runs[0]["model.onnx"], model) {
				t.Error("model.onnx differs from Generate")
			}
		})
	}
}

func TestTokenizerJSON(t *testing.T) {
	vocab := padVocabulary(Vocabulary(), len(Vocabulary())+2)
	b, err := TokenizerJSON(vocab)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := TokenizerJSON(vocab); !bytes.Equal(b, again) {
		t.Error("not deterministic")
	}
	var tok struct {
		Version     string `json:"version"`
		Truncation  any    `json:"truncation"`
		Padding     any    `json:"padding"`
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Normalizer struct {
			Type         string `json:"type"`
			Lowercase    bool   `json:"lowercase"`
			StripAccents any    `json:"strip_accents"`
		} `json:"normalizer"`
		PreTokenizer struct {
			Type string `json:"type"`
		} `json:"pre_tokenizer"`
		PostProcessor struct {
			Type          string           `json:"type"`
			Single        []map[string]any `json:"single"`
			Pair          []map[string]any `json:"pair"`
			SpecialTokens map[string]struct {
				ID     string   `json:"id"`
				IDs    []int    `json:"ids"`
				Tokens []string `json:"tokens"`
			} `json:"special_tokens"`
		} `json:"post_processor"`
		Decoder struct {
			Type   string `json:"type"`
			Prefix string `json:"prefix"`
		} `json:"decoder"`
		Model struct {
			Type     string         `json:"type"`
			UnkToken string         `json:"unk_token"`
			Prefix   string         `json:"continuing_subword_prefix"`
			MaxChars int            `json:"max_input_chars_per_word"`
			Vocab    map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &tok); err != nil {
		t.Fatal(err)
	}
	if tok.Version != "1.0" || tok.Truncation != nil || tok.Padding != nil {
		t.Errorf("header %q %v %v", tok.Version, tok.Truncation, tok.Padding)
	}
	if len(tok.AddedTokens) != 5 {
		t.Fatalf("added tokens %+v", tok.AddedTokens)
	}
	for i, w := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		if a := tok.AddedTokens[i]; a.ID != i || a.Content != w || !a.Special {
			t.Errorf("added token %d = %+v", i, a)
		}
	}
	if tok.Normalizer.Type != "BertNormalizer" || !tok.Normalizer.Lowercase || tok.Normalizer.StripAccents != nil ||
		tok.PreTokenizer.Type != "BertPreTokenizer" || tok.Decoder.Type != "WordPiece" || tok.Decoder.Prefix != "##" {
		t.Errorf("normalizer, pre-tokenizer or decoder: %+v %+v %+v", tok.Normalizer, tok.PreTokenizer, tok.Decoder)
	}
	pp := tok.PostProcessor
	if pp.Type != "TemplateProcessing" || len(pp.Single) != 3 || len(pp.Pair) != 5 ||
		!slices.Equal(pp.SpecialTokens["[CLS]"].IDs, []int{2}) || !slices.Equal(pp.SpecialTokens["[SEP]"].IDs, []int{3}) {
		t.Errorf("post processor %+v", pp)
	}
	if _, ok := pp.Single[1]["Sequence"]; !ok {
		t.Errorf("single template %v", pp.Single)
	}
	m := tok.Model
	if m.Type != "WordPiece" || m.UnkToken != "[UNK]" || m.Prefix != "##" || m.MaxChars != 100 {
		t.Errorf("model %+v", m)
	}
	if len(m.Vocab) != len(vocab) {
		t.Fatalf("vocab has %d entries, want %d", len(m.Vocab), len(vocab))
	}
	for i, w := range vocab {
		if m.Vocab[w] != i {
			t.Errorf("vocab[%q] = %d, want %d", w, m.Vocab[w], i)
		}
	}
	// The vocab object is written in id order and without HTML escapes.
	last := -1
	for _, w := range []string{`"[PAD]": 0`, `"!": `, `"<": `, `"\\": `, `"##s": `, `"[unused1]": `} {
		i := bytes.Index(b, []byte(w))
		if i < last {
			t.Errorf("%s out of order or missing", w)
		}
		last = i
	}
	if _, err := TokenizerJSON([]string{"a", "b"}); err == nil {
		t.Error("vocabulary without special tokens: no error")
	}
}

func TestConfigJSON(t *testing.T) {
	b, err := ConfigJSON(Config{Style: StyleTorch, Classes: 11, SeqLen: 64})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Architectures []string          `json:"architectures"`
		ModelType     string            `json:"model_type"`
		MaxPositions  int               `json:"max_position_embeddings"`
		NumLabels     int               `json:"num_labels"`
		ID2Label      map[string]string `json:"id2label"`
		Label2ID      map[string]int    `json:"label2id"`
		VocabSize     int               `json:"vocab_size"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Architectures, []string{"DistilBertForSequenceClassification"}) || c.ModelType != "distilbert" ||
		c.MaxPositions != 64 || c.NumLabels != 11 || len(c.ID2Label) != 11 || c.ID2Label["10"] != "LABEL_10" ||
		c.Label2ID["LABEL_3"] != 3 || c.VocabSize != len(Vocabulary()) {
		t.Errorf("config %s", b)
	}
	if _, err := ConfigJSON(Config{}); err == nil {
		t.Error("bert style: no error")
	}
}

// TestVocabularyBasicTokenizer checks that every ASCII character a BERT
// basic tokenizer can leave (lowercased letters, digits, punctuation) is a
// token, after the digits and before the ## pieces.
func TestVocabularyBasicTokenizer(t *testing.T) {
	v := Vocabulary()
	index := map[string]int{}
	for i, tok := range v {
		index[tok] = i
	}
	for c := byte('!'); c <= '~'; c++ {
		s := strings.ToLower(string(c))
		if _, ok := index[s]; !ok {
			t.Errorf("%q is not a token", s)
		}
	}
	if len(Punctuation) != 32 {
		t.Errorf("%d punctuation characters", len(Punctuation))
	}
	first, last := index[Punctuation[:1]], index[Punctuation[len(Punctuation)-1:]]
	if first != index["9"]+1 || last != first+31 || index["##s"] != last+1 {
		t.Errorf("punctuation at %d..%d, 9 at %d, ##s at %d", first, last, index["9"], index["##s"])
	}
}
