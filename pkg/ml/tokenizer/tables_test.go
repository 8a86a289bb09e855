package tokenizer

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// TestCharTables pins decisions where Hugging Face's tokenizers (and so the
// generated tables) differ from the Go toolchain's unicode package.
func TestCharTables(t *testing.T) {
	tests := []struct {
		r                                 rune
		ws, punct, drop, space, cjk, mark bool
	}{
		{r: '!', punct: true},
		{r: '$', punct: true}, // ASCII symbols count as punctuation
		{r: 0x00A7, punct: true},
		{r: 0x061D, punct: false},          // Po since Unicode 14: not in the library's tables
		{r: 0x2E52, punct: false},          // Po since Unicode 13
		{r: 0x166D, punct: true},           // Po until Unicode 12 (So in Go's tables)
		{r: 0x0890},                        // Cf since Unicode 14: kept
		{r: 0x0898},                        // Mn since Unicode 14: kept by strip_accents
		{r: 0x0301, mark: true},            // combining acute
		{r: 0x001C, drop: true},            // control, not White_Space
		{r: 0x0085, ws: true, drop: true},  // NEL: whitespace, and clean_text drops it as a control
		{r: 0x00A0, ws: true, space: true}, // NBSP
		{r: 0x2028, ws: true, space: true},
		{r: 0x3000, ws: true, space: true},
		{r: 0x180E, drop: true}, // Cf, not White_Space since Unicode 6.3
		{r: 0x200B, drop: true}, // ZWSP (Cf)
		{r: 0xFEFF, drop: true}, // BOM
		{r: 0x00AD, drop: true}, // soft hyphen
		{r: 0xE000, drop: true}, // private use
		{r: 0xFFFD, drop: true},
		{r: 0x0000, drop: true},
		{r: '\t', ws: true, space: true},
		{r: 0x4E00, cjk: true},
		{r: 0x2B81F, cjk: true},
		{r: 0x2B820}, // between the library's ranges
		{r: 0x3042},  // hiragana is not "Chinese"
	}
	for _, tt := range tests {
		got := [6]bool{isWhitespace(tt.r), isPunct(tt.r), hfCleanDrop.has(tt.r), hfCleanSpace.has(tt.r), isChineseChar(tt.r), hfMn.has(tt.r)}
		want := [6]bool{tt.ws, tt.punct, tt.drop, tt.space, tt.cjk, tt.mark}
		if got != want {
			t.Errorf("U+%04X: whitespace, punct, drop, space, chinese, mark = %v, want %v", tt.r, got, want)
		}
	}
	for _, tt := range []struct {
		r    rune
		word bool
	}{{'a', true}, {'_', true}, {'1', true}, {0x0301, true}, {0x200D, true}, {0x0897, true}, {0x105C0, true}, {0x00B2, false}, {' ', false}, {0x2603, false}, {'-', false}} {
		if got := isWordChar(tt.r); got != tt.word {
			t.Errorf("isWordChar(U+%04X) = %v, want %v", tt.r, got, tt.word)
		}
	}
	if hfTablesVersion != "0.23.2" {
		t.Errorf("tables from tokenizers %s, want 0.23.2 (scripts/install-tokenizers.sh)", hfTablesVersion)
	}
}

