package canonical

import (
	"strings"
	"testing"
)

// TestShortDecimal: the fast decision on short decimal fractions agrees
// with converting them (ParseFloat, then the encoder) on every decimal of
// every digit count up to the limit and past it, with zeros leading,
// inside and trailing the fraction, signs, and integer parts of every
// length, and it decides only what it may.
func TestShortDecimal(t *testing.T) {
	var cases []string
	ints := []string{"0", "1", "9", "10", "123", "99999", "1234567", "100000000000000", "12345678901234", "123456789012345", "9007199254740993"}
	fracs := []string{"0", "5", "50", "05", "8", "1", "25", "125", "0001", "000001", "0000001", "00000001", "1000001", "123456789012345", "12345678901234", "99999999999999", "30000000000000004", "1", "10"}
	for _, ip := range ints {
		for _, fp := range fracs {
			for _, sign := range []string{"", "-"} {
				cases = append(cases, sign+ip+"."+fp)
			}
		}
	}
	// Every fraction of up to 15 digits made of 0, 1, 5 and 9 after "0."
	// and "3.", which covers leading and trailing zeros of every length.
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		if n == 0 {
			return
		}
		for _, c := range "0159" {
			s := prefix + string(c)
			cases = append(cases, "0."+s, "3."+s, "-0."+s)
			if n > 1 && len(s) < 8 {
				grow(s, n-1)
			}
		}
	}
	grow("", 8)
	for n := 1; n <= 17; n++ {
		cases = append(cases, "0."+strings.Repeat("0", n-1)+"7", "7."+strings.Repeat("3", n), "0."+strings.Repeat("9", n))
	}
	decided := 0
	for _, c := range cases {
		raw := []byte(c)
		want := canonicalNumber(raw)
		ok, dec := shortDecimal(raw)
		if dec {
			decided++
			if ok != want {
				t.Fatalf("shortDecimal(%s) = %v; converted: %v", c, ok, want)
			}
		}
		if end, got := CanonicalNumberAt(raw, 0); end != len(raw) || got != want {
			t.Fatalf("CanonicalNumberAt(%s) = %d, %v; converted: %v", c, end, got, want)
		}
	}
	if decided < len(cases)/2 {
		t.Fatalf("decided %d of %d", decided, len(cases))
	}
	for _, c := range []string{"1e5", "1.5e5", "1.5E-3", "0.0000001", "1234567890123456.5", "12"} {
		if _, dec := shortDecimal([]byte(c)); dec {
			t.Errorf("shortDecimal(%s) decided", c)
		}
	}
}

// FuzzCanonicalNumber: CanonicalNumberAt, with its fast decisions, agrees
// with converting the number on every number the grammar takes.
func FuzzCanonicalNumber(f *testing.F) {
	for _, s := range []string{"0.8", "0.80", "-0.5", "0.000001", "0.0000001", "123456789012345.5", "1.5e3", "12", "-0", "0.1000000000000000055511151231257827"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		end, simple, msg := scanNumber(d, 0)
		if msg != "" {
			return
		}
		_ = simple
		want := canonicalNumber(d[:end])
		if e, got := CanonicalNumberAt(d, 0); e != end || got != want {
			t.Fatalf("CanonicalNumberAt(%q) = %d, %v; converted: %v", d[:end], e, got, want)
		}
	})
}
