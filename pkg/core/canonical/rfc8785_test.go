package canonical

import (
	"bytes"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// TestReferenceFiles runs the test vectors of the RFC 8785 reference
// repository (see testdata/README.md for their provenance).
func TestReferenceFiles(t *testing.T) {
	names := []string{"arrays", "french", "structures", "unicode", "values", "weird"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "input", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "output", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			hexText, err := os.ReadFile(filepath.Join("testdata", "outhex", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			wantHex, err := hex.DecodeString(strings.Join(strings.Fields(string(hexText)), ""))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, wantHex) {
				t.Fatalf("output/%s.json and outhex/%s.txt disagree", name, name)
			}
			got, err := Transform(in)
			if err != nil {
				t.Fatalf("Transform: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Transform:\n got %s\nwant %s", got, want)
			}
			if err := CheckStrict(in); err != nil {
				t.Errorf("CheckStrict: %v", err)
			}
		})
	}
}

// TestRFCSections covers the examples printed in the RFC 8785 text, written
// here from the RFC (sections 3.2.2 and 3.2.3).
func TestRFCSections(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			// Section 3.2.2 (also testdata/input/values.json).
			name: "3.2.2 sample",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			// Section 3.2.3: the RFC lists the values in sorted order as
			// Carriage Return, One, Control, Latin Small Letter O With
			// Diaeresis, Euro Sign, Emoji: Grinning Face, Hebrew Letter
			// Dalet With Dagesh.
			name: "3.2.3 sorting",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
				"\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Transform([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
			oracle, err := jcs.Transform([]byte(tt.in))
			if err != nil || !bytes.Equal(oracle, got) {
				t.Errorf("oracle disagrees: %s %v", oracle, err)
			}
		})
	}
}

// TestAppendixB checks the ES6 number serialisation table of RFC 8785
// Appendix B (IEEE-754 bit pattern -> expected JSON text). The rows marked
// "RFC" are written from the RFC's Appendix B as recalled; rows marked
// "extra" were given by the task brief or added here. Every row is also
// checked against the gowebpki/jcs oracle and against ECMAScript's rule that
// the text must round-trip to the same double.
func TestAppendixB(t *testing.T) {
	tests := []struct {
		bits   string
		want   string // "" means: not representable in JSON (NaN/Infinity)
		source string
	}{
		{"0000000000000000", "0", "RFC"},                        // zero
		{"8000000000000000", "0", "RFC"},                        // minus zero
		{"0000000000000001", "5e-324", "RFC"},                   // min pos number
		{"8000000000000001", "-5e-324", "RFC"},                  // min neg number
		{"7fefffffffffffff", "1.7976931348623157e+308", "RFC"},  // max pos number
		{"ffefffffffffffff", "-1.7976931348623157e+308", "RFC"}, // max neg number
		{"4340000000000000", "9007199254740992", "RFC"},         // max pos int
		{"c340000000000000", "-9007199254740992", "RFC"},        // max neg int
		{"4430000000000000", "295147905179352830000", "RFC"},    // ~2**68
		{"7fffffffffffffff", "", "RFC"},                         // NaN
		{"7ff0000000000000", "", "RFC"},                         // Infinity
		{"44b52d02c7e14af5", "9.999999999999997e+22", "RFC"},
		{"44b52d02c7e14af6", "1e+23", "RFC"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23", "RFC"},
		{"444b1ae4d6e2ef4e", "999999999999999700000", "RFC"},
		{"444b1ae4d6e2ef4f", "999999999999999900000", "RFC"},
		{"444b1ae4d6e2ef50", "1e+21", "RFC"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7", "RFC"},
		{"3eb0c6f7a0b5ed8d", "0.000001", "RFC"},
		{"41b3de4355555553", "333333333.3333332", "RFC"},
		{"41b3de4355555554", "333333333.33333325", "RFC"},
		{"41b3de4355555555", "333333333.3333333", "RFC"},
		{"41b3de4355555556", "333333333.3333334", "RFC"},
		{"41b3de4355555557", "333333333.33333343", "RFC"},
		{"becbf647612f3696", "-0.0000033333333333333333", "RFC"},
		{"43143ff3c1cb0959", "1424953923781206.2", "RFC"}, // round to even
		{"fff0000000000000", "", "extra"},                 // -Infinity
		{"7ff8000000000000", "", "extra"},                 // quiet NaN
		{"4415af1d78b58c40", "100000000000000000000", "extra"},
		{"4415af1d78b58c3f", "99999999999999980000", "extra"},
		// The brief proposed 100000000000000030000 here, which is wrong: the
		// double is 1e20+16384 = 100000000000000016384, whose shortest
		// round-trip digits are 1.0000000000000002e20 (and
		// 100000000000000030000 parses to a different double). Verified
		// with strconv and the oracle.
		{"4415af1d78b58c41", "100000000000000020000", "extra"},
		{"4340000000000001", "9007199254740994", "extra"}, // reference testdata README
		{"4340000000000002", "9007199254740996", "extra"}, // reference testdata README
		{"3ff0000000000000", "1", "extra"},
		{"3fb999999999999a", "0.1", "extra"},
		{"3ee4f8b588e368f1", "0.00001", "extra"},
		{"3e7ad7f29abcaf48", "1e-7", "extra"},
		{"0010000000000000", "2.2250738585072014e-308", "extra"}, // min normal
		{"000fffffffffffff", "2.225073858507201e-308", "extra"},  // max subnormal
		{"4202a05f20000000", "10000000000", "extra"},
		{"c0c3880000000000", "-10000", "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.bits, func(t *testing.T) {
			u, err := strconv.ParseUint(tt.bits, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			f := math.Float64frombits(u)
			oracle, oerr := jcs.NumberToJSON(f)
			if tt.want == "" {
				if !math.IsNaN(f) && !math.IsInf(f, 0) {
					t.Fatalf("%s is finite", tt.bits)
				}
				if oerr == nil {
					t.Errorf("oracle accepts %s", tt.bits)
				}
				if got := string(AppendNumber(nil, f)); got != "null" {
					t.Errorf("AppendNumber(%v) = %q, want null", f, got)
				}
				return
			}
			got := string(AppendNumber(nil, f))
			if got != tt.want {
				t.Errorf("AppendNumber(%s) = %s, want %s (%s)", tt.bits, got, tt.want, tt.source)
			}
			if oerr != nil || oracle != tt.want {
				t.Errorf("oracle NumberToJSON(%s) = %s, %v; table says %s (%s)", tt.bits, oracle, oerr, tt.want, tt.source)
			}
			back, err := strconv.ParseFloat(tt.want, 64)
			if err != nil || (back != f && !(f == 0 && back == 0)) {
				t.Errorf("%s does not round-trip to %s", tt.want, tt.bits)
			}
			// The same value given as JSON text in several spellings.
			for _, in := range []string{tt.want, strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'e', 20, 64)} {
				out, err := Transform([]byte(in))
				if err != nil || string(out) != tt.want {
					t.Errorf("Transform(%s) = %s, %v; want %s", in, out, err, tt.want)
				}
			}
		})
	}
}
