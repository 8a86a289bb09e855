package modelgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Hugging Face tokenizer.json, in the field order the tokenizers library
// writes.
type hfTokenizer struct {
	Version       string         `json:"version"`
	Truncation    any            `json:"truncation"`
	Padding       any            `json:"padding"`
	AddedTokens   []hfAddedToken `json:"added_tokens"`
	Normalizer    hfNormalizer   `json:"normalizer"`
	PreTokenizer  hfType         `json:"pre_tokenizer"`
	PostProcessor hfTemplate     `json:"post_processor"`
	Decoder       hfDecoder      `json:"decoder"`
	Model         hfWordPiece    `json:"model"`
}

type hfAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	Lstrip     bool   `json:"lstrip"`
	Rstrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type hfType struct {
	Type string `json:"type"`
}

type hfNormalizer struct {
	Type               string `json:"type"`
	CleanText          bool   `json:"clean_text"`
	HandleChineseChars bool   `json:"handle_chinese_chars"`
	StripAccents       *bool  `json:"strip_accents"`
	Lowercase          bool   `json:"lowercase"`
}

type hfTemplate struct {
	Type          string                     `json:"type"`
	Single        []hfPiece                  `json:"single"`
	Pair          []hfPiece                  `json:"pair"`
	SpecialTokens map[string]hfSpecialTokens `json:"special_tokens"`
}

// hfPiece is {"SpecialToken": {...}} or {"Sequence": {...}}.
type hfPiece struct {
	SpecialToken *hfPieceID `json:"SpecialToken,omitempty"`
	Sequence     *hfPieceID `json:"Sequence,omitempty"`
}

type hfPieceID struct {
	ID     string `json:"id"`
	TypeID int    `json:"type_id"`
}

type hfSpecialTokens struct {
	ID     string   `json:"id"`
	IDs    []int    `json:"ids"`
	Tokens []string `json:"tokens"`
}

type hfDecoder struct {
	Type    string `json:"type"`
	Prefix  string `json:"prefix"`
	Cleanup bool   `json:"cleanup"`
}

type hfWordPiece struct {
	Type                    string  `json:"type"`
	UnkToken                string  `json:"unk_token"`
	ContinuingSubwordPrefix string  `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    int     `json:"max_input_chars_per_word"`
	Vocab                   hfVocab `json:"vocab"`
}

// hfVocab is written as a JSON object of token: id in id order, as the
// tokenizers library writes it (not in Go's sorted key order).
type hfVocab []string

func (v hfVocab) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, tok := range v {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := marshalJSON(tok)
		if err != nil {
			return nil, err
		}
		buf.Write(bytes.TrimSuffix(k, []byte("\n")))
		buf.WriteByte(':')
		buf.WriteString(strconv.Itoa(i))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshalJSON encodes v without HTML escaping (so "<" stays "<", as the
// tokenizers library and Python's json write it), ending in a newline.
func marshalJSON(v any, indent ...string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if len(indent) > 0 {
		enc.SetIndent("", indent[0])
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TokenizerJSON returns a Hugging Face tokenizer.json (tokenizers library
// format, indented by two spaces) for a BERT uncased WordPiece tokenizer
// over vocab: the BertNormalizer (lowercase, no accent stripping), the
// BertPreTokenizer, the [CLS] A [SEP] (B [SEP]) template and the WordPiece
// model with vocab's ids. vocab must hold the special tokens; the same
// vocab always gives the same bytes.
func TokenizerJSON(vocab []string) ([]byte, error) {
	id := func(tok string) (int, error) {
		i := slices.Index(vocab, tok)
		if i < 0 {
			return 0, fmt.Errorf("modelgen: vocabulary has no %s", tok)
		}
		return i, nil
	}
	var added []hfAddedToken
	for _, tok := range []string{PadToken, UnkToken, ClsToken, SepToken, MaskToken} {
		i, err := id(tok)
		if err != nil {
			return nil, err
		}
		added = append(added, hfAddedToken{ID: i, Content: tok, Special: true})
	}
	cls, _ := id(ClsToken)
	sep, _ := id(SepToken)
	special := func(tok string, typ int) hfPiece { return hfPiece{SpecialToken: &hfPieceID{ID: tok, TypeID: typ}} }
	sequence := func(s string, typ int) hfPiece { return hfPiece{Sequence: &hfPieceID{ID: s, TypeID: typ}} }
	t := hfTokenizer{
		Version:     "1.0",
		AddedTokens: added,
		Normalizer: hfNormalizer{Type: "BertNormalizer", CleanText: true, HandleChineseChars: true,
			Lowercase: true},
		PreTokenizer: hfType{Type: "BertPreTokenizer"},
		PostProcessor: hfTemplate{
			Type:   "TemplateProcessing",
			Single: []hfPiece{special(ClsToken, 0), sequence("A", 0), special(SepToken, 0)},
			Pair:   []hfPiece{special(ClsToken, 0), sequence("A", 0), special(SepToken, 0), sequence("B", 1), special(SepToken, 1)},
			SpecialTokens: map[string]hfSpecialTokens{ // "[CLS]" < "[SEP]": written in this order
				ClsToken: {ID: ClsToken, IDs: []int{cls}, Tokens: []string{ClsToken}},
				SepToken: {ID: SepToken, IDs: []int{sep}, Tokens: []string{SepToken}},
			},
		},
		Decoder: hfDecoder{Type: "WordPiece", Prefix: "##", Cleanup: true},
		Model: hfWordPiece{Type: "WordPiece", UnkToken: UnkToken, ContinuingSubwordPrefix: "##",
			MaxInputCharsPerWord: 100, Vocab: hfVocab(vocab)},
	}
	return marshalJSON(t, "  ")
}

// ConfigJSON returns the Hugging Face config.json of the torch-style model
// for cfg (zero fields take the defaults): a
// DistilBertForSequenceClassification with cfg's sizes, labels LABEL_0,
// LABEL_1, ... Keys are sorted and indented by two spaces, as transformers
// writes them.
func ConfigJSON(cfg Config) ([]byte, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Style != StyleTorch {
		return nil, errors.New("modelgen: config.json is written for the torch style only")
	}
	id2label := map[string]string{}
	label2id := map[string]int{}
	for i := 0; i < cfg.Classes; i++ {
		l := fmt.Sprintf("LABEL_%d", i)
		id2label[strconv.Itoa(i)] = l
		label2id[l] = i
	}
	c := map[string]any{
		"activation":              "gelu",
		"architectures":           []string{"DistilBertForSequenceClassification"},
		"attention_dropout":       0.1,
		"dim":                     cfg.Hidden,
		"dropout":                 0.1,
		"hidden_dim":              4 * cfg.Hidden,
		"id2label":                id2label,
		"initializer_range":       0.02,
		"label2id":                label2id,
		"max_position_embeddings": cfg.SeqLen,
		"model_type":              "distilbert",
		"n_heads":                 cfg.Heads,
		"n_layers":                cfg.Layers,
		"num_labels":              cfg.Classes,
		"pad_token_id":            0,
		"seq_classif_dropout":     0.2,
		"sinusoidal_pos_embds":    false,
		"torch_dtype":             "float32",
		"vocab_size":              cfg.Vocab,
	}
	return marshalJSON(c, "  ")
}
