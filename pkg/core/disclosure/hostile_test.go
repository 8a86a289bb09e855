package disclosure

import (
	"errors"
	"strings"
	"testing"
)

// Inputs a hostile or careless client may split: spellings that decode to
// a duplicate name, a byte order mark, lone surrogates. Each is refused
// (I-JSON), so no two verifiers can read the input differently.
func TestHostileSplitRefuses(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"\u0061":2}`,                         // duplicate once unescaped
		`{"a":{"b":1,"b":1}}`,                        // duplicate inside a value
		"\xef\xbb\xbf{\"a\":1}",                      // byte order mark
		`{"a":"\ud800"}`,                             // lone surrogate
		`{"\udc00":1}`,                               // lone surrogate in a name
		`{"a":1e-324}`,                               // underflows to 0
		`{"a":-1e400}`,                               // overflows
		`{"a":9007199254740993}`,                     // 2^53+1: no double holds it
		`{"a":0.1000000000000000055511151231257827}`, // not the double 0.1 exactly
	} {
		if _, err := SplitInput([]byte(in), []string{"a"}); !errors.Is(err, ErrMalformed) {
			t.Errorf("SplitInput(%q) = %v, want ErrMalformed", in, err)
		}
	}
}

// Field names are compared byte for byte: no Unicode normalisation, no
// case folding (docs/FORMATS.md, "Selective records"). Two members that
// look alike are two members; only the one whose bytes are declared is
// disclosed, and a disclosure of the other is UNDECLARED FIELD.
func TestHostileFieldNamesByteForByte(t *testing.T) {
	const nfc, nfd = "caf\u00e9", "cafe\u0301"
	s, err := SplitInput([]byte(`{"`+nfc+`":"composed","`+nfd+`":"decomposed","Café":"upper","__proto__":{"x":1}}`), []string{nfc, "__proto__"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.All) != 4 || len(s.Disclosed) != 2 || s.Disclosed[0].Field != nfc || string(s.Disclosed[0].Value.(rawJSON)) != `"composed"` ||
		s.Disclosed[1].Field != "__proto__" {
		t.Fatalf("split: %+v", s.Disclosed)
	}
	if err := CheckSelective(s.Commitment, s.Digests, s.Disclosed, []string{nfc, "__proto__"}); err != nil {
		t.Fatalf("the declared members: %v", err)
	}
	var other Disclosure
	for _, d := range s.All {
		if d.Field == nfd {
			other = d
		}
	}
	for _, declared := range [][]string{{nfc}, {"CAFÉ"}, {"café "}} {
		err := CheckSelective(s.Commitment, s.Digests, []Disclosure{other}, declared)
		var e *Error
		if !errors.Is(err, ErrUndeclared) || !errors.As(err, &e) || e.Field != "disclosures[0].field" {
			t.Errorf("declared %q, disclosing the NFD spelling: %v, want ErrUndeclared", declared, err)
		}
	}
	// The same member disclosed twice under fresh salts is refused before
	// its digest is looked up.
	twice := []Disclosure{s.Disclosed[0], s.Disclosed[0]}
	twice[1].Salt = strings.Repeat("A", 22)
	if err := CheckSelective(s.Commitment, s.Digests, twice, []string{nfc}); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "disclosed twice") {
		t.Errorf("disclosed twice: %v", err)
	}
}

// A transparent record without disclosed_input (or disclosed_output)
// discloses the empty byte string: when the record commits to other
// bytes, the error says the member is absent rather than only that two
// hashes differ.
func TestHostileAbsentBytes(t *testing.T) {
	err := CheckBytes("disclosed_input", "", "sha256:"+strings.Repeat("ab", 32))
	var e *Error
	if !errors.Is(err, ErrMismatch) || !errors.As(err, &e) || e.Field != "disclosed_input" || !strings.Contains(e.Msg, "is absent") {
		t.Fatalf("%v", err)
	}
	// The empty byte string's own commitment passes.
	if err := CheckBytes("disclosed_output", "", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"); err != nil {
		t.Fatal(err)
	}
}
