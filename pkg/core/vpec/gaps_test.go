package vpec_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
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

func TestIssueGapsRanges(t *testing.T) {
	recs := records(3, vpec.Execution)
	recs[1].Sequence = 5000 // 2-4999 missing
	recs[2].Sequence = 5002 // 5001 missing
	if _, err := vpec.Chain(vpec.Genesis("run_x"), recs); err != nil {
		t.Fatal(err)
	}
	jcs, _ := vpec.RecordsJCS(recs)
	g := vpec.IssueGaps("run_x", recs, jcs, "2026-11-22T00:00:00.000Z")
	if len(g) != 2 {
		t.Fatalf("want 2 range gaps, got %d: %+v", len(g), g)
	}
	for i, want := range [][2]int64{{2, 4999}, {5001, 5001}} {
		if g[i].GapType != vpec.GapSequenceMissing || *g[i].Sequence != want[0] || g[i].SequenceEnd == nil || *g[i].SequenceEnd != want[1] {
			t.Errorf("gap %d: %+v, want range %v", i, g[i], want)
		}
	}
	// a tampered record: one chain_break gap, no sequence_end.
	recs2 := records(3, vpec.Execution)
	vpec.Chain(vpec.Genesis("run_x"), recs2)
	recs2[1].Check = "changed"
	jcs2, _ := vpec.RecordsJCS(recs2)
	g = vpec.IssueGaps("run_x", recs2, jcs2, "2026-11-22T00:00:00.000Z")
	if len(g) != 1 || g[0].GapType != vpec.GapChainBreak || *g[0].Sequence != 2 || g[0].SequenceEnd != nil {
		t.Fatalf("chain break: %+v", g)
	}
}

func TestIssueGapsEmptyRun(t *testing.T) {
	g := vpec.IssueGaps("run_x", nil, nil, "2026-11-22T00:00:00.000Z")
	if len(g) != 1 || g[0].GapType != vpec.GapEmptyRun || g[0].Severity != vpec.High || g[0].Check != nil || g[0].Sequence != nil || g[0].SequenceEnd != nil {
		t.Fatalf("empty run: %+v", g)
	}
}

