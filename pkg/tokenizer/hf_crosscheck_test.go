package tokenizer

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// crossCheckScript encodes texts (JSON on stdin) with the Hugging Face
// tokenizers library and prints the ids as JSON.
const crossCheckScript = `
import json, sys
from tokenizers import Tokenizer
req = json.load(sys.stdin)
tok = Tokenizer.from_str(req["doc"])
print(json.dumps([tok.encode(t).ids for t in req["texts"]]))
`

// TestCrossCheckHuggingFace compares Encode with the Python tokenizers
// package on the tokenizer.json fixture. It is skipped unless python3 with
// tokenizers is installed.
func TestCrossCheckHuggingFace(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	if exec.Command(python, "-c", "import tokenizers").Run() != nil {
		t.Skip("python3 package tokenizers not installed")
	}
	var texts []string
	for _, s := range equivalenceTexts {
		if utf8.ValidString(s) { // Python strings cannot hold invalid UTF-8
			texts = append(texts, s)
		}
	}
	texts = append(texts, "Привет, мир! Ελληνικά ﬁ ① ½ \u2028x", "emoji 😀👍🏽 ok", "a\u0301\u0327b", "tab\tsep\u0085nel")
	req, err := json.Marshal(map[string]any{"doc": testJSON, "texts": texts})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", crossCheckScript)
	cmd.Stdin = bytes.NewReader(req)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var want [][]int64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	tk := mustJSON(t, testJSON)
	for i, text := range texts {
		if got := tk.Encode(text, 0).IDs; !reflect.DeepEqual(got, want[i]) {
			t.Errorf("Encode(%q) = %v, Hugging Face %v", text, got, want[i])
		}
	}
}
