// Package tokenizer implements deterministic BERT-style WordPiece
// tokenization for ONNX transformer classifiers (BERT, DistilBERT exports).
//
// It reproduces the Hugging Face tokenizers pipeline used by those models:
// added (special) token extraction, BertNormalizer, BertPreTokenizer and the
// WordPiece model, followed by [CLS] ... [SEP] framing, truncation and
// padding. A tokenizer is built from a vocab.txt (FromVocab), a Hugging Face
// tokenizer.json (FromJSON) or a model directory (Load), so that a verifier
// can re-run the exact tokenization from committed input files.
package tokenizer

import (
	"errors"
	"unicode/utf8"
)

// ErrFormat reports an unreadable, malformed or unsupported tokenizer file.
// Errors returned by FromVocab, FromJSON and Load for such files match it
// with errors.Is; their messages name the offending field and the fix.
var ErrFormat = errors.New("tokenizer: unsupported or malformed tokenizer file")

// formatError is an ErrFormat with a specific message.
type formatError struct{ msg string }

func (e *formatError) Error() string { return e.msg }
func (e *formatError) Unwrap() error { return ErrFormat }

const (
	defaultMaxLength = 512
	// maxSeqLength bounds configured maximum lengths (not Encode's seqLen).
	maxSeqLength = 1 << 20
	// maxVocab bounds vocabulary sizes; larger inputs are rejected.
	maxVocab = 4_000_000
	// defaultMaxInputChars is WordPiece's max_input_chars_per_word default.
	defaultMaxInputChars = 100
	// maxInputCharsLimit bounds max_input_chars_per_word, which makes
	// WordPiece quadratic in the word length.
	maxInputCharsLimit = 1000
)

// Tokenizer is an immutable, concurrency-safe WordPiece tokenizer.
type Tokenizer struct {
	vocab     map[string]int64 // WordPiece model vocabulary
	ids       map[string]int64 // model vocabulary plus added tokens
	idToToken []string         // dense: index is the id
	idKnown   []bool           // false for ids that no token maps to

	unkID, clsID, sepID, padID int64
	prefix                     string // continuing_subword_prefix
	maxChars                   int    // max_input_chars_per_word
	maxLength                  int

	norm   []normStep   // normalizer, applied in order
	preTok []preTokStep // pre-tokenizer, applied in order

	rawAdded  *matcher // added tokens matched on the original text
	normAdded *matcher // added tokens matched on the normalized text
}

// Options configures a tokenizer built from a vocab.txt.
//
// bert-base-uncased style models need Lowercase and StripAccents both true;
// cased models need both false. (Hugging Face's strip_accents=None follows
// do_lower_case; Load applies that rule, FromVocab takes the fields as given.)
type Options struct {
	Lowercase    bool // lowercase the text before WordPiece
	StripAccents bool // NFD-decompose and drop nonspacing marks
	MaxLength    int  // maximum sequence length incl. [CLS]/[SEP]; 0 = 512
}

// Encoding is the model input for one text.
type Encoding struct {
	IDs, AttentionMask, TypeIDs []int64 // same length
	Tokens                      int     // real tokens including [CLS]/[SEP] (attention mask ones)
	Truncated                   bool    // the text did not fit in the length
}

// MaxLength returns the maximum sequence length (including [CLS] and [SEP])
// used by Encode when seqLen <= 0.
func (t *Tokenizer) MaxLength() int { return t.maxLength }

// VocabSize returns the size of the id space: every id produced by Encode is
// in [0, VocabSize()).
func (t *Tokenizer) VocabSize() int { return len(t.idToToken) }

// ID returns the id of token (a vocabulary entry or an added token).
func (t *Tokenizer) ID(token string) (int64, bool) {
	id, ok := t.ids[token]
	return id, ok
}

// Token returns the token string of id.
func (t *Tokenizer) Token(id int64) (string, bool) {
	if id < 0 || id >= int64(len(t.idToToken)) || !t.idKnown[id] {
		return "", false
	}
	return t.idToToken[id], true
}

// Encode tokenizes text as [CLS] pieces [SEP], truncated to seqLen tokens
// keeping [SEP] last. If seqLen <= 0 it truncates to MaxLength() and does
// not pad; otherwise it pads with the pad id to exactly seqLen (attention
// mask 0 on padding). TypeIDs are all 0. Invalid UTF-8 bytes are read as
// U+FFFD (which text cleaning drops). Memory use is proportional to seqLen
// and to the text length.
func (t *Tokenizer) Encode(text string, seqLen int) Encoding {
	limit, pad := seqLen, true
	if seqLen <= 0 {
		limit, pad = t.maxLength, false
	}
	budget := limit - 2
	if budget < 0 {
		budget = 0
	}
	// Collect at most budget+1 pieces: one more than fits tells truncation.
	pieces := t.pieces(text, budget+1)
	truncated := len(pieces) > budget || limit < 2
	if len(pieces) > budget {
		pieces = pieces[:budget]
	}

	n := len(pieces) + 2
	if limit < 2 {
		n = limit
	}
	size := n
	if pad {
		size = limit
	}
	enc := Encoding{
		IDs:           make([]int64, size),
		AttentionMask: make([]int64, size),
		TypeIDs:       make([]int64, size),
		Tokens:        n,
		Truncated:     truncated,
	}
	if n >= 1 {
		enc.IDs[0] = t.clsID
	}
	copy(enc.IDs[1:], pieces)
	if n >= 2 {
		enc.IDs[n-1] = t.sepID
	}
	for i := range size {
		if i < n {
			enc.AttentionMask[i] = 1
		} else {
			enc.IDs[i] = t.padID
		}
	}
	return enc
}

// pieces returns the ids of text without [CLS]/[SEP], stopping once max ids
// have been produced.
func (t *Tokenizer) pieces(text string, max int) []int64 {
	if max <= 0 {
		return nil
	}
	text = validUTF8(text)
	out := make([]int64, 0, min(max, len(text)+1))
	var buf []byte
	full := func() bool { return len(out) >= max }
	for _, seg := range t.rawAdded.split(text) {
		if full() {
			break
		}
		if seg.added {
			out = append(out, seg.id)
			continue
		}
		normalized := t.normalize(seg.text)
		for _, seg2 := range t.normAdded.split(normalized) {
			if full() {
				break
			}
			if seg2.added {
				out = append(out, seg2.id)
				continue
			}
			for _, word := range t.preTokenize(seg2.text) {
				if full() {
					break
				}
				out, buf = t.wordPiece(word, out, buf)
			}
		}
	}
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// wordPiece appends the greedy longest-match-first WordPiece ids of word.
func (t *Tokenizer) wordPiece(word string, out []int64, buf []byte) ([]int64, []byte) {
	if utf8.RuneCountInString(word) > t.maxChars {
		return append(out, t.unkID), buf
	}
	start0 := len(out)
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for start < end {
			sub := word[start:end]
			buf = buf[:0]
			if start > 0 {
				buf = append(buf, t.prefix...)
			}
			buf = append(buf, sub...)
			if id, ok := t.vocab[string(buf)]; ok {
				out = append(out, id)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(sub)
			end -= size
		}
		if !found {
			return append(out[:start0], t.unkID), buf
		}
		start = end
	}
	return out, buf
}

// validUTF8 replaces every invalid byte of s by U+FFFD (as ranging over the
// string does).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for _, r := range s {
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}
