package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzFromJSON(f *testing.F) {
	f.Add([]byte(testJSON))
	f.Add([]byte(strings.Replace(testJSON, `"added_tokens": [`, `"added_tokens": [{"id": 39, "content": "<e>", "lstrip": true, "rstrip": true, "single_word": true, "normalized": true},`, 1)))
	f.Add([]byte(`{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "a": 4, "##a": 5}}, "post_processor": null, "normalizer": null, "pre_tokenizer": null}`))
	f.Add([]byte(`{"model": {"type": "BPE"}}`))
	untyped := `{"model": {"unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "a": 4, "##a": 5}}}`
	f.Add([]byte(untyped))
	for _, field := range []string{`"unk_token": "[UNK]"`, `"continuing_subword_prefix": "##"`, `"max_input_chars_per_word": 100`, `"vocab": {`} {
		f.Add([]byte(strings.Replace(untyped, field, field[:strings.Index(field, ":")+1]+" null, \"x\": "+field[strings.Index(field, ":")+1:], 1)))
	}
	f.Add([]byte(`{"model": {"type": null, "merges": null, "vocab": null}}`))
	f.Add([]byte(`{`))
	texts := []string{"", "Hello, World! unaffable", "中国 [MASK] héllo\x00\xff", "<e> a<e>a aaaa ##a", strings.Repeat("a", 120)}
	f.Fuzz(func(t *testing.T, doc []byte) {
		tk, err := FromJSON(doc)
		if err != nil {
			return
		}
		for _, text := range texts {
			for _, seqLen := range []int{0, 1, 3, 16} {
				e := tk.Encode(text, seqLen)
				for _, id := range e.IDs {
					if id < 0 || id >= int64(tk.VocabSize()) {
						t.Fatalf("Encode(%q) id %d outside [0, %d)", text, id, tk.VocabSize())
					}
				}
			}
		}
	})
}

func FuzzEncode(f *testing.F) {
	for _, s := range equivalenceTexts {
		f.Add(s, 8)
	}
	f.Add("hello  <ent>  world FOO xy", 0)
	f.Add("\xff\xfe\x00", -4)
	f.Add(strings.Repeat("unaffable ", 100), 3)
	doc := strings.Replace(testJSON, `"added_tokens": [`, `"added_tokens": [
    {"id": 39, "content": "<ent>", "single_word": false, "lstrip": true, "rstrip": true, "normalized": false, "special": true},
    {"id": 40, "content": "Foo", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": false},
    {"id": 41, "content": "xy", "single_word": true, "lstrip": true, "rstrip": false, "normalized": false, "special": false},`, 1)
	tks := []*Tokenizer{mustJSON(f, testJSON), mustJSON(f, doc), mustVocab(f, Options{})}
	f.Fuzz(func(t *testing.T, text string, seqLen int) {
		seqLen %= 1024 // bound allocation; negative values exercise the MaxLength path
		for _, tk := range tks {
			e := tk.Encode(text, seqLen)
			if seqLen > 0 && len(e.IDs) != seqLen {
				t.Fatalf("len(IDs) = %d, want %d", len(e.IDs), seqLen)
			}
			if seqLen <= 0 && (len(e.IDs) > tk.MaxLength() || len(e.IDs) != e.Tokens) {
				t.Fatalf("len(IDs) = %d, Tokens %d, MaxLength %d", len(e.IDs), e.Tokens, tk.MaxLength())
			}
			if len(e.AttentionMask) != len(e.IDs) || len(e.TypeIDs) != len(e.IDs) {
				t.Fatal("slice lengths differ")
			}
			if e.IDs[0] != tk.clsID {
				t.Fatalf("IDs[0] = %d, want CLS %d", e.IDs[0], tk.clsID)
			}
			if len(e.IDs) >= 2 && e.IDs[e.Tokens-1] != tk.sepID {
				t.Fatalf("last real id %d, want SEP", e.IDs[e.Tokens-1])
			}
			for i, id := range e.IDs {
				if id < 0 || id >= int64(tk.VocabSize()) {
					t.Fatalf("id %d out of range", id)
				}
				if (i < e.Tokens) != (e.AttentionMask[i] == 1) {
					t.Fatalf("mask %v inconsistent with Tokens %d", e.AttentionMask, e.Tokens)
				}
			}
			if again := tk.Encode(text, seqLen); again.Tokens != e.Tokens || again.Truncated != e.Truncated {
				t.Fatal("Encode is not deterministic")
			}
			limit := seqLen
			if seqLen <= 0 {
				limit = tk.MaxLength()
			}
			n := tk.Count(text)
			if (n > limit) != e.Truncated || (!e.Truncated && n != e.Tokens) || n != len(tk.pieces(text, len(text)+1))+2 {
				t.Fatalf("Count %d, limit %d: Encode gives %d tokens, truncated %v; %d pieces in all", n, limit, e.Tokens, e.Truncated, len(tk.pieces(text, len(text)+1)))
			}
		}
	})
}

// FuzzTables checks the generated-table code paths on arbitrary text: NFD
// is idempotent and leaves no non-starter after a higher class, and every
// step keeps valid UTF-8.
func FuzzTables(f *testing.F) {
	for _, s := range []string{"", "é", "a\u0315\u0300\u05AE\u0300b", "각ǅ\u212B", "İΣẞ", "\xff\x00\u0345\u0334"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = validUTF8(s)
		d := nfd(s)
		if nfd(d) != d {
			t.Fatalf("nfd not idempotent on %+q", s)
		}
		var prev uint8
		for _, r := range d {
			c := hfCCC[r]
			if c != 0 && prev > c {
				t.Fatalf("nfd(%+q) = %+q is not in canonical order", s, d)
			}
			prev = c
		}
		for _, f := range []func(string) string{nfc, nfkc, nfkd} {
			if once := f(s); f(once) != once {
				t.Fatalf("normalization of %+q is not idempotent", s)
			}
		}
		for _, out := range []string{d, nfc(s), nfkc(s), lowercase(s), dropRunes(s, hfMn), bertClean(s, true, true)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 from %+q", s)
			}
		}
	})
}
