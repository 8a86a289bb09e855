package names_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-gov/svc/pkg/core/names"
)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"pii_scan", true},
		{"Prüfung ✓ 検査", true},
		{"", true},
		{"a\x1b[2J", false},
		{"a\rb", false},
		{"a\nb", false},
		{"a\x00", false},
		{"a\x7f", false},
		{"a\u0085", false},
		{"a\u009b", false},
		{"evil\u202Etxt", false},
		{"a\u061c", false},
		{"a\u200e", false},
		{"a\u200f", false},
		{"a\u2066", false},
		{"a\u2069", false},
		{"a\xff", false},
	} {
		err := names.ValidName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, names.ErrInvalidName) {
			t.Errorf("ValidName(%q) = %v, not ErrInvalidName", tc.name, err)
		}
	}
}

// TestValidPrefixedID: a prefixed id is its prefix and an id, 128 bytes
// at most in all, prefix included, its part after the prefix starting
// with a letter or digit (docs/FORMATS.md).
func TestValidPrefixedID(t *testing.T) {
	recID := func(n int) string { return "rec_" + strings.Repeat("a", n-4) }
	for _, tc := range []struct {
		id, prefix string
		ok         bool
	}{
		{recID(128), "rec_", true}, {recID(129), "rec_", false}, {recID(132), "rec_", false},
		{"rec_1", "rec_", true}, {"rec_", "rec_", false}, {"rec_-x", "rec_", false}, {"rec_.x", "rec_", false}, {"rec-1", "rec_", false}, {"Rec_1", "rec_", false},
		{"vpec_" + strings.Repeat("9", 123), "vpec_", true}, {"vpec_" + strings.Repeat("9", 124), "vpec_", false},
		{"run_" + strings.Repeat("b", 124), "run_", true}, {"run_" + strings.Repeat("b", 125), "run_", false}, {"run_", "run_", false},
	} {
		if got := names.ValidPrefixedID(tc.id, tc.prefix); got != tc.ok {
			t.Errorf("ValidPrefixedID(%d bytes %.12q, %s) = %v, want %v", len(tc.id), tc.id, tc.prefix, got, tc.ok)
		}
	}
}

// TestNewOrderedID: an ordered id is its prefix and a version 7 UUID that
// google/uuid reads as one, with the given time to the millisecond; later
// times (by 245 ns or more: a 4096th of a millisecond is 244.14 ns) sort
// later as strings; ids at one instant differ.
func TestNewOrderedID(t *testing.T) {
	re := regexp.MustCompile(`^run_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	base := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	steps := []time.Duration{0, 245 * time.Nanosecond, 490 * time.Nanosecond, time.Microsecond, 999_755 * time.Nanosecond,
		time.Millisecond, time.Millisecond + 245*time.Nanosecond, time.Second, 24 * time.Hour, 200 * 365 * 24 * time.Hour}
	prev := ""
	for _, d := range steps {
		at := base.Add(d)
		id := names.NewOrderedID("run_", at)
		if !re.MatchString(id) || !names.ValidPrefixedID(id, "run_") {
			t.Fatalf("NewOrderedID(%v) = %q", at, id)
		}
		u, err := uuid.Parse(strings.TrimPrefix(id, "run_"))
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("google/uuid reads %q as version %d variant %v (%v)", id, u.Version(), u.Variant(), err)
		}
		if sec, nsec := u.Time().UnixTime(); time.Unix(sec, nsec).UnixMilli() != at.UnixMilli() {
			t.Fatalf("%q holds %v, want %v", id, time.Unix(sec, nsec).UTC(), at.Truncate(time.Millisecond))
		}
		if id <= prev {
			t.Fatalf("%q (at +%v) does not sort after %q", id, d, prev)
		}
		prev = id
	}
	seen := map[string]bool{}
	for range 1000 {
		id := names.NewOrderedID("rec_", base)
		if seen[id] {
			t.Fatalf("NewOrderedID made %q twice", id)
		}
		seen[id] = true
	}
}

// TestNewID: a fresh id is its prefix and a version 4 UUID, a valid
// prefixed id, and never the same twice.
func TestNewID(t *testing.T) {
	uuid := regexp.MustCompile(`^vpec_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		id := names.NewID("vpec_")
		if !uuid.MatchString(id) || !names.ValidPrefixedID(id, "vpec_") || seen[id] {
			t.Fatalf("NewID = %q", id)
		}
		seen[id] = true
	}
}
