package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The oracle test compares svc's token ids with Hugging Face's tokenizers
// library (npm tokenizers, pinned and installed by
// scripts/install-tokenizers.sh; `make test` passes its directory in
// SVC_HF_TOKENIZERS) on real tokenizer files: a corpus of several thousand
// strings and every code point U+0000-U+2FFFF inside a word.

// oracleModel is one real tokenizer of testdata/tokenizers.
type oracleModel struct {
	name      string
	file      string // a tokenizer.json outside testdata/tokenizers (TestOracleAddedTokens)
	json      bool   // tokenizer.json, else vocab.txt + tokenizer_config.json
	lowercase bool   // vocab.txt models: do_lower_case
}

var oracleModels = []oracleModel{
	{name: "bert-base-uncased", json: true},
	{name: "all-MiniLM-L6-v2", json: true},
	{name: "bert-base-cased"},
	{name: "bert-base-multilingual-cased"},
}

func oracleDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SVC_HF_TOKENIZERS")
	if dir == "" {
		t.Skip("SVC_HF_TOKENIZERS is not set: `make test` sets it (scripts/install-tokenizers.sh installs the oracle)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("SVC_HF_TOKENIZERS is set but node is not installed: %v", err)
	}
	return dir
}

type oracleAnswer struct {
	IDs       [][]int64 `json:"ids"`
	Truncated [][]int64 `json:"truncated"`
}

// runOracle tokenizes texts (and truncated, with truncation) with every
// model in one Node process.
func runOracle(t *testing.T, dir string, toks map[string]*Tokenizer, texts, truncated []string) map[string]oracleAnswer {
	t.Helper()
	var models []map[string]any
	for _, m := range oracleModels {
		if m.file != "" {
			models = append(models, map[string]any{"name": m.name, "maxLength": toks[m.name].MaxLength(), "file": m.file})
			continue
		}
		p, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "tokenizers", m.name))
		if err != nil {
			t.Fatal(err)
		}
		spec := map[string]any{"name": m.name, "maxLength": toks[m.name].MaxLength()}
		if m.json {
			spec["file"] = filepath.Join(p, "tokenizer.json")
		} else {
			spec["vocab"] = filepath.Join(p, "vocab.txt")
			spec["lowercase"] = m.lowercase
		}
		models = append(models, spec)
	}
	req, err := json.Marshal(map[string]any{"models": models, "texts": texts, "truncated": truncated})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("..", "..", "..", "testdata", "tokenizers", "oracle.js"), dir)
	cmd.Stdin = bytes.NewReader(req)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node oracle.js: %v\n%s", err, stderr.String())
	}
	var ans map[string]oracleAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatal(err)
	}
	for _, m := range oracleModels {
		a, ok := ans[m.name]
		if !ok {
			continue
		}
		if len(a.IDs) != len(texts) || len(a.Truncated) != len(truncated) {
			t.Fatalf("oracle answered %d/%d encodings for %s, want %d/%d", len(a.IDs), len(a.Truncated), m.name, len(texts), len(truncated))
		}
	}
	return ans
}

func loadOracleModels(t *testing.T) map[string]*Tokenizer {
	t.Helper()
	toks := map[string]*Tokenizer{}
	for _, m := range oracleModels {
		tk, err := Load(filepath.Join("..", "..", "..", "testdata", "tokenizers", m.name))
		if err != nil {
			t.Fatalf("Load %s: %v", m.name, err)
		}
		toks[m.name] = tk
	}
	return toks
}

// fullIDs is the untruncated, unpadded encoding.
func fullIDs(tk *Tokenizer, text string) []int64 {
	ids := []int64{tk.clsID}
	ids = append(ids, tk.pieces(text, 1<<30)...)
	return append(ids, tk.sepID)
}

