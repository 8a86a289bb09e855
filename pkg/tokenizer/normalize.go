package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normKind is one supported Hugging Face normalizer.
type normKind int

const (
	normBert normKind = iota
	normLowercase
	normStripAccents // StripAccents normalizer: drops all marks (M)
	normNFD
	normNFC
	normNFKD
	normNFKC
	normStrip
)

// normStep is one normalizer of the pipeline.
type normStep struct {
	kind normKind
	// BertNormalizer
	cleanText, chinese, stripAccents, lowercase bool
	// Strip
	left, right bool
}

func (t *Tokenizer) normalize(s string) string {
	for _, st := range t.norm {
		s = st.apply(s)
	}
	return s
}

func (st normStep) apply(s string) string {
	switch st.kind {
	case normBert:
		if st.cleanText || st.chinese {
			s = bertClean(s, st.cleanText, st.chinese)
		}
		if st.stripAccents {
			s = dropRunes(norm.NFD.String(s), unicode.Mn)
		}
		if st.lowercase {
			s = lowercase(s)
		}
	case normLowercase:
		s = lowercase(s)
	case normStripAccents:
		s = dropRunes(s, unicode.M)
	case normNFD:
		s = norm.NFD.String(s)
	case normNFC:
		s = norm.NFC.String(s)
	case normNFKD:
		s = norm.NFKD.String(s)
	case normNFKC:
		s = norm.NFKC.String(s)
	case normStrip:
		if st.left {
			s = strings.TrimLeftFunc(s, unicode.IsSpace)
		}
		if st.right {
			s = strings.TrimRightFunc(s, unicode.IsSpace)
		}
	}
	return s
}

// bertClean is BertNormalizer's clean_text and handle_chinese_chars.
func bertClean(s string, clean, chinese bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if clean {
			if r == 0 || r == utf8.RuneError || isControl(r) {
				continue
			}
			if isWhitespace(r) {
				r = ' '
			}
		}
		if chinese && isChineseChar(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isWhitespace is BertNormalizer's whitespace test (Rust char::is_whitespace,
// i.e. the Unicode White_Space property, which contains \t \n \r and Zs).
func isWhitespace(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Zs, r)
}

// isControl is BertNormalizer's control test: Unicode "Other" as the Rust
// unicode_categories crate defines it (Cc, Cf, Co), except \t \n \r.
// Surrogates (Cs) cannot occur in Go strings.
func isControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
}

// isChineseChar reports whether r is in the CJK ideograph ranges of
// Hugging Face's BertNormalizer. The 0x2B920 lower bound (not 0x2B820, as in
// the original Python BERT) is what the tokenizers library uses.
func isChineseChar(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF,
		r >= 0x3400 && r <= 0x4DBF,
		r >= 0x20000 && r <= 0x2A6DF,
		r >= 0x2A700 && r <= 0x2B73F,
		r >= 0x2B740 && r <= 0x2B81F,
		r >= 0x2B920 && r <= 0x2CEAF,
		r >= 0xF900 && r <= 0xFAFF,
		r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// lowercase maps each rune with its full lowercase mapping (Rust
// char::to_lowercase): strings.ToLower except that U+0130 becomes "i̇".
func lowercase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 0x130 {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func dropRunes(s string, table *unicode.RangeTable) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if !unicode.Is(table, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// preTokStep is one supported pre-tokenizer.
type preTokStep int

const (
	preWhitespaceSplit preTokStep = iota // WhitespaceSplit
	preBert                              // BertPreTokenizer
)

// preTokenize splits s into words.
func (t *Tokenizer) preTokenize(s string) []string {
	words := []string{s}
	for _, st := range t.preTok {
		var next []string
		for _, w := range words {
			next = splitWord(next, w, st == preBert)
		}
		words = next
	}
	out := words[:0]
	for _, w := range words {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// splitWord appends the words of s: whitespace removed, and with punct set
// every punctuation character isolated as its own word.
func splitWord(out []string, s string, punct bool) []string {
	start := 0
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if start < i {
				out = append(out, s[start:i])
			}
			start = i + utf8.RuneLen(r)
		case punct && isPunct(r):
			if start < i {
				out = append(out, s[start:i])
			}
			end := i + utf8.RuneLen(r)
			out = append(out, s[i:end])
			start = end
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// isPunct is BertPreTokenizer's punctuation test: ASCII punctuation
// (33-47, 58-64, 91-96, 123-126) or Unicode category P.
func isPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// addedToken is an entry of tokenizer.json's added_tokens.
type addedToken struct {
	content                  string
	id                       int64
	singleWord, lstrip       bool
	rstrip, normalized, spec bool
}

// matcher finds added tokens in a string with leftmost-longest,
// non-overlapping matching (the Aho-Corasick LeftmostLongest semantics of
// the tokenizers AddedVocabulary).
type matcher struct {
	byFirst map[byte][]addedToken // candidates by first byte, longest first
}

func newMatcher(tokens []addedToken) *matcher {
	if len(tokens) == 0 {
		return nil
	}
	m := &matcher{byFirst: make(map[byte][]addedToken)}
	for _, tok := range tokens {
		if tok.content == "" {
			continue
		}
		m.byFirst[tok.content[0]] = append(m.byFirst[tok.content[0]], tok)
	}
	for _, list := range m.byFirst {
		sort.SliceStable(list, func(i, j int) bool { return len(list[i].content) > len(list[j].content) })
	}
	return m
}

// segment is a piece of text: either an added token or text to tokenize.
type segment struct {
	text  string
	added bool
	id    int64
}

// split cuts s into text and added-token segments, applying the tokens'
// single_word, lstrip and rstrip rules.
func (m *matcher) split(s string) []segment {
	if m == nil || s == "" {
		return []segment{{text: s}}
	}
	var out []segment
	offset := 0
	for i := 0; i < len(s); {
		tok, ok := m.longestAt(s, i)
		if !ok {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			continue
		}
		start, stop := i, i+len(tok.content)
		i = stop
		if tok.singleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if tok.lstrip {
			start = max(len(strings.TrimRightFunc(s[:start], unicode.IsSpace)), offset)
		}
		if tok.rstrip {
			stop = len(s) - len(strings.TrimLeftFunc(s[stop:], unicode.IsSpace))
		}
		if start < offset {
			continue // overlaps whitespace already taken by the previous token
		}
		if offset < start {
			out = append(out, segment{text: s[offset:start]})
		}
		out = append(out, segment{text: s[start:stop], added: true, id: tok.id})
		offset = stop
		if i < stop {
			i = stop
		}
	}
	if offset < len(s) {
		out = append(out, segment{text: s[offset:]})
	}
	return out
}

func (m *matcher) longestAt(s string, i int) (addedToken, bool) {
	for _, tok := range m.byFirst[s[i]] {
		if strings.HasPrefix(s[i:], tok.content) {
			return tok, true
		}
	}
	return addedToken{}, false
}

// isWordChar is the Unicode \w of the Rust regex crate:
// Alphabetic, M, Nd, Pc and Join_Control.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.In(r, unicode.Nl, unicode.Other_Alphabetic, unicode.M, unicode.Nd, unicode.Pc, unicode.Join_Control)
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}
