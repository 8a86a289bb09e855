package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/names"
)

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{
		"pii_detection":        "pii_detection",
		"Prüfung ✓":            "Prüfung ✓",
		"a\x1b[2Jb":            `a\x1b[2Jb`,
		"evil\u202etxt.exe":    `evil\u202etxt.exe`,
		"line\rover":           `line\x0dover`,
		"nl\nx":                `nl\x0ax`,
		"c1\u009b31m":          `c1\u009b31m`,
		"bad\xffutf8":          `bad\xffutf8`,
		"sep\u2028x":           `sep\u2028x`,
		"iso\u2066x\u2069done": `iso\u2066x\u2069done`,
	} {
		if got := safe(in); got != want {
			t.Errorf("safe(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSafe: nothing safe returns can drive a terminal: no control, bidi
// or separator character, no invalid UTF-8; text without them is kept.
func FuzzSafe(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x1b[2J\u202e\r", "\xff\xfe", "\u0085\u061c\u200e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := safe(s)
		if !utf8.ValidString(out) {
			t.Fatalf("safe(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if names.IsControl(r) || r == 0x2028 || r == 0x2029 {
				t.Fatalf("safe(%q) = %q holds U+%04X", s, out, r)
			}
		}
		if names.ValidName(s) == nil && !strings.ContainsAny(s, "\u2028\u2029") && out != s {
			t.Fatalf("safe changed clean text %q to %q", s, out)
		}
	})
}
