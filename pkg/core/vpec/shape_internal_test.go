package vpec

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/shapecases"
	"github.com/svc-gov/svc/pkg/core/document"
)

// TestShape: documents that cannot be a VPEC are refused by the one-pass
// shape scan, naming the member; the scan allocates nothing on a VPEC.
func TestShape(t *testing.T) {
	orig, err := os.ReadFile("../../../testdata/vectors/vpec/valid/witnessed.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := shapecases.Cases()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkShape([]byte(c.Doc))
			var se *shapeError
			if !errors.Is(err, errShape) || !errors.Is(err, document.ErrSchema) || !errors.As(err, &se) || !strings.Contains(se.detail(), c.Want) {
				t.Fatalf("checkShape = %v, want %q", err, c.Want)
			}
			if _, err := Parse([]byte(c.Doc)); !errors.Is(err, document.ErrSchema) || !strings.Contains(err.Error(), se.detail()) {
				t.Fatalf("Parse = %v, want the shape error %q", err, se.detail())
			}
		})
	}
	for _, ok := range []string{`{}`, `{"records":[]}`, `{"records":[`} {
		if err := checkShape([]byte(ok)); err != nil {
			t.Errorf("checkShape(%s) = %v; shape allowed or left to the parser", ok, err)
		}
	}
	if n := testing.AllocsPerRun(5, func() {
		if err := checkShape(orig); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("checkShape allocated %v times", n)
	}
}

// TestRecordMembers: the shape scan's table classes every member of a v1
// record, and nothing else, as the scan needs.
func TestRecordMembers(t *testing.T) {
	want := map[string]memberClass{"details": objectMember, "review": objectMember, "check_session": objectMember,
		"bounded_inference": objectMember, "zk_proof": objectMember, "disclosures": disclosuresMember}
	for name := range jsonNames(reflect.TypeFor[Record]()) {
		w, ok := want[name]
		if !ok {
			w = plainMember
		}
		if got := recordMembers.class([]byte(name)); got != w {
			t.Errorf("%s: class %d, want %d", name, got, w)
		}
		for _, other := range []string{name[1:], name + "x", strings.ToUpper(name), name[:len(name)-1] + "_"} {
			if jsonNames(reflect.TypeFor[Record]())[other] {
				continue
			}
			if got := recordMembers.class([]byte(other)); got != unknownMember {
				t.Errorf("%q: class %d, want unknown", other, got)
			}
		}
	}
	for _, name := range []string{"", strings.Repeat("x", 200), "record_idx", "Review"} {
		if got := recordMembers.class([]byte(name)); got != unknownMember {
			t.Errorf("%q: class %d, want unknown", name, got)
		}
	}
}
