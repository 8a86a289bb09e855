package vpec

import (
	"errors"
	"os"
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
