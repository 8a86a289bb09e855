package fuzzedge

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestDocuments(t *testing.T) {
	doc := []byte(`{"a": 12, "s": "3 \"4\" 5", "f": 1.5, "e": 2e3, "n": -7, "l": [0, 1]}`)
	got := Documents(doc, 1<<20)
	// Four integer literals (12, -7, 0, 1), each replaced by every edge
	// value but the one it already is.
	if want := 4*len(edges) - 2; len(got) != want {
		t.Fatalf("%d documents, want %d", len(got), want)
	}
	for _, d := range got {
		var v map[string]any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if v["s"] != `3 "4" 5` || v["f"] != 1.5 || v["e"] != 2000.0 {
			t.Fatalf("a string or non-integer changed: %s", d)
		}
	}
	if !slices.ContainsFunc(got, func(d []byte) bool { return strings.Contains(string(d), `"a": 1099511627776,`) }) {
		t.Errorf("2^40 never replaces the first literal")
	}
	if n := len(Documents(doc, 10)); n != 10 {
		t.Errorf("limit 10: %d documents", n)
	}
}
