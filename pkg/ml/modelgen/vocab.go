package modelgen

import (
	"fmt"
	"strings"
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

// Punctuation is the ASCII punctuation, each character of which is a
// token of the generated vocabulary (a BERT basic tokenizer splits every
// punctuation character into a token of its own).
const Punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// Vocabulary returns the generated WordPiece vocabulary: the special tokens,
// then lowercase words, single letters and digits, the ASCII punctuation
// characters (Punctuation), then ## continuations (common suffixes,
// letters, digits). Every ASCII word of letters and digits tokenizes
// without [UNK], and so does any ASCII text split the way a BERT basic
// tokenizer splits it (lowercased, punctuation characters apart). Tokens
// are unique; the order is fixed.
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
	for _, c := range Punctuation {
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
