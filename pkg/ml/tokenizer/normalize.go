package tokenizer

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// normKind is one supported Hugging Face normalizer.
type normKind int

const (
	normBert normKind = iota
	normLowercase
	normStripAccents // StripAccents normalizer: drops combining marks
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
			s = dropRunes(nfd(s), hfMn)
		}
		if st.lowercase {
			s = lowercase(s)
		}
	case normLowercase:
		s = lowercase(s)
	case normStripAccents:
		s = dropRunes(s, hfCombining)
	case normNFD:
		s = nfd(s)
	case normNFC:
		s = nfc(s)
	case normNFKD:
		s = nfkd(s)
	case normNFKC:
		s = nfkc(s)
	case normStrip:
		if st.left {
			s = strings.TrimLeftFunc(s, isWhitespace)
		}
		if st.right {
			s = strings.TrimRightFunc(s, isWhitespace)
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
			if hfCleanDrop.has(r) {
				continue
			}
			if hfCleanSpace.has(r) {
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
			start = max(len(strings.TrimRightFunc(s[:start], isWhitespace)), offset)
		}
		if tok.rstrip {
			stop = len(s) - len(strings.TrimLeftFunc(s[stop:], isWhitespace))
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

// isWordChar is the library's word-character test for added tokens marked
// single_word.
func isWordChar(r rune) bool { return hfWord.has(r) }

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}
