package modelgen

import (
	"fmt"
	"strings"
	"unicode"
)

// Special tokens, at the start of every generated vocabulary. [PAD] is id 0.
const (
	PadToken  = "[PAD]"
	UnkToken  = "[UNK]"
	ClsToken  = "[CLS]"
	SepToken  = "[SEP]"
	MaskToken = "[MASK]"
)

// baseWords are whole-word tokens: common English and PII-ish words.
var baseWords = strings.Fields(`
the a an and or but if of to in on at by for with from as is are was were be been
being have has had do does did not no yes it its this that these those there here
i me my mine we us our you your he him his she her they them their who whom whose
what which when where why how all any some each every many much more most other
can could will would shall should may might must call called calling send sent
please thanks thank hello hi dear regards best sincerely contact reach email mail
phone number numbers mobile cell fax address street st avenue ave road rd city state
zip code postal country name first last full middle birth date born dob age
social security ssn tax id identification passport license driver card credit
debit account bank routing iban swift pin password user username login secret key
token api private personal data information record records medical health patient
insurance policy claim salary income payment pay paid invoice order customer client
employee staff manager office home work company team project meeting today tomorrow
yesterday week month year day time new old good bad big small john jane smith doe
alice bob mary james robert michael david sarah london paris york new washington
street main oak park lane drive north south east west
`)

// suffixes are ## continuation pieces (in addition to single letters and digits).
var suffixes = strings.Fields(`
s es ed ing er ers est ly ion ions tion ment ness able ful less al ity ive ous
ize ise ism ist an en on in ar or ed y ie ies th
`)

// Vocabulary returns the generated WordPiece vocabulary: the special tokens,
// then lowercase words, single letters and digits, then ## continuations
// (common suffixes, letters, digits). Every ASCII word of letters and
// digits tokenizes without [UNK]. Tokens are unique; the order is fixed.
func Vocabulary() []string {
	v := []string{PadToken, UnkToken, ClsToken, SepToken, MaskToken}
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			v = append(v, t)
		}
	}
	for _, t := range v {
		seen[t] = true
	}
	for _, w := range baseWords {
		add(w)
	}
	for c := 'a'; c <= 'z'; c++ {
		add(string(c))
	}
	for c := '0'; c <= '9'; c++ {
		add(string(c))
	}
	for _, s := range suffixes {
		add("##" + s)
	}
	for c := 'a'; c <= 'z'; c++ {
		add("##" + string(c))
	}
	for c := '0'; c <= '9'; c++ {
		add("##" + string(c))
	}
	return v
}

// padVocabulary extends v with "[unusedN]" tokens up to n entries.
func padVocabulary(v []string, n int) []string {
	for i := 0; len(v) < n; i++ {
		v = append(v, fmt.Sprintf("[unused%d]", i))
	}
	return v
}

// Tokenize turns text into seqLen token ids for vocab: lowercase, split on
// anything that is not a letter or digit, greedy longest-match WordPiece
// with ## continuations (a word with no full split becomes [UNK]), then
// [CLS] tokens [SEP], truncated to seqLen (keeping [SEP] last) and padded
// with [PAD] (id 0). vocab must hold the special tokens.
func Tokenize(vocab []string, text string, seqLen int) []int64 {
	if seqLen <= 0 {
		return nil
	}
	index := make(map[string]int64, len(vocab))
	for i, t := range vocab {
		if _, dup := index[t]; !dup {
			index[t] = int64(i)
		}
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	ids := []int64{index[ClsToken]}
	for _, w := range words {
		ids = append(ids, wordPiece(index, w)...)
	}
	if seqLen == 1 { // no room for [SEP]
		ids = ids[:1]
	} else {
		if len(ids) > seqLen-1 {
			ids = ids[:seqLen-1]
		}
		ids = append(ids, index[SepToken])
	}
	out := make([]int64, seqLen)
	pad := index[PadToken]
	for i := range out {
		out[i] = pad
	}
	copy(out, ids)
	return out
}

// maxWordRunes is the longest word WordPiece tries to split (as BERT).
const maxWordRunes = 100

func wordPiece(index map[string]int64, word string) []int64 {
	r := []rune(word)
	if len(r) > maxWordRunes {
		return []int64{index[UnkToken]}
	}
	var ids []int64
	for start := 0; start < len(r); {
		end := len(r)
		found := int64(-1)
		for ; end > start; end-- {
			piece := string(r[start:end])
			if start > 0 {
				piece = "##" + piece
			}
			if id, ok := index[piece]; ok {
				found = id
				break
			}
		}
		if found < 0 {
			return []int64{index[UnkToken]}
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}