func TestNFD(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"é", "e\u0301"},
		{"\u212B", "A\u030A"}, // Angstrom sign: singleton decomposition
		{"가", "\u1100\u1161"},
		{"각", "\u1100\u1161\u11A8"},
		{"ǅ", "ǅ"}, // compatibility decomposition only
		{"a\u0315\u0300\u05AE\u0300b", "a\u05AE\u0300\u0300\u0315b"}, // canonical order, stable
		{"\u1E69", "s\u0323\u0307"},
		{"s\u0307\u0323", "s\u0323\u0307"},
	}
	for _, tt := range tests {
		if got := nfd(tt.in); got != tt.want {
			t.Errorf("nfd(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

func TestCompositionForms(t *testing.T) {
	tests := []struct {
		name string
		f    func(string) string
		in   string
		want string
	}{
		{"nfc", nfc, "a\u0301\u0334", "\u00E1\u0334"}, // a class-1 mark does not block a class-230 one
		{"nfc", nfc, "E\u0308\u094D", "\u00CB\u094D"},
		{"nfc", nfc, "\u212B", "\u00C5"},
		{"nfc", nfc, "\u1100\u1161\u11A8", "각"},
		{"nfc", nfc, "\u0344", "\u0308\u0301"}, // excluded from composition
		{"nfc", nfc, "ﬁ", "ﬁ"},
		{"nfkc", nfkc, "ﬁ ǅ ① Ａ", "fi Dž 1 A"},
		{"nfkd", nfkd, "ǅ ½", "Dz\u030C 1\u20442"},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s(%+q) = %+q, want %+q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestLowercase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ABC", "abc"},
		{"İ", "i\u0307"},
		{"ΣΑΣ", "σασ"}, // no final-sigma rule
		{"ẞ", "ß"},
		{"ǅǄ", "ǆǆ"},
		{"Ａ", "ａ"},
	}
	for _, tt := range tests {
		if got := lowercase(tt.in); got != tt.want {
			t.Errorf("lowercase(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

// TestModelTypeInferred: tokenizer.json files without model.type load when
// Hugging Face reads them as WordPiece, and are refused otherwise.
func TestModelTypeInferred(t *testing.T) {
	const head = `{"added_tokens": [], "normalizer": null, "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": null, "model": `
	const vocab = `{"[UNK]": 0, "ab": 1, "##cd": 2, "abcd": 3, "[CLS]": 4, "[SEP]": 5, "[PAD]": 6}`
	tests := []struct {
		name, model string
		ok          bool
	}{
		{"WordPiece fields", `{"unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ` + vocab + `}`, true},
		{"extra field", `{"unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "foo": 1, "vocab": ` + vocab + `}`, true},
		{"WordLevel fields", `{"unk_token": "[UNK]", "vocab": ` + vocab + `}`, false},
		{"vocab only", `{"vocab": ` + vocab + `}`, false},
		{"null prefix", `{"unk_token": "[UNK]", "continuing_subword_prefix": null, "max_input_chars_per_word": 100, "vocab": ` + vocab + `}`, false},
		{"null unk", `{"unk_token": null, "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ` + vocab + `}`, false},
		{"no prefix", `{"unk_token": "[UNK]", "max_input_chars_per_word": 100, "vocab": ` + vocab + `}`, false},
		{"BPE fields", `{"unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "merges": [], "vocab": ` + vocab + `}`, false},
		{"Unigram fields", `{"unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": [["a", 0]]}`, false},
		{"null type", `{"type": null, "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ` + vocab + `}`, false},
		{"number type", `{"type": 1, "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ` + vocab + `}`, false},
		{"array model", `[]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk, err := FromJSON([]byte(head + tt.model + "}"))
			if !tt.ok {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("FromJSON: %v, want ErrFormat", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// WordPiece: "abcdcd" is abcd ##cd (WordLevel would say [UNK]).
			if got, want := tk.Encode("abcdcd ab", 0).IDs, []int64{4, 3, 2, 1, 5}; !slices.Equal(got, want) {
				t.Errorf("Encode = %v, want %v", got, want)
			}
		})
	}
}

// TestRealTokenizerFiles loads the real files of testdata/tokenizers and
// checks ids the Hugging Face library gives (the oracle test compares
// thousands more when the library is installed).
func TestRealTokenizerFiles(t *testing.T) {
	tests := []struct {
		model, text string
		want        []int64
	}{
		{"bert-base-uncased", "Hello [MASK] world!", []int64{101, 7592, 103, 2088, 999, 102}},
		{"bert-base-uncased", "a\u061Db İstanbul ﬁne", []int64{101, 100, 9960, 1984, 2638, 102}},
		{"bert-base-uncased", "Ａ\u0890x\u2E52y", []int64{101, 100, 102}},
		{"all-MiniLM-L6-v2", "Hello [MASK] world!", []int64{101, 7592, 103, 2088, 999, 102}},
	}
	for _, tt := range tests {
		tk, err := Load(filepath.Join("..", "..", "..", "testdata", "tokenizers", tt.model))
		if err != nil {
			t.Fatalf("Load %s: %v", tt.model, err)
		}
		if got := tk.Encode(tt.text, 0).IDs; !slices.Equal(got, tt.want) {
			t.Errorf("%s: Encode(%+q) = %v, Hugging Face %v", tt.model, tt.text, got, tt.want)
		}
	}
}

// TestTableFastPaths checks the assumptions of the ASCII and Latin-1 fast
// paths against the generated tables.
func TestTableFastPaths(t *testing.T) {
	for r := range hfDecomp {
		if r < firstDecomposable {
			t.Errorf("hfDecomp has U+%04X below firstDecomposable", r)
		}
	}
	for r := range hfDecompK {
		if r < firstDecomposable {
			t.Errorf("hfDecompK has U+%04X below firstDecomposable", r)
		}
	}
	for r := range hfCCC {
		if r < firstNonStarter {
			t.Errorf("hfCCC has U+%04X below firstNonStarter", r)
		}
	}
	for r := rune(0); r < 0x80; r++ {
		want, ok := hfLower[r]
		if !ok {
			want = string(r)
		}
		if got := lowercase(string(r)); got != want {
			t.Errorf("lowercase(U+%04X) = %+q, table %+q", r, got, want)
		}
	}
}

func TestRuneSetHas(t *testing.T) {
	s := runeSet{{2, 4}, {7, 7}, {10, 20}}
	for r := rune(0); r < 25; r++ {
		want := (r >= 2 && r <= 4) || r == 7 || (r >= 10 && r <= 20)
		if got := s.has(r); got != want {
			t.Errorf("has(%d) = %v, want %v", r, got, want)
		}
	}
	if (runeSet{}).has(0) {
		t.Error("empty set has 0")
	}
}
