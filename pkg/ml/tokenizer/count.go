package tokenizer

// Count returns the number of tokens text gives without truncation:
// [CLS], every piece and [SEP], which is the Tokens of an Encode whose
// length is large enough. Encode(text, n).Truncated is exactly Count(text)
// > n (n <= 0: MaxLength()). It tokenizes the whole text, keeping one word's
// pieces at a time; a truncation condition commits this count (the count
// before truncation), so a cut input is shown as exceeding the maximum.
func (t *Tokenizer) Count(text string) int {
	text = validUTF8(text)
	n := 2
	var out []int64
	var buf []byte
	for _, seg := range t.rawAdded.split(text) {
		if seg.added {
			n++
			continue
		}
		for _, seg2 := range t.normAdded.split(t.normalize(seg.text)) {
			if seg2.added {
				n++
				continue
			}
			for _, word := range t.preTokenize(seg2.text) {
				out, buf = t.wordPiece(word, out[:0], buf)
				n += len(out)
			}
		}
	}
	return n
}