// issueRun seals records (chained first) with the gaps IssueGaps declares
// for them after drop removes some, plus extra gaps.
func (f *fixture) issueRun(t testing.TB, recs []vpec.Record, drop func([]vpec.Record) []vpec.Record, edit func([]vpec.Gap) []vpec.Gap) []byte {
	t.Helper()
	v := &vpec.VPEC{VPECID: vpec.NewID("vpec_"), RunID: vpec.NewID("run_"), WorkflowID: "wf", OrgID: "org_1",
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", IssuedAt: vpec.FormatTime(timeNow())}
	if _, err := vpec.Chain(vpec.Genesis(v.RunID), recs); err != nil {
		t.Fatal(err)
	}
	if drop != nil {
		recs = drop(recs)
	}
	v.Records = recs
	jcs, err := vpec.RecordsJCS(v.Records)
	if err != nil {
		t.Fatal(err)
	}
	v.Gaps = vpec.IssueGaps(v.RunID, v.Records, jcs, v.IssuedAt)
	if edit != nil {
		v.Gaps = edit(v.Gaps)
	}
	vpec.Finish(v, jcs)
	if err := vpec.Seal(context.Background(), v, f.signer, f.tsa); err != nil {
		t.Fatal(err)
	}
	doc, err := document.MarshalIndent(v)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func failed(r *vpec.Report) []vpec.CheckName {
	var out []vpec.CheckName
	for _, c := range r.Checks {
		if c.Status == vpec.Fail {
			out = append(out, c.Name)
		}
	}
	return out
}

// A hole of any length is declared by one range gap and verifies; a range
// that does not match the hole exactly, or a hole "declared" by a
// chain_break gap, fails the chain check.
func TestVerifyDeclaredRanges(t *testing.T) {
	f := newFixture(t)
	bigHole := func(r []vpec.Record) []vpec.Record {
		// sequences 1, 2, 1503, 1504: 3-1502 missing (1500 records).
		return append(r[:2:2], r[1502:]...)
	}
	setEnd := func(d int64) func([]vpec.Gap) []vpec.Gap {
		return func(g []vpec.Gap) []vpec.Gap { e := *g[0].SequenceEnd + d; g[0].SequenceEnd = &e; return g }
	}
	for _, tc := range []struct {
		name  string
		edit  func([]vpec.Gap) []vpec.Gap
		valid bool
		fail  vpec.CheckName
	}{
		{"declared", nil, true, ""},
		{"range too short", setEnd(-1), false, vpec.CheckChain},
		{"range too long", setEnd(+1), false, vpec.CheckChain},
		{"chain_break instead", func(g []vpec.Gap) []vpec.Gap {
			s := int64(1503)
			return []vpec.Gap{{GapID: "gap_1", GapType: vpec.GapChainBreak, Severity: vpec.Critical, Sequence: &s, Timestamp: g[0].Timestamp}}
		}, false, vpec.CheckChain},
		{"extra range", func(g []vpec.Gap) []vpec.Gap {
			s := int64(1504)
			return append(g, vpec.Gap{GapID: "gap_2", GapType: vpec.GapSequenceMissing, Severity: vpec.High, Sequence: &s, SequenceEnd: &s, Timestamp: g[0].Timestamp})
		}, false, vpec.CheckGaps},
		{"range declared twice", func(g []vpec.Gap) []vpec.Gap {
			d := g[0]
			d.GapID = "gap_2"
			return append(g, d)
		}, false, vpec.CheckGaps},
		{"sequence_end on chain_break", func(g []vpec.Gap) []vpec.Gap {
			g = append(g, vpec.Gap{GapID: "gap_2", GapType: vpec.GapChainBreak, Severity: vpec.Critical, Sequence: g[0].Sequence, SequenceEnd: g[0].Sequence, Timestamp: g[0].Timestamp})
			return g
		}, false, vpec.CheckSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := f.issueRun(t, records(1504, vpec.Execution), bigHole, tc.edit)
			r := verify(t, doc, vpec.Options{Trust: f.trust})
			if r.Valid != tc.valid || (!tc.valid && !slices.Contains(failed(r), tc.fail)) {
				for _, c := range r.Checks {
					t.Logf("%s %s %s %v", c.Status, c.Name, c.Message, c.Details)
				}
				t.Fatalf("verdict %s, want valid=%v failing %s", r.Verdict, tc.valid, tc.fail)
			}
		})
	}
}

// D5: a run without records carries one empty_run gap: VALID but never
// clean; without the gap it fails the gaps check.
func TestVerifyEmptyRun(t *testing.T) {
	f := newFixture(t)
	r := verify(t, f.issueRun(t, nil, nil, nil), vpec.Options{Trust: f.trust})
	if !r.Valid || r.IsClean || r.Check(vpec.CheckGaps).Status != vpec.Warn {
		t.Fatalf("empty run with its gap: valid=%v clean=%v verdict %s", r.Valid, r.IsClean, r.Verdict)
	}
	r = verify(t, f.issue(t, nil, nil), vpec.Options{Trust: f.trust})
	if r.Valid || r.Check(vpec.CheckGaps).Status != vpec.Fail || r.Verdict != "INVALID — GAP MISMATCH" {
		t.Fatalf("empty run without its gap: verdict %s", r.Verdict)
	}
	two := func(g []vpec.Gap) []vpec.Gap { return append(g, g[0]) }
	r = verify(t, f.issueRun(t, nil, nil, two), vpec.Options{Trust: f.trust})
	if r.Valid {
		t.Fatalf("two empty_run gaps: verdict %s", r.Verdict)
	}
	r = verify(t, f.issueRun(t, records(2, vpec.Execution), nil, func(g []vpec.Gap) []vpec.Gap {
		return append(g, vpec.Gap{GapID: "gap_e", GapType: vpec.GapEmptyRun, Severity: vpec.High, Timestamp: vpec.FormatTime(timeNow())})
	}), vpec.Options{Trust: f.trust})
	if r.Valid {
		t.Fatalf("empty_run gap on a run with records: verdict %s", r.Verdict)
	}
}

// FuzzIssueGaps: whatever records a run keeps (any holes, however long,
// or none at all), the VPEC sealed with IssueGaps' gaps verifies VALID,
// and is clean exactly when nothing is missing.
func FuzzIssueGaps(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1})
	f.Add([]byte{1, 0xff, 0xff, 2, 1})
	f.Add([]byte{3, 1, 200, 200, 1})
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, steps []byte) {
		if len(steps) > 64 {
			steps = steps[:64]
		}
		// Each byte is the step to the next kept sequence; a step of k
		// leaves k-1 sequences missing (scaled: up to 2^14 per hole).
		recs := records(len(steps), vpec.Execution)
		var seq int64
		for i, s := range steps {
			step := int64(s)
			if s >= 128 {
				step = int64(s-127) * 128
			}
			seq += max(step, 1)
			recs[i].Sequence = seq
		}
		doc := fx.issueRun(t, recs, nil, nil)
		r := verify(t, doc, vpec.Options{Trust: fx.trust})
		if !r.Valid {
			for _, c := range r.Checks {
				t.Logf("%s %s %s %v", c.Status, c.Name, c.Message, c.Details)
			}
			t.Fatalf("IssueGaps' VPEC: %s", r.Verdict)
		}
		holes := len(recs) == 0
		for i := range recs {
			if recs[i].Sequence != int64(i+1) {
				holes = true
			}
		}
		if r.IsClean == holes {
			t.Fatalf("is_clean %v with holes=%v (%d records)", r.IsClean, holes, len(recs))
		}
	})
}

// A VPEC with many gaps gets a bounded report: MaxReportDetails lines and
// one counting the rest, and a message that counts each gap type.
func TestGapReportBounded(t *testing.T) {
	f := newFixture(t)
	const n = 2*vpec.MaxReportDetails + 50
	everyOther := func(recs []vpec.Record) []vpec.Record {
		var kept []vpec.Record
		for i := range recs {
			if i%2 == 0 {
				kept = append(kept, recs[i])
			}
		}
		return kept
	}
	r := verify(t, f.issueRun(t, records(2*n+1, vpec.Execution), everyOther, nil), vpec.Options{Trust: f.trust})
	c := r.Check(vpec.CheckGaps)
	if !r.Valid || c.Status != vpec.Warn {
		t.Fatalf("verdict %s, gaps check %s %s", r.Verdict, c.Status, c.Message)
	}
	if len(c.Details) != vpec.MaxReportDetails+1 || c.Details[vpec.MaxReportDetails] != fmt.Sprintf("… and %d more", n-vpec.MaxReportDetails) {
		t.Fatalf("%d detail lines, last %q", len(c.Details), c.Details[len(c.Details)-1])
	}
	if want := fmt.Sprintf("%d governance gap(s): sequence_missing ×%d", n, n); c.Message != want {
		t.Fatalf("message %q, want %q", c.Message, want)
	}
}
