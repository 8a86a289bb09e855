package vpec_test

import (
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/vpec"
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
		err := vpec.ValidName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, vpec.ErrInvalidName) {
			t.Errorf("ValidName(%q) = %v, not ErrInvalidName", tc.name, err)
		}
	}
}

func TestIssueGapsChain(t *testing.T) {
	recs := records(5, vpec.Execution)
	if _, err := vpec.Chain(vpec.Genesis("run_x"), recs); err != nil {
		t.Fatal(err)
	}
	jcs, err := vpec.RecordsJCS(recs)
	if err != nil {
		t.Fatal(err)
	}
	if g := vpec.IssueGaps("run_x", recs, jcs, "2026-11-22T00:00:00.000Z"); len(g) != 0 {
		t.Fatalf("intact chain: gaps %+v", g)
	}
	// drop records 2 and 3: one hole.
	holed := append([]vpec.Record{recs[0]}, recs[3:]...)
	hj := append([][]byte{jcs[0]}, jcs[3:]...)
	g := vpec.IssueGaps("run_x", holed, hj, "2026-11-22T00:00:00.000Z")
	if len(g) == 0 || g[0].GapType != vpec.GapSequenceMissing || *g[0].Sequence != 2 {
		t.Fatalf("hole: gaps %+v", g)
	}
}