// oracleCorpus returns several thousand varied strings.
func oracleCorpus() []string {
	fixed := []string{
		"", " ", "Hello, world!", "The quick brown fox jumps over the lazy dog.",
		"café naïve résumé façade jalapeño Ångström Øre ÆØÅ æøå", "e\u0301 a\u0300\u0327 o\u0308\u0304 \u0041\u030A", "ﬁ ﬂ ﬀ ﬃ ﬄ ﬅ ﬆ Ĳ ĳ Œ œ ß ẞ",
		"İstanbul ISTANBUL ıi Iı DİYARBAKIR ğüşöç", "ΣΊΣΥΦΟΣ σίσυφος ὈΔΥΣΣΕΎΣ ς Σ ΐ ΰ ϐ ϑ ϕ ϖ ϰ ϱ ϵ",
		"ＡＢＣ ａｂｃ １２３ ！？ （全角） ｶﾀｶﾅ ﾟﾞ", "中文字符测试，你好世界！", "日本語のテキストです。ひらがな カタカナ ゔ ㋐",
		"한국어 텍스트 입니다 ᄀᄁ ᅡ ᆨ ㄱㄴㄷ 가각갂", "👨‍👩‍👧‍👦 👍🏽 🏳️‍🌈 🇫🇷🇯🇵🇺🇸 ❤️ ☺︎ #️⃣ 1️⃣",
		"tab\tnew\nline\rret\u000bvt\u000cff\u001cfs\u001fus\u0085nel", "nul\x00byte del\x7f c1\u0080\u009f",
		"zw\u200bsp zwnj\u200cx zwj\u200dx lrm\u200ex rlm\u200fx wj\u2060x \u2061\u2064 \u206a\u206f",
		"\ufeffBOM at start", "mid\ufeffBOM", "nbsp\u00a0here narrow\u202fnb figure\u2007sp ideographic\u3000sp",
		"line\u2028sep para\u2029sep", "ogham\u1680space mongolian\u180evs", "soft\u00adhyphen", "arabic\u061dmark \u061c alm \u0890\u0891 pound",
		"canadian\u166dmark \u166e", "new punct \u2e50\u2e51\u2e52 \u2e5d \U00011b00 \U00016fe2 \U00010f86", "marks \u1ab0\u1abe\u1ac1 \u1dfa \U0001e08f \u0898\u089f",
		"private\ue000use \U000f0000 \U0010fffd", "replacement\ufffdchar", "noncharacter\ufdd0\uffff",
		"[CLS] [SEP] [MASK] [UNK] [PAD]", "x[SEP]y", "[mask]", "[Mask]", "a [MASK]b", "[[MASK]]", "[MASK][MASK]", "[SEP", "SEP]", "[CLS]hello[SEP]world",
		"math ∑∫√∞≠≤ ½ ⅓ ① ⑩ Ⅻ ²³ ₁₂ µ Ω K Å", "currency $€£¥₹₿ ¢", "quotes «» „“ ‘’ ‹› 「」『』 〈〉",
		"Привет, мир! Ёё Її Ґґ", "עברית שָׁלוֹם", "العربية مرحبا بالعالم", "हिन्दी नमस्ते क्षि", "ภาษาไทย สวัสดี", "ქართული", "Ελληνικά",
		"tiếng Việt Nguyễn", "ǅ ǈ ǋ ǲ ᾈ ᾙ ᾮ ᾼ ῌ ῼ", "Ǆ ǆ ȺȾ ⱥⱦ ꭰ ᏸ Ꭰ", "\U00010400\U00010428 \U0001e900\U0001e922 \U00016e40",
		"𝐀𝐁𝐂 𝔸𝔹 𝒜 ℌ ℍ", "a\u0301\u0327b", "tab\tsep\u0085nel", "\u0345\u0334\u0301a\u0301\u0345\u0334",
		"a\u0315\u0300\u05ae\u0300b", "\u1100\u1161\u11a8 \uac00\u11a8", "\u0f73 \u0f75 \u0f81 \u0344 \u0340 \u0341 \u0343", "\u2126 \u212a \u212b \u2329 \u232a",
	}
	for _, n := range []int{98, 99, 100, 101, 102, 150} {
		fixed = append(fixed, strings.Repeat("a", n), strings.Repeat("é", n), "x "+strings.Repeat("ab", n/2)+strings.Repeat("c", n%2)+" y", strings.Repeat("中", n))
	}
	fixed = append(fixed, strings.Repeat("The quick brown fox. ", 400), strings.Repeat("ünïcödé ", 700), strings.Repeat("[SEP] x ", 300), strings.Repeat("a", 5000))

	// Random strings over a pool of interesting pieces.
	pool := []string{"the", "The", "THE", "un", "##", "##ing", "ing", "running", "Straße", "ÉCOLE", "naïve", "İ", "ı", "Σ", "ς", "ﬁ", "Ａ", "１",
		"中", "国", "の", "カ", "ｶ", "한", "ᄀ", "😀", "👍🏽", "👨‍👩‍👧", "🇩🇪", "\u0301", "\u0308", "\u0327", "\u200b", "\u200d", "\ufeff", "\u00a0", "\u2028",
		"\u00ad", "\u061d", "\x00", "\t", "\n", " ", " ", " ", "  ", ".", ",", "!", "?", "-", "'", "\"", "(", ")", "[", "]", "[SEP]", "[MASK]", "[UNK]",
		"$", "€", "%", "@", "#", "&", "*", "\\", "/", "0", "42", "3.14", "¿", "¡", "«", "»", "—", "…", "·", "ـ", "ा", "्", "ँ", "\u0e31", "\u0f7f",
		"Привет", "мир", "مرحبا", "שלום", "नमस्ते", "สวัสดี", "Ελλάδα", "Việt", "Ωμέγα", "Ǆ", "ǅ", "ǆ", "ß", "ẞ", "\ue000", "\ufffd", "\u3000"}
	rng := rand.New(rand.NewPCG(1, 2))
	out := fixed
	for len(out) < 4000 {
		n := 1 + rng.IntN(30)
		var b strings.Builder
		for range n {
			if rng.IntN(6) == 0 {
				// a random code point from the BMP or plane 1 (no surrogates)
				var r rune
				for {
					r = rune(rng.IntN(0x20000))
					if r < 0xd800 || r > 0xdfff {
						break
					}
				}
				b.WriteRune(r)
			} else {
				b.WriteString(pool[rng.IntN(len(pool))])
			}
		}
		out = append(out, b.String())
	}
	// Very long inputs (for the truncation comparison too).
	for len(out) < 4030 {
		var b strings.Builder
		for range 200 + rng.IntN(2000) {
			b.WriteString(pool[rng.IntN(len(pool))])
			if rng.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		out = append(out, b.String())
	}
	return out
}

// sweepLines puts each code point U+0000-U+2FFFF (surrogates excepted)
// inside a word, perWord words a line: "a<c>b a<c+1>b ...". Words are
// tokenized independently, so a line matches exactly when all its words do.
const sweepPerLine = 64

func sweepLines() ([]string, [][]rune) {
	var lines []string
	var cps [][]rune
	var cur []rune
	flush := func() {
		var b strings.Builder
		for i, c := range cur {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("a")
			b.WriteRune(c)
			b.WriteString("b")
		}
		lines = append(lines, b.String())
		cps = append(cps, cur)
		cur = nil
	}
	for c := rune(0); c <= 0x2FFFF; c++ {
		if c >= 0xd800 && c <= 0xdfff {
			continue
		}
		cur = append(cur, c)
		if len(cur) == sweepPerLine {
			flush()
		}
	}
	if len(cur) > 0 {
		flush()
	}
	return lines, cps
}

func TestOracleHuggingFace(t *testing.T) {
	dir := oracleDir(t)
	toks := loadOracleModels(t)
	corpus := oracleCorpus()
	lines, lineCPs := sweepLines()
	var truncated []string
	for _, s := range corpus {
		if utf8.RuneCountInString(s) > 200 {
			truncated = append(truncated, s)
		}
	}
	texts := append(slices.Clone(corpus), lines...)
	ans := runOracle(t, dir, toks, texts, truncated)

	// Code points of mismatching sweep lines, per model.
	type badCP struct {
		model string
		c     rune
	}
	var suspects []badCP
	for _, m := range oracleModels {
		tk, a := toks[m.name], ans[m.name]
		corpusBad, truncBad := 0, 0
		for i, s := range corpus {
			if got := fullIDs(tk, s); !slices.Equal(got, a.IDs[i]) {
				corpusBad++
				if corpusBad <= 10 {
					t.Errorf("%s: %+q:\n svc          %v\n Hugging Face %v", m.name, s, got, a.IDs[i])
				}
			}
		}
		for i, s := range truncated {
			if got := tk.Encode(s, 0).IDs; !slices.Equal(got, a.Truncated[i]) {
				truncBad++
				if truncBad <= 3 {
					t.Errorf("%s: truncated to %d: %.40q...: svc %d ids, Hugging Face %d", m.name, tk.MaxLength(), s, len(got), len(a.Truncated[i]))
				}
			}
		}
		lineBad := 0
		for i, line := range lines {
			if !slices.Equal(fullIDs(tk, line), a.IDs[len(corpus)+i]) {
				lineBad++
				for _, c := range lineCPs[i] {
					suspects = append(suspects, badCP{m.name, c})
				}
			}
		}
		t.Logf("%s: corpus %d/%d strings differ, truncation %d/%d, sweep %d/%d lines differ", m.name, corpusBad, len(corpus), truncBad, len(truncated), lineBad, len(lines))
	}
	if len(suspects) == 0 {
		return
	}
	// Second round: one code point a text, for the lines that differed.
	var single []string
	for _, s := range suspects {
		single = append(single, "a"+string(s.c)+"b")
	}
	ans2 := runOracle(t, dir, toks, single, nil)
	bad := map[string][]rune{}
	for i, s := range suspects {
		if !slices.Equal(fullIDs(toks[s.model], single[i]), ans2[s.model].IDs[i]) {
			bad[s.model] = append(bad[s.model], s.c)
		}
	}
	for _, m := range oracleModels {
		if cps := bad[m.name]; len(cps) > 0 {
			var list []string
			for _, c := range cps[:min(len(cps), 40)] {
				list = append(list, fmt.Sprintf("U+%04X", c))
			}
			t.Errorf("%s: sweep: %d code points differ: %s", m.name, len(cps), strings.Join(list, " "))
		}
	}
}

// oracleNormalizers are the normalizers of oracle.js with svc's equivalent.
var oracleNormalizers = []struct {
	name  string
	steps []normStep
}{
	{"bertAll", []normStep{{kind: normBert, cleanText: true, chinese: true, stripAccents: true, lowercase: true}}},
	{"bertCased", []normStep{{kind: normBert, cleanText: true, chinese: true}}},
	{"bertStripOnly", []normStep{{kind: normBert, stripAccents: true}}},
	{"lowercase", []normStep{{kind: normLowercase}}},
	{"stripAccents", []normStep{{kind: normStripAccents}}},
	{"nfd", []normStep{{kind: normNFD}}},
	{"nfc", []normStep{{kind: normNFC}}},
	{"nfkd", []normStep{{kind: normNFKD}}},
	{"nfkc", []normStep{{kind: normNFKC}}},
	{"strip", []normStep{{kind: normStrip, left: true, right: true}}},
}

// TestOracleNormalizers compares each normalizer with the library's on the
// corpus and on every code point U+0000-U+2FFFF inside a word.
func TestOracleNormalizers(t *testing.T) {
	dir := oracleDir(t)
	texts := oracleCorpus()
	for c := rune(0); c <= 0x2FFFF; c++ {
		if c < 0xd800 || c > 0xdfff {
			texts = append(texts, "a"+string(c)+"b")
		}
	}
	var names []string
	for _, n := range oracleNormalizers {
		names = append(names, n.name)
	}
	req, err := json.Marshal(map[string]any{"normalize": names, "texts": texts})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("..", "..", "..", "testdata", "tokenizers", "oracle.js"), dir)
	cmd.Stdin = bytes.NewReader(req)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node oracle.js: %v\n%s", err, stderr.String())
	}
	var ans map[string][]string
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatal(err)
	}
	for _, n := range oracleNormalizers {
		tk := &Tokenizer{norm: n.steps}
		want := ans[n.name]
		if len(want) != len(texts) {
			t.Fatalf("%s: oracle answered %d texts, want %d", n.name, len(want), len(texts))
		}
		bad := 0
		for i, s := range texts {
			if got := tk.normalize(s); got != want[i] {
				bad++
				if bad <= 5 {
					t.Errorf("%s(%+q) = %+q, Hugging Face %+q", n.name, s, got, want[i])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d/%d texts differ", n.name, bad, len(texts))
		} else {
			t.Logf("%s: 0/%d texts differ", n.name, len(texts))
		}
	}
}

// TestOracleAddedTokens compares added-token matching (lstrip, rstrip,
// single_word, normalized, overlaps) and the other supported normalizer
// and pre-tokenizer pipelines with the library, on bert-base-uncased's
// vocabulary with extra added tokens.
func TestOracleAddedTokens(t *testing.T) {
	dir := oracleDir(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "tokenizers", "bert-base-uncased", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	added := doc["added_tokens"].([]any)
	for i, a := range []map[string]any{
		{"content": "<ent>", "lstrip": true, "rstrip": true, "special": true},
		{"content": "Foo", "normalized": true},
		{"content": "xy", "single_word": true, "lstrip": true},
		{"content": "☃☃", "single_word": true},
		{"content": "ab c", "rstrip": true},
		{"content": "Été", "normalized": true},
		{"content": "[MASK]x"},
		{"content": "ŊŊ", "single_word": true, "rstrip": true, "normalized": true},
	} {
		tok := map[string]any{"id": 30522 + i, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}
		for k, v := range a {
			tok[k] = v
		}
		added = append(added, tok)
	}
	doc["added_tokens"] = added
	pipelines := map[string][2]any{
		"added-bert": {doc["normalizer"], doc["pre_tokenizer"]},
		"added-seq": {
			map[string]any{"type": "Sequence", "normalizers": []any{
				map[string]any{"type": "NFD"}, map[string]any{"type": "Lowercase"}, map[string]any{"type": "StripAccents"}, map[string]any{"type": "Strip", "strip_left": true, "strip_right": true}}},
			map[string]any{"type": "Sequence", "pretokenizers": []any{map[string]any{"type": "WhitespaceSplit"}, map[string]any{"type": "BertPreTokenizer"}}},
		},
		"added-nfkc": {
			map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFKC"}, map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "lowercase": false, "strip_accents": true}}},
			map[string]any{"type": "WhitespaceSplit"},
		},
	}
	saved := oracleModels
	defer func() { oracleModels = saved }()
	oracleModels = nil
	toks := map[string]*Tokenizer{}
	tmp := t.TempDir()
	for _, name := range []string{"added-bert", "added-seq", "added-nfkc"} {
		doc["normalizer"], doc["pre_tokenizer"] = pipelines[name][0], pipelines[name][1]
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(tmp, name+".json")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		tk, err := FromJSON(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		toks[name] = tk
		oracleModels = append(oracleModels, oracleModel{name: name, file: file})
	}
	pieces := []string{"<ent>", " <ent> ", "Foo", "foo", "FOO", "xy", " xy", "axy", "xya", "☃☃", "a☃☃", "☃☃ ", "ab c", "ab c  ", "Été", "été", "ete",
		"[MASK]x", "[MASK]", "[MASK]xy", "ŊŊ", "ŋŋ", "ŋ", "ß", " ", "  ", "\t", "\u00a0", "\u3000", "a", "b", "word", "é", "\u0301", "!", ".", "-", "_", "1", "中", "ﬁ", "\u200d", "\u0897"}
	rng := rand.New(rand.NewPCG(3, 4))
	texts := slices.Clone(pieces)
	for len(texts) < 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	texts = append(texts, oracleCorpus()[:500]...)
	ans := runOracle(t, dir, toks, texts, nil)
	for _, m := range oracleModels {
		bad := 0
		for i, s := range texts {
			if got := fullIDs(toks[m.name], s); !slices.Equal(got, ans[m.name].IDs[i]) {
				bad++
				if bad <= 8 {
					t.Errorf("%s: %+q:\n svc          %v\n Hugging Face %v", m.name, s, got, ans[m.name].IDs[i])
				}
			}
		}
		t.Logf("%s: %d/%d strings differ", m.name, bad, len(texts))
	}
}
