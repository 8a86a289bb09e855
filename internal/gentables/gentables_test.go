package gentables

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTablesCurrent regenerates pkg/ml/tokenizer/tables_gen.go from the
// pinned tokenizers library and fails if the committed file differs.
// `make test` sets SVC_HF_TOKENIZERS (scripts/install-tokenizers.sh).
func TestTablesCurrent(t *testing.T) {
	dir := os.Getenv("SVC_HF_TOKENIZERS")
	if dir == "" {
		t.Skip("SVC_HF_TOKENIZERS is not set: `make test` sets it (scripts/install-tokenizers.sh)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("SVC_HF_TOKENIZERS is set but node is not installed: %v", err)
	}
	probe, err := Probe(node, dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Generate(probe)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "pkg", "ml", "tokenizer", "tables_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("pkg/ml/tokenizer/tables_gen.go is stale: run go run ./internal/gentables/gen -tokenizers %s", dir)
	}
}

// minimal is a well-formed probe answer: one range per set, the Hangul
// syllables and one other decomposition.
func minimal(mutate func(string) string) []byte {
	var b strings.Builder
	b.WriteString(`{"version":"0.0.1","whitespace":[[32,32]],"punct":[[33,47]],"cleanDrop":[[0,8]],"cleanSpace":[[9,10]],`)
	b.WriteString(`"chinese":[[19968,40959]],"mn":[[768,879]],"nonStarter":[[769,769]],"combining":[[768,879]],"lower":[[65,[97]]],"oddities":[],"decompK":[[160,[32]]],"compose":[[192,65,768]],"word":[[48,57]],"decomp":[[192,[65,768]]`)
	for c := hangulBase; c <= hangulLast; c++ {
		b.WriteString(",[")
		b.WriteString(itoa(c))
		b.WriteString(",[")
		for i, r := range hangul(rune(c)) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(itoa(int(r)))
		}
		b.WriteString("]]")
	}
	b.WriteString("]}")
	s := b.String()
	if mutate != nil {
		s = mutate(s)
	}
	return []byte(s)
}

func itoa(i int) string {
	var buf [12]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(buf[n:])
		}
	}
}

func TestGenerate(t *testing.T) {
	src, err := Generate(minimal(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`const hfTablesVersion = "0.0.1"`, "{0x0300, 0x036F}", "0x0301: 230,", `0x00C0: "A\u0300",`, `0x0041: "a",`, `0x00A0: " ",`, `{0x0041, 0x0300}: 0x00C0,`} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("generated source lacks %s", want)
		}
	}
	if bytes.Contains(src, []byte("0xAC00:")) {
		t.Error("Hangul syllables must be computed, not listed")
	}
}

func TestGenerateRejects(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"not JSON", []byte("{")},
		{"null", []byte("null")},
		{"no version", minimal(func(s string) string { return strings.Replace(s, `"version":"0.0.1"`, `"version":""`, 1) })},
		{"oddity", minimal(func(s string) string { return strings.Replace(s, `"oddities":[]`, `"oddities":[["pre",65,["a"]]]`, 1) })},
		{"empty set", minimal(func(s string) string { return strings.Replace(s, `"punct":[[33,47]]`, `"punct":[]`, 1) })},
		{"starter with class", minimal(func(s string) string {
			return strings.Replace(s, `"nonStarter":[[769,769]]`, `"nonStarter":[[65,65]]`, 1)
		})},
		{"Hangul not algorithmic", minimal(func(s string) string { return strings.Replace(s, `[44032,[4352,4449]]`, `[44032,[4352]]`, 1) })},
		{"Hangul missing", minimal(func(s string) string { return strings.Replace(s, `,[44032,[4352,4449]]`, ``, 1) })},
		{"no composites", minimal(func(s string) string { return strings.Replace(s, `"compose":[[192,65,768]]`, `"compose":[]`, 1) })},
		{"bad map entry", minimal(func(s string) string { return strings.Replace(s, `"lower":[[65,[97]]]`, `"lower":[[65]]`, 1) })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(tt.in)
			if !errors.Is(err, ErrProbe) {
				t.Fatalf("Generate: %v, want ErrProbe", err)
			}
		})
	}
}
