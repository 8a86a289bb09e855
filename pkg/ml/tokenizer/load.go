package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf8"
)

func formatErrorf(format string, args ...any) error {
	return &formatError{msg: fmt.Sprintf(format, args...)}
}

// specialNames are the BERT special token names of a vocab.txt tokenizer.
type specialNames struct {
	unk, cls, sep, pad, mask string
}

var defaultSpecials = specialNames{unk: "[UNK]", cls: "[CLS]", sep: "[SEP]", pad: "[PAD]", mask: "[MASK]"}

// vocabConfig is the configuration of a vocab.txt tokenizer.
type vocabConfig struct {
	lowercase, stripAccents, chinese bool
	maxLength                        int
	specials                         specialNames
}

// FromVocab builds a tokenizer from the bytes of a BERT vocab.txt (one token
// per line, id = zero-based line number) with Hugging Face's
// BertTokenizerFast defaults: text cleaning, CJK spacing, "##" continuation
// prefix, 100-rune words, and [UNK]/[CLS]/[SEP]/[PAD]/[MASK] matched as
// special tokens in the input text. A token listed twice maps to its last
// line, as in Hugging Face's load_vocab.
func FromVocab(vocab []byte, opts Options) (*Tokenizer, error) {
	if opts.MaxLength < 0 || opts.MaxLength == 1 || opts.MaxLength > maxSeqLength {
		return nil, fmt.Errorf("tokenizer: Options.MaxLength %d is invalid; use 0 for %d or a value in [2, %d]", opts.MaxLength, defaultMaxLength, maxSeqLength)
	}
	return fromVocab(vocab, vocabConfig{
		lowercase:    opts.Lowercase,
		stripAccents: opts.StripAccents,
		chinese:      true,
		maxLength:    opts.MaxLength,
		specials:     defaultSpecials,
	})
}

func fromVocab(vocab []byte, cfg vocabConfig) (*Tokenizer, error) {
	if cfg.maxLength == 0 {
		cfg.maxLength = defaultMaxLength
	}
	if n := bytes.Count(vocab, []byte{'\n'}); n > maxVocab {
		return nil, formatErrorf("vocab.txt: %d lines exceed the limit of %d tokens; check that the file is a WordPiece vocabulary", n, maxVocab)
	}
	var tokens []string
	rest := vocab
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if !utf8.Valid(line) {
			return nil, formatErrorf("vocab.txt: line %d is not valid UTF-8; re-save the vocabulary as UTF-8", len(tokens)+1)
		}
		tokens = append(tokens, string(line))
	}
	if len(tokens) > maxVocab {
		return nil, formatErrorf("vocab.txt: %d tokens exceed the limit of %d", len(tokens), maxVocab)
	}
	t := &Tokenizer{
		vocab:     make(map[string]int64, len(tokens)),
		idToToken: tokens,
		idKnown:   make([]bool, len(tokens)),
		prefix:    "##",
		maxChars:  defaultMaxInputChars,
		maxLength: cfg.maxLength,
		norm: []normStep{{
			kind:         normBert,
			cleanText:    true,
			chinese:      cfg.chinese,
			stripAccents: cfg.stripAccents,
			lowercase:    cfg.lowercase,
		}},
		preTok: []preTokStep{preBert},
	}
	for i, tok := range tokens {
		t.vocab[tok] = int64(i) // last occurrence wins, as in Hugging Face
		t.idKnown[i] = true
	}
	t.ids = t.vocab
	sp := cfg.specials
	for _, req := range []struct {
		name, key string
		id        *int64
	}{
		{sp.unk, "unk_token", &t.unkID},
		{sp.cls, "cls_token", &t.clsID},
		{sp.sep, "sep_token", &t.sepID},
		{sp.pad, "pad_token", &t.padID},
	} {
		id, ok := t.vocab[req.name]
		if !ok {
			return nil, formatErrorf("vocab.txt: required %s %q is not in the vocabulary; add it as a line or use the model's own vocab.txt", req.key, req.name)
		}
		*req.id = id
	}
	var added []addedToken
	seen := map[string]bool{}
	for _, name := range []string{sp.pad, sp.unk, sp.cls, sp.sep, sp.mask} {
		if id, ok := t.vocab[name]; ok && name != "" && !seen[name] {
			seen[name] = true
			added = append(added, addedToken{content: name, id: id, spec: true})
		}
	}
	t.rawAdded = newMatcher(added)
	return t, nil
}

