package verify_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// issueRun seals records (chained first) with the gaps issue.Gaps declares
// for them after drop removes some, plus extra gaps.
func (f *fixture) issueRun(t testing.TB, recs []vpec.Record, drop func([]vpec.Record) []vpec.Record, edit func([]vpec.Gap) []vpec.Gap) []byte {
	t.Helper()
	v := &vpec.VPEC{VPECID: names.NewID("vpec_"), RunID: names.NewID("run_"), WorkflowID: "wf", OrgID: "org_1",
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", IssuedAt: vpec.FormatTime(timeNow())}
	if _, err := issue.Chain(vpec.Genesis(v.RunID), recs); err != nil {
		t.Fatal(err)
	}
	if drop != nil {
		recs = drop(recs)
	}
	v.Records = recs
	jcs, err := issue.RecordsJCS(v.Records)
	if err != nil {
		t.Fatal(err)
	}
	v.Gaps = issue.Gaps(v.RunID, v.Records, jcs, v.IssuedAt)
	if edit != nil {
		v.Gaps = edit(v.Gaps)
	}
	issue.Finish(v, jcs)
	if err := issue.Seal(context.Background(), v, f.signer, f.tsa); err != nil {
		t.Fatal(err)
	}
	doc, err := document.MarshalIndent(v)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func failed(r *verify.Report) []verify.CheckName {
	var out []verify.CheckName
	for _, c := range r.Checks {
		if c.Status == verify.Fail {
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
		fail  verify.CheckName
	}{
		{"declared", nil, true, ""},
		{"range too short", setEnd(-1), false, verify.CheckChain},
		{"range too long", setEnd(+1), false, verify.CheckChain},
		{"chain_break instead", func(g []vpec.Gap) []vpec.Gap {
			s := int64(1503)
			return []vpec.Gap{{GapID: "gap_1", GapType: gap.ChainBreak, Severity: gap.Critical, Sequence: &s, Timestamp: g[0].Timestamp}}
		}, false, verify.CheckChain},
		{"extra range", func(g []vpec.Gap) []vpec.Gap {
			s := int64(1504)
			return append(g, vpec.Gap{GapID: "gap_2", GapType: gap.SequenceMissing, Severity: gap.High, Sequence: &s, SequenceEnd: &s, Timestamp: g[0].Timestamp})
		}, false, verify.CheckGaps},
		{"range declared twice", func(g []vpec.Gap) []vpec.Gap {
			d := g[0]
			d.GapID = "gap_2"
			return append(g, d)
		}, false, verify.CheckGaps},
		{"sequence_end on chain_break", func(g []vpec.Gap) []vpec.Gap {
			g = append(g, vpec.Gap{GapID: "gap_2", GapType: gap.ChainBreak, Severity: gap.Critical, Sequence: g[0].Sequence, SequenceEnd: g[0].Sequence, Timestamp: g[0].Timestamp})
			return g
		}, false, verify.CheckSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := f.issueRun(t, records(1504, vpec.Execution), bigHole, tc.edit)
			r := verifyDoc(t, doc, verify.Options{Trust: f.trust})
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
	r := verifyDoc(t, f.issueRun(t, nil, nil, nil), verify.Options{Trust: f.trust})
	if !r.Valid || r.IsClean || r.Check(verify.CheckGaps).Status != verify.Warn {
		t.Fatalf("empty run with its gap: valid=%v clean=%v verdict %s", r.Valid, r.IsClean, r.Verdict)
	}
	r = verifyDoc(t, f.issue(t, nil, nil), verify.Options{Trust: f.trust})
	if r.Valid || r.Check(verify.CheckGaps).Status != verify.Fail || r.Verdict != "INVALID — GAP MISMATCH" {
		t.Fatalf("empty run without its gap: verdict %s", r.Verdict)
	}
	two := func(g []vpec.Gap) []vpec.Gap { return append(g, g[0]) }
	r = verifyDoc(t, f.issueRun(t, nil, nil, two), verify.Options{Trust: f.trust})
	if r.Valid {
		t.Fatalf("two empty_run gaps: verdict %s", r.Verdict)
	}
	r = verifyDoc(t, f.issueRun(t, records(2, vpec.Execution), nil, func(g []vpec.Gap) []vpec.Gap {
		return append(g, vpec.Gap{GapID: "gap_e", GapType: gap.EmptyRun, Severity: gap.High, Timestamp: vpec.FormatTime(timeNow())})
	}), verify.Options{Trust: f.trust})
	if r.Valid {
		t.Fatalf("empty_run gap on a run with records: verdict %s", r.Verdict)
	}
}

// FuzzIssueGaps: whatever records a run keeps (any holes, however long,
// or none at all), the VPEC sealed with issue.Gaps' gaps verifies VALID,
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
		r := verifyDoc(t, doc, verify.Options{Trust: fx.trust})
		if !r.Valid {
			for _, c := range r.Checks {
				t.Logf("%s %s %s %v", c.Status, c.Name, c.Message, c.Details)
			}
			t.Fatalf("issue.Gaps' VPEC: %s", r.Verdict)
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
	const n = 2*verify.MaxReportDetails + 50
	everyOther := func(recs []vpec.Record) []vpec.Record {
		var kept []vpec.Record
		for i := range recs {
			if i%2 == 0 {
				kept = append(kept, recs[i])
			}
		}
		return kept
	}
	r := verifyDoc(t, f.issueRun(t, records(2*n+1, vpec.Execution), everyOther, nil), verify.Options{Trust: f.trust})
	c := r.Check(verify.CheckGaps)
	if !r.Valid || c.Status != verify.Warn {
		t.Fatalf("verdict %s, gaps check %s %s", r.Verdict, c.Status, c.Message)
	}
	if len(c.Details) != verify.MaxReportDetails+1 || c.Details[verify.MaxReportDetails] != fmt.Sprintf("… and %d more", n-verify.MaxReportDetails) {
		t.Fatalf("%d detail lines, last %q", len(c.Details), c.Details[len(c.Details)-1])
	}
	if want := fmt.Sprintf("%d governance gap(s): sequence_missing ×%d", n, n); c.Message != want {
		t.Fatalf("message %q, want %q", c.Message, want)
	}
}
