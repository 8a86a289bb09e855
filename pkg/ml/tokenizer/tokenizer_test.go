package tokenizer

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// testVocab is a small BERT-style vocabulary; the id is the index.
var testVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "un",
	"##aff", "##able", "the", "cafe", "中", "国", "is", "a", "test", "##s",
	".", "?", "$", "hel", "##lo", "Hello", "World", "'", "-", "héllo",
	"##a", "you", "##r", "##e", "[", "]", "mask", "i", "##\u0307",
}

func vocabTxt() []byte { return []byte(strings.Join(testVocab, "\n") + "\n") }

// testJSON is a Hugging Face tokenizer.json equivalent to vocabTxt() with
// bert-base-uncased settings, in the format tokenizers writes.
const testJSON = `{
  "version": "1.0",
  "truncation": null,
  "padding": null,
  "added_tokens": [
    {"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 2, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 3, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 4, "content": "[MASK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
  ],
  "normalizer": {
    "type": "BertNormalizer",
    "clean_text": true,
    "handle_chinese_chars": true,
    "strip_accents": null,
    "lowercase": true
  },
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {
    "type": "TemplateProcessing",
    "single": [
      {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
      {"Sequence": {"id": "A", "type_id": 0}},
      {"SpecialToken": {"id": "[SEP]", "type_id": 0}}
    ],
    "pair": [
      {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
      {"Sequence": {"id": "A", "type_id": 0}},
      {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
      {"Sequence": {"id": "B", "type_id": 1}},
      {"SpecialToken": {"id": "[SEP]", "type_id": 1}}
    ],
    "special_tokens": {
      "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
      "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}
    }
  },
  "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
  "model": {
    "type": "WordPiece",
    "unk_token": "[UNK]",
    "continuing_subword_prefix": "##",
    "max_input_chars_per_word": 100,
    "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hello": 5, "world": 6, ",": 7, "!": 8, "un": 9, "##aff": 10, "##able": 11, "the": 12, "cafe": 13, "中": 14, "国": 15, "is": 16, "a": 17, "test": 18, "##s": 19, ".": 20, "?": 21, "$": 22, "hel": 23, "##lo": 24, "Hello": 25, "World": 26, "'": 27, "-": 28, "héllo": 29, "##a": 30, "you": 31, "##r": 32, "##e": 33, "[": 34, "]": 35, "mask": 36, "i": 37, "##̇": 38}
  }
}`

var uncased = Options{Lowercase: true, StripAccents: true}

