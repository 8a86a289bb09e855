package tokenizer

import "strings"

// The character tables (tables_gen.go) are Hugging Face tokenizers' own
// decisions, probed from the library by internal/gentables, so that
// tokenization does not depend on the Unicode version of the Go toolchain
// or of golang.org/x/text. Regenerate with
//
//	go run ./internal/gentables/gen -tokenizers "$(scripts/install-tokenizers.sh)"
//
// internal/gentables' test fails when the committed tables are stale.

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// runeSet is a sorted list of disjoint ranges.
type runeSet []runeRange

func (s runeSet) has(r rune) bool {
	lo, hi := 0, len(s)
	for lo < hi { // first range whose hi >= r
		m := int(uint(lo+hi) >> 1)
		if s[m].hi < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(s) && s[lo].lo <= r
}

// isWhitespace is Hugging Face's whitespace test (Rust char::is_whitespace),
// used by BertNormalizer, BertPreTokenizer, WhitespaceSplit, Strip and the
// added tokens' lstrip/rstrip.
func isWhitespace(r rune) bool { return hfWhitespace.has(r) }

// isPunct is BertPreTokenizer's punctuation test.
func isPunct(r rune) bool { return hfPunct.has(r) }

// isChineseChar is BertNormalizer's handle_chinese_chars test.
func isChineseChar(r rune) bool { return hfChinese.has(r) }

// Hangul syllable decomposition (Unicode chapter 3.12); the generator
// checks that the library decomposes every syllable this way.
const (
	hangulBase = 0xAC00
	hangulLast = 0xD7A3
	jamoL      = 0x1100
	jamoV      = 0x1161
	jamoT      = 0x11A7
	countV     = 21
	countT     = 28
)

// nfd is the library's canonical decomposition: each character replaced by
// its full decomposition, then every run of non-starters stably sorted by
// canonical combining class.
func nfd(s string) string {
	if !needsNorm(s) {
		return s
	}
	return string(decompose(s, false))
}

// nfkd is the library's compatibility decomposition.
func nfkd(s string) string {
	if !needsNorm(s) {
		return s
	}
	return string(decompose(s, true))
}

// nfc is the library's canonical composition (NFD, then composition).
func nfc(s string) string {
	if !needsNorm(s) {
		return s
	}
	return string(compose(decompose(s, false)))
}

// nfkc is the library's compatibility composition (NFKD, then composition).
func nfkc(s string) string {
	if !needsNorm(s) {
		return s
	}
	return string(compose(decompose(s, true)))
}

// needsNorm reports whether s has a character that any normalization form
// could change (all below U+00A0 are left alone by every form).
func needsNorm(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xC2 {
			return true
		}
	}
	return false
}

// decompose returns the full canonical (or, with compat, compatibility)
// decomposition of s in canonical order.
func decompose(s string, compat bool) []rune {
	buf := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r < firstDecomposable:
			buf = append(buf, r) // TestTableFastPaths
			continue
		case r >= hangulBase && r <= hangulLast:
			i := r - hangulBase
			buf = append(buf, jamoL+i/(countV*countT), jamoV+(i%(countV*countT))/countT)
			if t := i % countT; t != 0 {
				buf = append(buf, jamoT+t)
			}
			continue
		case compat:
			if d, ok := hfDecompK[r]; ok {
				buf = append(buf, []rune(d)...)
				continue
			}
		}
		if d, ok := hfDecomp[r]; ok {
			buf = append(buf, []rune(d)...)
		} else {
			buf = append(buf, r)
		}
	}
	// Canonical ordering: insertion sort inside each run of non-starters
	// (stable, so equal classes keep their order).
	for i := 1; i < len(buf); i++ {
		c := ccc(buf[i])
		if c == 0 {
			continue
		}
		for j := i; j > 0; j-- {
			p := ccc(buf[j-1])
			if p == 0 || p <= c {
				break
			}
			buf[j-1], buf[j] = buf[j], buf[j-1]
		}
	}
	return buf
}

// firstDecomposable is below every character that has a canonical or
// compatibility decomposition (U+00A0), and firstNonStarter below every
// character with a non-zero combining class (U+0300); TestTableFastPaths
// checks both against the tables.
const (
	firstDecomposable = 0xA0
	firstNonStarter   = 0x300
)

func ccc(r rune) uint8 {
	if r < firstNonStarter {
		return 0
	}
	return hfCCC[r]
}

// compose is the canonical composition algorithm (UAX #15) over a
// decomposed, canonically ordered buffer, in place.
func compose(buf []rune) []rune {
	if len(buf) == 0 {
		return buf
	}
	out := buf[:0]
	starter := -1 // index in out of the last starter
	lastCC := 0   // class of the last character appended
	for _, ch := range buf {
		cc := int(ccc(ch))
		if starter >= 0 {
			adjacent := len(out)-1 == starter
			if adjacent || (lastCC != 0 && lastCC < cc) {
				if c, ok := composePair(out[starter], ch); ok {
					out[starter] = c
					continue
				}
			}
		}
		if cc == 0 {
			starter = len(out)
		}
		lastCC = cc
		out = append(out, ch)
	}
	return out
}

func composePair(a, b rune) (rune, bool) {
	const lCount, vCount, tCount = 19, 21, 28
	switch {
	case a >= jamoL && a < jamoL+lCount && b >= jamoV && b < jamoV+vCount:
		return hangulBase + ((a-jamoL)*vCount+(b-jamoV))*tCount, true
	case a >= hangulBase && a <= hangulLast && (a-hangulBase)%tCount == 0 && b > jamoT && b < jamoT+tCount:
		return a + (b - jamoT), true
	}
	c, ok := hfCompose[[2]rune{a, b}]
	return c, ok
}

// lowercase is the library's Lowercase normalizer: each character replaced
// by its Rust char::to_lowercase mapping (no context rules: final sigma is
// not special).
func lowercase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 { // ASCII: A-Z only (TestTableFastPaths)
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		if l, ok := hfLower[r]; ok {
			b.WriteString(l)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// dropRunes removes the characters of set from s.
func dropRunes(s string, set runeSet) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if !set.has(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
