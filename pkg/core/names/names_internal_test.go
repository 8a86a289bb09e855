package names

import (
	"strings"
	"testing"
)

// FuzzValidName: the ASCII fast path agrees with the rune loop.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"", "pii_detection", "a\x7fb", "a\x1fb", "é", "\u202e", "\xff", "abc\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), validNameRunes(s); (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("ValidName(%q) = %v, rune loop %v", s, got, want)
		}
	})
}

// FuzzValidPrefixedID: the one-pass check agrees with checking the tail
// and the whole value apart.
func FuzzValidPrefixedID(f *testing.F) {
	for _, s := range []string{"rec_1", "rec_", "rec__", "rec_a-b", "run_x", "rec_" + strings.Repeat("a", 124), "rec_" + strings.Repeat("a", 125)} {
		f.Add(s, "rec_")
	}
	f.Fuzz(func(t *testing.T, s, prefix string) {
		tail, ok := strings.CutPrefix(s, prefix)
		want := ok && tail != "" && ValidID(tail) && ValidID(s)
		if got := ValidPrefixedID(s, prefix); got != want {
			t.Fatalf("ValidPrefixedID(%q, %q) = %v, want %v", s, prefix, got, want)
		}
	})
}