func mustVocab(t testing.TB, opts Options) *Tokenizer {
	t.Helper()
	tk, err := FromVocab(vocabTxt(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func mustJSON(t testing.TB, doc string) *Tokenizer {
	t.Helper()
	tk, err := FromJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// tokens renders the real (unpadded) ids of e as token strings.
func tokens(tk *Tokenizer, e Encoding) []string {
	var out []string
	for _, id := range e.IDs[:e.Tokens] {
		s, ok := tk.Token(id)
		if !ok {
			s = "<?>"
		}
		out = append(out, s)
	}
	return out
}

func TestJSONFixtureMatchesVocab(t *testing.T) {
	var doc struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal([]byte(testJSON), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Model.Vocab) != len(testVocab) {
		t.Fatalf("fixture vocab has %d entries, want %d", len(doc.Model.Vocab), len(testVocab))
	}
	for i, tok := range testVocab {
		if doc.Model.Vocab[tok] != i {
			t.Fatalf("fixture vocab[%q] = %d, want %d", tok, doc.Model.Vocab[tok], i)
		}
	}
}

func TestBertBehaviours(t *testing.T) {
	cased := Options{}
	lowerOnly := Options{Lowercase: true}
	tests := []struct {
		name string
		opts Options
		text string
		want []string
	}{
		{"punctuation", uncased, "Hello, World!", []string{"[CLS]", "hello", ",", "world", "!", "[SEP]"}},
		{"cased", cased, "Hello, World!", []string{"[CLS]", "Hello", ",", "World", "!", "[SEP]"}},
		{"accents stripped", uncased, "Héllo", []string{"[CLS]", "hello", "[SEP]"}},
		{"accents stripped NFD input", uncased, "He\u0301llo", []string{"[CLS]", "hello", "[SEP]"}},
		{"accents kept", lowerOnly, "Héllo", []string{"[CLS]", "héllo", "[SEP]"}},
		{"accents kept cased", cased, "Héllo", []string{"[CLS]", "[UNK]", "[SEP]"}},
		{"cjk spacing", uncased, "中国is", []string{"[CLS]", "中", "国", "is", "[SEP]"}},
		{"cjk between words", uncased, "hello中world", []string{"[CLS]", "hello", "中", "world", "[SEP]"}},
		{"wordpiece", uncased, "unaffable", []string{"[CLS]", "un", "##aff", "##able", "[SEP]"}},
		{"wordpiece suffix", uncased, "tests", []string{"[CLS]", "test", "##s", "[SEP]"}},
		{"greedy longest first", uncased, "hellos", []string{"[CLS]", "hello", "##s", "[SEP]"}},
		{"unknown word", uncased, "hello xyz world", []string{"[CLS]", "hello", "[UNK]", "world", "[SEP]"}},
		{"partial split is unk", uncased, "unaffablex", []string{"[CLS]", "[UNK]", "[SEP]"}},
		{"100 runes split", uncased, strings.Repeat("a", 100), append(append([]string{"[CLS]", "a"}, repeat("##a", 99)...), "[SEP]")},
		{"long word", uncased, strings.Repeat("a", 101), []string{"[CLS]", "[UNK]", "[SEP]"}},
		{"ascii symbol punctuation", uncased, "$hello-world'", []string{"[CLS]", "$", "hello", "-", "world", "'", "[SEP]"}},
		{"unicode punctuation", uncased, "hello\u3002world", []string{"[CLS]", "hello", "[UNK]", "world", "[SEP]"}},
		{"whitespace kinds", uncased, "\thello\u00a0\u3000world\r\n", []string{"[CLS]", "hello", "world", "[SEP]"}},
		{"control and format dropped", uncased, "hel\u200blo\x00 wor\u0007ld\ufffd", []string{"[CLS]", "hello", "world", "[SEP]"}},
		{"vertical tab dropped not split", uncased, "hel\vlo", []string{"[CLS]", "hello", "[SEP]"}},
		{"invalid utf8", uncased, "hel\xfflo \xc3", []string{"[CLS]", "hello", "[SEP]"}},
		{"special token in text", uncased, "hello [MASK] world", []string{"[CLS]", "hello", "[MASK]", "world", "[SEP]"}},
		{"special token glued", uncased, "hello[SEP]world", []string{"[CLS]", "hello", "[SEP]", "world", "[SEP]"}},
		{"special tokens are case sensitive", uncased, "[mask]", []string{"[CLS]", "[", "mask", "]", "[SEP]"}},
		{"dotted capital I", lowerOnly, "\u0130", []string{"[CLS]", "i", "##\u0307", "[SEP]"}},
		{"empty", uncased, "", []string{"[CLS]", "[SEP]"}},
		{"only spaces", uncased, " \t\n ", []string{"[CLS]", "[SEP]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := mustVocab(t, tc.opts)
			e := tk.Encode(tc.text, 0)
			if got := tokens(tk, e); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Encode(%q) = %q, want %q", tc.text, got, tc.want)
			}
			if e.Truncated || e.Tokens != len(tc.want) || len(e.IDs) != len(tc.want) {
				t.Fatalf("Tokens=%d len=%d Truncated=%v", e.Tokens, len(e.IDs), e.Truncated)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestTruncationAndPadding(t *testing.T) {
	tk := mustVocab(t, Options{Lowercase: true, StripAccents: true, MaxLength: 5})
	tests := []struct {
		name      string
		text      string
		seqLen    int
		ids       []int64
		mask      []int64
		tokens    int
		truncated bool
	}{
		{"pad", "hello", 6, []int64{2, 5, 3, 0, 0, 0}, []int64{1, 1, 1, 0, 0, 0}, 3, false},
		{"exact fit", "hello world", 4, []int64{2, 5, 6, 3}, []int64{1, 1, 1, 1}, 4, false},
		{"truncate keeps sep", "hello world hello world", 4, []int64{2, 5, 6, 3}, []int64{1, 1, 1, 1}, 4, true},
		{"truncate inside word", "unaffable", 4, []int64{2, 9, 10, 3}, []int64{1, 1, 1, 1}, 4, true},
		{"seqLen 2", "hello", 2, []int64{2, 3}, []int64{1, 1}, 2, true},
		{"seqLen 2 empty", "", 2, []int64{2, 3}, []int64{1, 1}, 2, false},
		{"seqLen 1", "hello", 1, []int64{2}, []int64{1}, 1, true},
		{"default length no pad", "hello", 0, []int64{2, 5, 3}, []int64{1, 1, 1}, 3, false},
		{"default length truncates", "hello world hello world", -1, []int64{2, 5, 6, 5, 3}, []int64{1, 1, 1, 1, 1}, 5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := tk.Encode(tc.text, tc.seqLen)
			if !reflect.DeepEqual(e.IDs, tc.ids) || !reflect.DeepEqual(e.AttentionMask, tc.mask) {
				t.Fatalf("IDs=%v mask=%v, want %v %v", e.IDs, e.AttentionMask, tc.ids, tc.mask)
			}
			if !reflect.DeepEqual(e.TypeIDs, make([]int64, len(tc.ids))) {
				t.Fatalf("TypeIDs=%v", e.TypeIDs)
			}
			if e.Tokens != tc.tokens || e.Truncated != tc.truncated {
				t.Fatalf("Tokens=%d Truncated=%v, want %d %v", e.Tokens, e.Truncated, tc.tokens, tc.truncated)
			}
		})
	}
	if tk.MaxLength() != 5 {
		t.Fatalf("MaxLength = %d", tk.MaxLength())
	}
	if got := mustVocab(t, uncased).MaxLength(); got != 512 {
		t.Fatalf("default MaxLength = %d", got)
	}
}

var equivalenceTexts = []string{
	"Hello, World!",
	"Héllo wörld, the CAFÉ is a test.",
	"unaffable tests?",
	"中国 is a test 中国",
	"hello [MASK] world[SEP]",
	"[CLS][PAD][UNK]",
	"\t\nhello\u00a0world\u200b\x00",
	"you're $5-a test!!",
	"",
	"   ",
	"hel\xfflo",
	strings.Repeat("a", 101) + " " + strings.Repeat("a", 100),
	"\u0130stanbul İ i\u0307",
	"ｈｅｌｌｏ",
	"Ünaffable ÜNAFFABLE",
}

func TestVocabAndJSONEquivalent(t *testing.T) {
	fromVocab := mustVocab(t, uncased)
	fromJSON := mustJSON(t, testJSON)
	if fromVocab.VocabSize() != fromJSON.VocabSize() || fromJSON.VocabSize() != len(testVocab) {
		t.Fatalf("VocabSize %d vs %d", fromVocab.VocabSize(), fromJSON.VocabSize())
	}
	if fromVocab.MaxLength() != fromJSON.MaxLength() {
		t.Fatalf("MaxLength %d vs %d", fromVocab.MaxLength(), fromJSON.MaxLength())
	}
	for _, text := range equivalenceTexts {
		for _, seqLen := range []int{0, 8, 300} {
			a, b := fromVocab.Encode(text, seqLen), fromJSON.Encode(text, seqLen)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("Encode(%q, %d): vocab.txt %v, tokenizer.json %v", text, seqLen, a, b)
			}
		}
	}
}

func TestLookups(t *testing.T) {
	for _, tk := range []*Tokenizer{mustVocab(t, uncased), mustJSON(t, testJSON)} {
		if id, ok := tk.ID("hello"); !ok || id != 5 {
			t.Fatalf("ID(hello) = %d %v", id, ok)
		}
		if _, ok := tk.ID("nope"); ok {
			t.Fatal("ID(nope) found")
		}
		if s, ok := tk.Token(10); !ok || s != "##aff" {
			t.Fatalf("Token(10) = %q %v", s, ok)
		}
		for _, id := range []int64{-1, int64(len(testVocab)), 1 << 40} {
			if _, ok := tk.Token(id); ok {
				t.Fatalf("Token(%d) found", id)
			}
		}
	}
}

func TestDuplicateVocabLine(t *testing.T) {
	// Hugging Face's load_vocab assigns vocab[token] = line in order, so the
	// last line of a duplicated token wins; the earlier id still decodes.
	v := append([]string{}, testVocab...)
	v = append(v, "hello")
	tk, err := FromVocab([]byte(strings.Join(v, "\r\n")), uncased)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := tk.ID("hello"); id != int64(len(testVocab)) {
		t.Fatalf("ID(hello) = %d, want last line %d", id, len(testVocab))
	}
	if s, ok := tk.Token(5); !ok || s != "hello" {
		t.Fatalf("Token(5) = %q %v", s, ok)
	}
	if tk.VocabSize() != len(v) {
		t.Fatalf("VocabSize = %d", tk.VocabSize())
	}
}

func TestAddedTokenOptions(t *testing.T) {
	doc := strings.Replace(testJSON, `"added_tokens": [`, `"added_tokens": [
    {"id": 39, "content": "<ent>", "single_word": false, "lstrip": true, "rstrip": true, "normalized": false, "special": true},
    {"id": 40, "content": "Foo", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": false},
    {"id": 41, "content": "xy", "single_word": true, "lstrip": false, "rstrip": false, "normalized": false, "special": false},`, 1)
	tk := mustJSON(t, doc)
	if tk.VocabSize() != 42 {
		t.Fatalf("VocabSize = %d", tk.VocabSize())
	}
	tests := []struct {
		text string
		want []string
	}{
		{"hello  <ent>  world", []string{"[CLS]", "hello", "<ent>", "world", "[SEP]"}},
		{"hello<ent>world", []string{"[CLS]", "hello", "<ent>", "world", "[SEP]"}},
		{"FOO hello foo", []string{"[CLS]", "Foo", "hello", "Foo", "[SEP]"}},
		{"hellofoo", []string{"[CLS]", "hello", "Foo", "[SEP]"}}, // not single_word: matches inside words
		{"xy hello", []string{"[CLS]", "xy", "hello", "[SEP]"}},
		{"xyhello", []string{"[CLS]", "[UNK]", "[SEP]"}},
		{"hello,xy!", []string{"[CLS]", "hello", ",", "xy", "!", "[SEP]"}},
	}
	for _, tc := range tests {
		e := tk.Encode(tc.text, 0)
		if got := tokens(tk, e); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Encode(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestJSONVariants(t *testing.T) {
	bertProcessing := strings.Replace(testJSON, `"post_processor": {
    "type": "TemplateProcessing",`, `"post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}, "unused": {`, 1)
	sequence := strings.Replace(testJSON, `"normalizer": {
    "type": "BertNormalizer",`, `"normalizer": {"type": "Sequence", "normalizers": [{"type": "BertNormalizer", "lowercase": false, "strip_accents": false}, {"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]}, "unused": {`, 1)
	truncated := strings.Replace(testJSON, `"truncation": null`, `"truncation": {"direction": "Right", "max_length": 128, "strategy": "LongestFirst", "stride": 0}`, 1)
	padded := strings.Replace(testJSON, `"padding": null`, `"padding": {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": null, "pad_id": 4, "pad_type_id": 0, "pad_token": "[MASK]"}`, 1)
	noPost := strings.Replace(testJSON, `"post_processor": {
    "type": "TemplateProcessing",`, `"post_processor": null, "unused": {`, 1)

	want := mustJSON(t, testJSON).Encode("Héllo, World! unaffable", 0)
	for name, doc := range map[string]string{"BertProcessing": bertProcessing, "Sequence": sequence, "null post_processor": noPost} {
		if got := mustJSON(t, doc).Encode("Héllo, World! unaffable", 0); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	if got := mustJSON(t, truncated).MaxLength(); got != 128 {
		t.Errorf("truncation.max_length: MaxLength = %d", got)
	}
	if got := mustJSON(t, padded).Encode("hello", 4).IDs; !reflect.DeepEqual(got, []int64{2, 5, 3, 4}) {
		t.Errorf("padding.pad_id: %v", got)
	}
}

func TestLoad(t *testing.T) {
	write := func(t *testing.T, dir, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("tokenizer.json preferred", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "tokenizer.json", testJSON)
		write(t, dir, "vocab.txt", "[UNK]\n") // would fail if read
		write(t, dir, "tokenizer_config.json", `{"do_lower_case": false, "model_max_length": 256}`)
		tk, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := tokens(tk, tk.Encode("Hello", 0)); !reflect.DeepEqual(got, []string{"[CLS]", "hello", "[SEP]"}) {
			t.Fatalf("got %q (tokenizer.json normalizer not used?)", got)
		}
		if tk.MaxLength() != 256 {
			t.Fatalf("MaxLength = %d, want config's 256 when truncation is null", tk.MaxLength())
		}
	})

	t.Run("vocab.txt with config", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "vocab.txt", string(vocabTxt()))
		write(t, dir, "tokenizer_config.json", `{"do_lower_case": false, "model_max_length": 128, "unk_token": {"content": "[UNK]", "lstrip": false}}`)
		tk, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if tk.MaxLength() != 128 {
			t.Fatalf("MaxLength = %d", tk.MaxLength())
		}
		if got := tokens(tk, tk.Encode("Hello héllo", 0)); !reflect.DeepEqual(got, []string{"[CLS]", "Hello", "héllo", "[SEP]"}) {
			t.Fatalf("got %q", got)
		}
	})

	t.Run("vocab.txt defaults", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "vocab.txt", string(vocabTxt()))
		write(t, dir, "tokenizer_config.json", `{"model_max_length": 1000000000000000019884624838656}`)
		tk, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if tk.MaxLength() != 512 {
			t.Fatalf("MaxLength = %d", tk.MaxLength())
		}
		if got := tokens(tk, tk.Encode("Héllo", 0)); !reflect.DeepEqual(got, []string{"[CLS]", "hello", "[SEP]"}) {
			t.Fatalf("got %q", got)
		}
	})

	t.Run("neither", func(t *testing.T) {
		_, err := Load(t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "tokenizer.json") || !strings.Contains(err.Error(), "vocab.txt") {
			t.Fatalf("err = %v, want both file names", err)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("err = %v, want fs.ErrNotExist", err)
		}
	})

	t.Run("bad tokenizer.json", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "tokenizer.json", `{`)
		write(t, dir, "vocab.txt", string(vocabTxt()))
		if _, err := Load(dir); !errors.Is(err, ErrFormat) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestErrors(t *testing.T) {
	bpe := `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`
	noUnk := strings.Replace(testJSON, `"[UNK]": 1,`, `"[UNUSED]": 1,`, 1)
	tests := []struct {
		name, doc, want string
	}{
		{"BPE", bpe, `model type "BPE" is not supported (WordPiece only)`},
		{"Unigram", `{"model": {"type": "Unigram", "vocab": [["a", 0]]}}`, `model type "Unigram" is not supported`},
		{"WordLevel", `{"model": {"type": "WordLevel", "vocab": {"a": 0}}}`, `model type "WordLevel" is not supported`},
		{"missing unk", noUnk, `model.unk_token "[UNK]" is not in model.vocab`},
		{"malformed", `{"model": {"type": "WordPiece",`, `invalid JSON`},
		{"not an object", `[1, 2]`, `invalid JSON`},
		{"no model", `{}`, `missing "model"`},
		{"id out of range", strings.Replace(testJSON, `"##̇": 38`, `"##̇": 99`, 1), `"##̇"] = 99 is out of range`},
		{"duplicate id", strings.Replace(testJSON, `"##̇": 38`, `"##̇": 37`, 1), `id 37 is used by both`},
		{"duplicate token", strings.Replace(testJSON, `"##̇": 38`, `"i": 38`, 1), `lists token "i" twice`},
		{"negative id", strings.Replace(testJSON, `"##̇": 38`, `"##̇": -1`, 1), `not a valid id`},
		{"unsupported normalizer", strings.Replace(testJSON, `"type": "BertNormalizer"`, `"type": "Precompiled"`, 1), `normalizer type "Precompiled" is not supported`},
		{"unsupported pre_tokenizer", strings.Replace(testJSON, `{"type": "BertPreTokenizer"}`, `{"type": "Metaspace"}`, 1), `pre_tokenizer type "Metaspace" is not supported`},
		{"unsupported post_processor", strings.Replace(testJSON, `"type": "TemplateProcessing"`, `"type": "RobertaProcessing"`, 1), `post_processor type "RobertaProcessing" is not supported`},
		{"cls id out of range", strings.Replace(testJSON, `"ids": [2]`, `"ids": [1000]`, 1), `[CLS] id 1000`},
		{"added token id clash", strings.Replace(testJSON, `"id": 4, "content": "[MASK]"`, `"id": 5, "content": "[MASK]"`, 1), `"[MASK]" has id 5`},
		{"added token gap", strings.Replace(testJSON, `"added_tokens": [`, `"added_tokens": [{"id": 41, "content": "<x>"},`, 1), `"<x>" has id 41`},
		{"bad truncation", strings.Replace(testJSON, `"truncation": null`, `"truncation": {"max_length": 1}`, 1), `truncation.max_length 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromJSON([]byte(tc.doc))
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("err = %v, want ErrFormat", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %q, want it to contain %q", err, tc.want)
			}
		})
	}

	vocabTests := []struct {
		name  string
		vocab string
		want  string
	}{
		{"missing unk", "[PAD]\n[CLS]\n[SEP]\nhello\n", `unk_token "[UNK]" is not in the vocabulary`},
		{"missing pad", "[UNK]\n[CLS]\n[SEP]\n", `pad_token "[PAD]"`},
		{"empty", "", `"[UNK]"`},
		{"invalid utf8", "[PAD]\n[UNK]\n\xff\n", `line 3 is not valid UTF-8`},
	}
	for _, tc := range vocabTests {
		t.Run("vocab "+tc.name, func(t *testing.T) {
			_, err := FromVocab([]byte(tc.vocab), uncased)
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrFormat containing %q", err, tc.want)
			}
		})
	}
	if _, err := FromVocab(vocabTxt(), Options{MaxLength: -3}); err == nil {
		t.Fatal("negative MaxLength accepted")
	}
}

func TestConcurrentEncode(t *testing.T) {
	tk := mustJSON(t, testJSON)
	want := make([]Encoding, len(equivalenceTexts))
	for i, text := range equivalenceTexts {
		want[i] = tk.Encode(text, 16)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, text := range equivalenceTexts {
				if got := tk.Encode(text, 16); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("concurrent Encode(%q) differs", text)
				}
			}
		}()
	}
	wg.Wait()
}

// TestCount: the count before truncation of a real tokenizer, for a text
// that fits and one cut at the maximum length.
func TestCount(t *testing.T) {
	tk, err := Load(filepath.Join("..", "..", "..", "testdata", "tokenizers", "bert-base-uncased"))
	if err != nil {
		t.Fatal(err)
	}
	short := "Patient Jane Roe asks for a refill."
	if e := tk.Encode(short, 0); e.Truncated || tk.Count(short) != e.Tokens {
		t.Fatalf("short text: Count %d, Encode %d tokens", tk.Count(short), e.Tokens)
	}
	long := strings.Repeat("unaffable refill ", 400)
	e := tk.Encode(long, 0)
	if n := tk.Count(long); !e.Truncated || e.Tokens != tk.MaxLength() || n != 400*(len(tk.pieces("unaffable refill", 10)))+2 || n <= tk.MaxLength() {
		t.Fatalf("long text: Count %d, Encode %d tokens truncated %v, max %d", n, e.Tokens, e.Truncated, tk.MaxLength())
	}
}
