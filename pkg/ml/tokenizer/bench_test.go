package tokenizer

import (
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkEncode tokenizes a mixed English/accented/CJK/emoji text of
// about 3 KB with all-MiniLM-L6-v2's real tokenizer (uncased: NFD, mark
// stripping and lowercasing on every character).
func BenchmarkEncode(b *testing.B) {
	tk, err := Load(filepath.Join("..", "..", "..", "testdata", "tokenizers", "all-MiniLM-L6-v2"))
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("The Café served naïve crème brûlée; 東京 and 서울 👍🏽 — ÉCOLE İstanbul! ", 40)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tk.Encode(text, 256)
	}
}