// JSON shapes of tokenizer.json.
type jsonFile struct {
	Truncation    *jsonTruncation `json:"truncation"`
	Padding       *jsonPadding    `json:"padding"`
	AddedTokens   []jsonAdded     `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         json.RawMessage `json:"model"`
}

type jsonTruncation struct {
	MaxLength *int64 `json:"max_length"`
}

type jsonPadding struct {
	PadID    *int64  `json:"pad_id"`
	PadToken *string `json:"pad_token"`
}

type jsonAdded struct {
	ID         *int64 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type jsonModel struct {
	Type                    string          `json:"type"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    *int64          `json:"max_input_chars_per_word"`
	Vocab                   json.RawMessage `json:"vocab"`
}

type jsonNormalizer struct {
	Type              string            `json:"type"`
	CleanText         *bool             `json:"clean_text"`
	HandleChineseChar *bool             `json:"handle_chinese_chars"`
	StripAccents      *bool             `json:"strip_accents"`
	Lowercase         *bool             `json:"lowercase"`
	StripLeft         *bool             `json:"strip_left"`
	StripRight        *bool             `json:"strip_right"`
	Normalizers       []json.RawMessage `json:"normalizers"`
}

type jsonPreTokenizer struct {
	Type          string            `json:"type"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
}

type jsonPostProcessor struct {
	Type          string                       `json:"type"`
	Single        []jsonTemplatePiece          `json:"single"`
	SpecialTokens map[string]jsonTemplateToken `json:"special_tokens"`
	Cls           []json.RawMessage            `json:"cls"`
	Sep           []json.RawMessage            `json:"sep"`
}

type jsonTemplatePiece struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID string `json:"id"`
	} `json:"Sequence"`
}

type jsonTemplateToken struct {
	IDs []int64 `json:"ids"`
}

func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

// FromJSON builds a tokenizer from the bytes of a Hugging Face tokenizer.json
// whose model.type is "WordPiece". It reads the model vocabulary and
// parameters, the normalizer (BertNormalizer, or a Sequence of BertNormalizer,
// Lowercase, StripAccents, NFD, NFC, NFKD, NFKC and Strip), the pre-tokenizer
// (BertPreTokenizer, WhitespaceSplit or a Sequence of them), added_tokens,
// truncation.max_length (512 when null), post_processor (TemplateProcessing
// or BertProcessing) for the [CLS]/[SEP] ids and padding.pad_id. Other
// components are rejected with ErrFormat rather than approximated.
func FromJSON(doc []byte) (*Tokenizer, error) {
	var f jsonFile
	if err := json.Unmarshal(doc, &f); err != nil {
		return nil, formatErrorf("tokenizer.json: invalid JSON: %v; the file must be a Hugging Face tokenizer.json", err)
	}
	if isNull(f.Model) {
		return nil, formatErrorf("tokenizer.json: missing \"model\" object; the file must be a Hugging Face tokenizer.json")
	}
	m := new(jsonModel)
	if err := json.Unmarshal(f.Model, m); err != nil {
		return nil, formatErrorf("tokenizer.json: model: %v", err)
	}
	kind, err := modelType(f.Model)
	if err != nil {
		return nil, err
	}
	if kind != "WordPiece" {
		return nil, formatErrorf("tokenizer.json: model type %q is not supported (WordPiece only)", kind)
	}

	vocab, idToToken, err := parseJSONVocab(m.Vocab)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{
		vocab:     vocab,
		prefix:    "##",
		maxChars:  defaultMaxInputChars,
		maxLength: defaultMaxLength,
	}
	if m.ContinuingSubwordPrefix != nil {
		t.prefix = *m.ContinuingSubwordPrefix
	}
	if m.MaxInputCharsPerWord != nil {
		v := *m.MaxInputCharsPerWord
		if v < 0 || v > maxInputCharsLimit {
			return nil, formatErrorf("tokenizer.json: model.max_input_chars_per_word %d is out of range; use a value in [0, %d] such as 100", v, maxInputCharsLimit)
		}
		t.maxChars = int(v)
	}
	unk := "[UNK]"
	if m.UnkToken != nil {
		unk = *m.UnkToken
	}
	id, ok := vocab[unk]
	if !ok {
		return nil, formatErrorf("tokenizer.json: model.unk_token %q is not in model.vocab; add it to the vocabulary or set model.unk_token to a token that exists", unk)
	}
	t.unkID = id

	if f.Truncation != nil && f.Truncation.MaxLength != nil {
		v := *f.Truncation.MaxLength
		if v < 2 || v > maxSeqLength {
			return nil, formatErrorf("tokenizer.json: truncation.max_length %d is out of range; use a value in [2, %d] or null", v, maxSeqLength)
		}
		t.maxLength = int(v)
	}

	// Added tokens extend the id space past the model vocabulary.
	t.ids = make(map[string]int64, len(vocab)+len(f.AddedTokens))
	for k, v := range vocab {
		t.ids[k] = v
	}
	extra := map[int64]string{}
	seenAdded := map[string]bool{}
	var added []addedToken
	for i, a := range f.AddedTokens {
		if a.ID == nil {
			return nil, formatErrorf("tokenizer.json: added_tokens[%d] (%q) has no id", i, a.Content)
		}
		if a.Content == "" {
			return nil, formatErrorf("tokenizer.json: added_tokens[%d] has empty content; remove it", i)
		}
		id := *a.ID
		if seenAdded[a.Content] {
			return nil, formatErrorf("tokenizer.json: added_tokens[%d] %q is listed twice; remove the duplicate", i, a.Content)
		}
		seenAdded[a.Content] = true
		if prev, ok := t.ids[a.Content]; ok {
			if prev != id {
				return nil, formatErrorf("tokenizer.json: added_tokens[%d] %q has id %d but the vocabulary maps it to %d; make the ids agree", i, a.Content, id, prev)
			}
		} else {
			if id < int64(len(idToToken)) {
				return nil, formatErrorf("tokenizer.json: added_tokens[%d] %q has id %d, which model.vocab already uses for %q; give it an unused id", i, a.Content, id, safeToken(idToToken, id))
			}
			if other, dup := extra[id]; dup {
				return nil, formatErrorf("tokenizer.json: added_tokens[%d] %q has id %d, already used by added token %q", i, a.Content, id, other)
			}
			if id >= int64(len(idToToken))+int64(len(f.AddedTokens)) {
				return nil, formatErrorf("tokenizer.json: added_tokens[%d] %q has id %d, out of range for %d vocabulary entries and %d added tokens; ids must be contiguous", i, a.Content, id, len(idToToken), len(f.AddedTokens))
			}
			extra[id] = a.Content
			t.ids[a.Content] = id
		}
		added = append(added, addedToken{
			content: a.Content, id: id, singleWord: a.SingleWord, lstrip: a.LStrip,
			rstrip: a.RStrip, normalized: a.Normalized, spec: a.Special,
		})
	}
	size := int64(len(idToToken)) + int64(len(extra))
	t.idToToken = append(idToToken, make([]string, len(extra))...)
	t.idKnown = make([]bool, size)
	for i := range idToToken {
		t.idKnown[i] = true
	}
	for id, content := range extra {
		if id >= size {
			return nil, formatErrorf("tokenizer.json: added token %q has id %d but the id space has only %d entries; added-token ids must follow model.vocab without gaps", content, id, size)
		}
		t.idToToken[id] = content
		t.idKnown[id] = true
	}

	if t.norm, err = parseNormalizer(f.Normalizer, "normalizer", 0); err != nil {
		return nil, err
	}
	if t.preTok, err = parsePreTokenizer(f.PreTokenizer, "pre_tokenizer", 0); err != nil {
		return nil, err
	}
	if err := t.parsePostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	if err := t.parsePadding(f.Padding); err != nil {
		return nil, err
	}

	var raw, normalized []addedToken
	for _, a := range added {
		if a.normalized {
			a.content = t.normalize(a.content)
			normalized = append(normalized, a)
		} else {
			raw = append(raw, a)
		}
	}
	t.rawAdded = newMatcher(raw)
	t.normAdded = newMatcher(normalized)
	return t, nil
}

// modelType returns model.type, or when the field is absent the model type
// Hugging Face's tokenizers library infers from the fields, as it does for
// files such as bert-base-uncased's own tokenizer.json: it tries BPE
// (needs vocab and merges), then WordPiece (needs vocab, unk_token,
// continuing_subword_prefix and max_input_chars_per_word), then WordLevel
// (vocab and unk_token), then Unigram (a vocab list); a null field counts
// as absent. A null or non-string type is an error there too.
func modelType(raw json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return "", formatErrorf("tokenizer.json: model must be an object")
	}
	if t, ok := fields["type"]; ok {
		var s string
		if json.Unmarshal(t, &s) != nil || isNull(t) {
			return "", formatErrorf("tokenizer.json: model.type must be a string such as \"WordPiece\"")
		}
		return s, nil
	}
	has := func(k string) bool { v, ok := fields[k]; return ok && !isNull(v) }
	vocab := bytes.TrimSpace(fields["vocab"])
	isObject := len(vocab) > 0 && vocab[0] == '{'
	switch {
	case has("vocab") && has("merges"):
		return "BPE", nil
	case isObject && has("unk_token") && has("continuing_subword_prefix") && has("max_input_chars_per_word"):
		return "WordPiece", nil
	case isObject && has("unk_token"):
		return "WordLevel", nil
	case len(vocab) > 0 && vocab[0] == '[':
		return "Unigram", nil
	}
	return "", formatErrorf("tokenizer.json: model has no type and its fields match no model; a WordPiece model needs vocab, unk_token, continuing_subword_prefix and max_input_chars_per_word (or set model.type to \"WordPiece\")")
}

func safeToken(tokens []string, id int64) string {
	if id >= 0 && id < int64(len(tokens)) {
		return tokens[id]
	}
	return ""
}

// parseJSONVocab reads model.vocab, rejecting duplicate tokens, duplicate or
// out-of-range ids and oversized vocabularies.
func parseJSONVocab(raw json.RawMessage) (map[string]int64, []string, error) {
	if isNull(raw) {
		return nil, nil, formatErrorf("tokenizer.json: model.vocab is missing; a WordPiece model needs a token->id map")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, formatErrorf("tokenizer.json: model.vocab must be an object mapping tokens to ids")
	}
	vocab := map[string]int64{}
	var pairs []struct {
		tok string
		id  int64
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, formatErrorf("tokenizer.json: model.vocab: %v", err)
		}
		key, _ := kt.(string)
		vt, err := dec.Token()
		if err != nil {
			return nil, nil, formatErrorf("tokenizer.json: model.vocab: %v", err)
		}
		num, ok := vt.(json.Number)
		if !ok {
			return nil, nil, formatErrorf("tokenizer.json: model.vocab[%q] is not a number; ids must be integers", key)
		}
		id, err := strconv.ParseInt(num.String(), 10, 64)
		if err != nil || id < 0 {
			return nil, nil, formatErrorf("tokenizer.json: model.vocab[%q] = %s is not a valid id; ids must be integers >= 0", key, num)
		}
		if _, dup := vocab[key]; dup {
			return nil, nil, formatErrorf("tokenizer.json: model.vocab lists token %q twice; remove the duplicate", key)
		}
		if len(vocab) >= maxVocab {
			return nil, nil, formatErrorf("tokenizer.json: model.vocab has more than %d entries", maxVocab)
		}
		vocab[key] = id
		pairs = append(pairs, struct {
			tok string
			id  int64
		}{key, id})
	}
	n := int64(len(pairs))
	tokens := make([]string, n)
	seen := make([]bool, n)
	for _, p := range pairs {
		if p.id >= n {
			return nil, nil, formatErrorf("tokenizer.json: model.vocab[%q] = %d is out of range; ids must be 0..%d (one per entry)", p.tok, p.id, n-1)
		}
		if seen[p.id] {
			return nil, nil, formatErrorf("tokenizer.json: model.vocab id %d is used by both %q and %q; ids must be unique", p.id, tokens[p.id], p.tok)
		}
		seen[p.id] = true
		tokens[p.id] = p.tok
	}
	return vocab, tokens, nil
}

const maxNesting = 8

func parseNormalizer(raw json.RawMessage, field string, depth int) ([]normStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	var n jsonNormalizer
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, formatErrorf("tokenizer.json: %s: %v", field, err)
	}
	boolOr := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	switch n.Type {
	case "BertNormalizer":
		lower := boolOr(n.Lowercase, true)
		return []normStep{{
			kind:         normBert,
			cleanText:    boolOr(n.CleanText, true),
			chinese:      boolOr(n.HandleChineseChar, true),
			stripAccents: boolOr(n.StripAccents, lower), // null follows lowercase
			lowercase:    lower,
		}}, nil
	case "Lowercase":
		return []normStep{{kind: normLowercase}}, nil
	case "StripAccents":
		return []normStep{{kind: normStripAccents}}, nil
	case "NFD":
		return []normStep{{kind: normNFD}}, nil
	case "NFC":
		return []normStep{{kind: normNFC}}, nil
	case "NFKD":
		return []normStep{{kind: normNFKD}}, nil
	case "NFKC":
		return []normStep{{kind: normNFKC}}, nil
	case "Strip":
		return []normStep{{kind: normStrip, left: boolOr(n.StripLeft, true), right: boolOr(n.StripRight, true)}}, nil
	case "Sequence":
		if depth >= maxNesting {
			return nil, formatErrorf("tokenizer.json: %s nests Sequence normalizers too deeply", field)
		}
		var steps []normStep
		for i, sub := range n.Normalizers {
			s, err := parseNormalizer(sub, fmt.Sprintf("%s.normalizers[%d]", field, i), depth+1)
			if err != nil {
				return nil, err
			}
			steps = append(steps, s...)
		}
		return steps, nil
	case "":
		return nil, formatErrorf("tokenizer.json: %s has no type; expected \"BertNormalizer\"", field)
	default:
		return nil, formatErrorf("tokenizer.json: %s type %q is not supported; use BertNormalizer (or a Sequence of BertNormalizer, Lowercase, StripAccents, NFD, NFC, NFKD, NFKC, Strip)", field, n.Type)
	}
}

func parsePreTokenizer(raw json.RawMessage, field string, depth int) ([]preTokStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	var p jsonPreTokenizer
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, formatErrorf("tokenizer.json: %s: %v", field, err)
	}
	switch p.Type {
	case "BertPreTokenizer":
		return []preTokStep{preBert}, nil
	case "WhitespaceSplit":
		return []preTokStep{preWhitespaceSplit}, nil
	case "Sequence":
		if depth >= maxNesting {
			return nil, formatErrorf("tokenizer.json: %s nests Sequence pre-tokenizers too deeply", field)
		}
		var steps []preTokStep
		for i, sub := range p.PreTokenizers {
			s, err := parsePreTokenizer(sub, fmt.Sprintf("%s.pretokenizers[%d]", field, i), depth+1)
			if err != nil {
				return nil, err
			}
			steps = append(steps, s...)
		}
		return steps, nil
	case "":
		return nil, formatErrorf("tokenizer.json: %s has no type; expected \"BertPreTokenizer\"", field)
	default:
		return nil, formatErrorf("tokenizer.json: pre_tokenizer type %q is not supported; use BertPreTokenizer or WhitespaceSplit", p.Type)
	}
}

func (t *Tokenizer) checkID(field string, id int64) error {
	if id < 0 || id >= int64(len(t.idToToken)) || !t.idKnown[id] {
		return formatErrorf("tokenizer.json: %s id %d is not a token id (vocabulary has %d ids)", field, id, len(t.idToToken))
	}
	return nil
}

func (t *Tokenizer) requireToken(name, field string) (int64, error) {
	id, ok := t.ids[name]
	if !ok {
		return 0, formatErrorf("tokenizer.json: %s token %q is not in the vocabulary; add it to model.vocab or configure %s", name, name, field)
	}
	return id, nil
}

func (t *Tokenizer) parsePostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		var err error
		if t.clsID, err = t.requireToken("[CLS]", "post_processor"); err != nil {
			return err
		}
		t.sepID, err = t.requireToken("[SEP]", "post_processor")
		return err
	}
	var p jsonPostProcessor
	if err := json.Unmarshal(raw, &p); err != nil {
		return formatErrorf("tokenizer.json: post_processor: %v", err)
	}
	switch p.Type {
	case "TemplateProcessing":
		s := p.Single
		if len(s) != 3 || s[0].SpecialToken == nil || s[1].Sequence == nil || s[1].Sequence.ID != "A" || s[2].SpecialToken == nil {
			return formatErrorf("tokenizer.json: post_processor.single must be the BERT template [CLS] $A [SEP] (SpecialToken, Sequence A, SpecialToken)")
		}
		ids := [2]int64{}
		for i, piece := range []int{0, 2} {
			name := s[piece].SpecialToken.ID
			st, ok := p.SpecialTokens[name]
			if !ok || len(st.IDs) != 1 {
				return formatErrorf("tokenizer.json: post_processor.special_tokens[%q] must exist with exactly one id", name)
			}
			ids[i] = st.IDs[0]
		}
		t.clsID, t.sepID = ids[0], ids[1]
	case "BertProcessing":
		var err error
		if t.clsID, err = tokenIDPair(p.Cls, "post_processor.cls"); err != nil {
			return err
		}
		if t.sepID, err = tokenIDPair(p.Sep, "post_processor.sep"); err != nil {
			return err
		}
	default:
		return formatErrorf("tokenizer.json: post_processor type %q is not supported; use TemplateProcessing or BertProcessing", p.Type)
	}
	if err := t.checkID("post_processor [CLS]", t.clsID); err != nil {
		return err
	}
	return t.checkID("post_processor [SEP]", t.sepID)
}

func tokenIDPair(pair []json.RawMessage, field string) (int64, error) {
	var id int64
	if len(pair) != 2 || json.Unmarshal(pair[1], &id) != nil {
		return 0, formatErrorf("tokenizer.json: %s must be a [token, id] pair", field)
	}
	return id, nil
}

func (t *Tokenizer) parsePadding(p *jsonPadding) error {
	switch {
	case p != nil && p.PadID != nil:
		t.padID = *p.PadID
		return t.checkID("padding.pad_id", t.padID)
	case p != nil && p.PadToken != nil:
		var err error
		t.padID, err = t.requireToken(*p.PadToken, "padding.pad_token")
		return err
	default:
		var err error
		t.padID, err = t.requireToken("[PAD]", "padding")
		return err
	}
}

// tokenizerConfig is the subset of tokenizer_config.json that Load reads.
type tokenizerConfig struct {
	DoLowerCase          *bool           `json:"do_lower_case"`
	StripAccents         *bool           `json:"strip_accents"`
	TokenizeChineseChars *bool           `json:"tokenize_chinese_chars"`
	ModelMaxLength       json.Number     `json:"model_max_length"`
	UnkToken             json.RawMessage `json:"unk_token"`
	ClsToken             json.RawMessage `json:"cls_token"`
	SepToken             json.RawMessage `json:"sep_token"`
	PadToken             json.RawMessage `json:"pad_token"`
	MaskToken            json.RawMessage `json:"mask_token"`
}

// maxLength returns model_max_length, or 0 when absent or a placeholder
// (transformers writes 1e30 for "unknown").
func (c *tokenizerConfig) maxLength() (int, error) {
	if c.ModelMaxLength == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(c.ModelMaxLength.String(), 64)
	if err != nil || f != math.Trunc(f) || f < 2 {
		return 0, formatErrorf("tokenizer_config.json: model_max_length %s is invalid; use an integer >= 2", c.ModelMaxLength)
	}
	if f > maxSeqLength {
		return 0, nil
	}
	return int(f), nil
}

// specialToken reads a special token given as a string or as an AddedToken
// object {"content": ...}; def when absent.
func specialToken(raw json.RawMessage, field, def string) (string, error) {
	if isNull(raw) {
		return def, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
		return obj.Content, nil
	}
	return "", formatErrorf("tokenizer_config.json: %s must be a string or an object with \"content\"", field)
}

func readConfig(dir string) (*tokenizerConfig, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c tokenizerConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return nil, formatErrorf("tokenizer_config.json: invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, formatErrorf("tokenizer_config.json: trailing data after the JSON object")
	}
	return &c, nil
}

// Load reads dir/tokenizer.json if present, else dir/vocab.txt (with
// dir/tokenizer_config.json's do_lower_case (default true), strip_accents
// (default: follow do_lower_case), tokenize_chinese_chars, the special token
// names and model_max_length when present). With tokenizer.json, the
// config's model_max_length is used when truncation is null. The error names
// both files when neither exists.
func Load(dir string) (*Tokenizer, error) {
	cfg, err := readConfig(dir)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: load %s: %w", dir, err)
	}
	cfgMax := 0
	if cfg != nil {
		if cfgMax, err = cfg.maxLength(); err != nil {
			return nil, fmt.Errorf("tokenizer: load %s: %w", dir, err)
		}
	}

	jsonPath := filepath.Join(dir, "tokenizer.json")
	doc, err := os.ReadFile(jsonPath)
	switch {
	case err == nil:
		t, err := FromJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: load %s: %w", jsonPath, err)
		}
		if !hasTruncation(doc) && cfgMax > 0 {
			t.maxLength = cfgMax
		}
		return t, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("tokenizer: load %s: %w", dir, err)
	}

	vocabPath := filepath.Join(dir, "vocab.txt")
	vocab, err := os.ReadFile(vocabPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: load %s: neither tokenizer.json nor vocab.txt exists: %w", dir, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer: load %s: %w", dir, err)
	}
	vc := vocabConfig{lowercase: true, stripAccents: true, chinese: true, maxLength: cfgMax, specials: defaultSpecials}
	if cfg != nil {
		if cfg.DoLowerCase != nil {
			vc.lowercase = *cfg.DoLowerCase
		}
		vc.stripAccents = vc.lowercase
		if cfg.StripAccents != nil {
			vc.stripAccents = *cfg.StripAccents
		}
		if cfg.TokenizeChineseChars != nil {
			vc.chinese = *cfg.TokenizeChineseChars
		}
		sp := &vc.specials
		for _, f := range []struct {
			raw   json.RawMessage
			field string
			dst   *string
		}{
			{cfg.UnkToken, "unk_token", &sp.unk},
			{cfg.ClsToken, "cls_token", &sp.cls},
			{cfg.SepToken, "sep_token", &sp.sep},
			{cfg.PadToken, "pad_token", &sp.pad},
			{cfg.MaskToken, "mask_token", &sp.mask},
		} {
			if *f.dst, err = specialToken(f.raw, f.field, *f.dst); err != nil {
				return nil, fmt.Errorf("tokenizer: load %s: %w", dir, err)
			}
		}
	}
	t, err := fromVocab(vocab, vc)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: load %s: %w", vocabPath, err)
	}
	return t, nil
}

// hasTruncation reports whether a tokenizer.json sets truncation.max_length.
func hasTruncation(doc []byte) bool {
	var f struct {
		Truncation *jsonTruncation `json:"truncation"`
	}
	return json.Unmarshal(doc, &f) == nil && f.Truncation != nil && f.Truncation.MaxLength != nil
}
