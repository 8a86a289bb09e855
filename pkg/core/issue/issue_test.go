package issue_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// records returns n records of one proof level, sequences 1 to n, without
// chain hashes (issue.Chain sets them).
func records(n int, level vpec.ProofLevel) []vpec.Record {
	out := make([]vpec.Record, n)
	for i := range out {
		out[i] = vpec.Record{
			RecordID: names.NewID("rec_"), Sequence: int64(i + 1), Check: fmt.Sprintf("check_%d", i%7),
			ManifestID: "sha256:" + fmt.Sprintf("%064x", i%3), CheckResult: vpec.ResultPass, ProofLevel: level,
			CommitmentAlgorithm: "sha256", CommitmentHash: commitment.String([]byte(fmt.Sprint(i))),
			Visibility: vpec.Opaque, RecordedAt: "2026-11-22T00:00:00.000Z",
		}
	}
	return out
}

func TestIssueGapsChain(t *testing.T) {
	recs := records(5, vpec.Execution)
	if _, err := issue.Chain(vpec.Genesis("run_x"), recs); err != nil {
		t.Fatal(err)
	}
	jcs, err := issue.RecordsJCS(recs)
	if err != nil {
		t.Fatal(err)
	}
	if g := issue.Gaps("run_x", recs, jcs, "2026-11-22T00:00:00.000Z"); len(g) != 0 {
		t.Fatalf("intact chain: gaps %+v", g)
	}
	// drop records 2 and 3: one hole.
	holed := append([]vpec.Record{recs[0]}, recs[3:]...)
	hj := append([][]byte{jcs[0]}, jcs[3:]...)
	g := issue.Gaps("run_x", holed, hj, "2026-11-22T00:00:00.000Z")
	if len(g) == 0 || g[0].GapType != gap.SequenceMissing || *g[0].Sequence != 2 {
		t.Fatalf("hole: gaps %+v", g)
	}
}

func TestIssueGapsRanges(t *testing.T) {
	recs := records(3, vpec.Execution)
	recs[1].Sequence = 5000 // 2-4999 missing
	recs[2].Sequence = 5002 // 5001 missing
	if _, err := issue.Chain(vpec.Genesis("run_x"), recs); err != nil {
		t.Fatal(err)
	}
	jcs, _ := issue.RecordsJCS(recs)
	g := issue.Gaps("run_x", recs, jcs, "2026-11-22T00:00:00.000Z")
	if len(g) != 2 {
		t.Fatalf("want 2 range gaps, got %d: %+v", len(g), g)
	}
	for i, want := range [][2]int64{{2, 4999}, {5001, 5001}} {
		if g[i].GapType != gap.SequenceMissing || *g[i].Sequence != want[0] || g[i].SequenceEnd == nil || *g[i].SequenceEnd != want[1] {
			t.Errorf("gap %d: %+v, want range %v", i, g[i], want)
		}
	}
	// a tampered record: one chain_break gap, no sequence_end.
	recs2 := records(3, vpec.Execution)
	issue.Chain(vpec.Genesis("run_x"), recs2)
	recs2[1].Check = "changed"
	jcs2, _ := issue.RecordsJCS(recs2)
	g = issue.Gaps("run_x", recs2, jcs2, "2026-11-22T00:00:00.000Z")
	if len(g) != 1 || g[0].GapType != gap.ChainBreak || *g[0].Sequence != 2 || g[0].SequenceEnd != nil {
		t.Fatalf("chain break: %+v", g)
	}
}

func TestIssueGapsEmptyRun(t *testing.T) {
	g := issue.Gaps("run_x", nil, nil, "2026-11-22T00:00:00.000Z")
	if len(g) != 1 || g[0].GapType != gap.EmptyRun || g[0].Severity != gap.High || g[0].Check != nil || g[0].Sequence != nil || g[0].SequenceEnd != nil {
		t.Fatalf("empty run: %+v", g)
	}
}

func TestSummarize(t *testing.T) {
	rec := func(l vpec.ProofLevel, res vpec.CheckResult) vpec.Record {
		return vpec.Record{ProofLevel: l, CheckResult: res}
	}
	cases := []struct {
		name    string
		records []vpec.Record
		gaps    int
		floor   vpec.ProofLevel
		surface float64
		passed  int64
		failed  int64
		clean   bool
	}{
		{"empty", nil, 0, vpec.Attestation, 0, 0, 0, true},
		{"all math", []vpec.Record{rec(vpec.Mathematical, vpec.ResultPass)}, 0, vpec.Mathematical, 1, 1, 0, true},
		{"bounded decomposition", []vpec.Record{
			rec(vpec.Mathematical, vpec.ResultPass), rec(vpec.Mathematical, vpec.ResultPass), rec(vpec.Mathematical, vpec.ResultPass),
			rec(vpec.OperatorBound, vpec.ResultPass), rec(vpec.Mathematical, vpec.ResultPass), rec(vpec.Mathematical, vpec.ResultFail),
		}, 0, vpec.OperatorBound, 1, 5, 1, true},
		{"witnessed is weaker than execution", []vpec.Record{rec(vpec.Execution, vpec.ResultPass), rec(vpec.Witnessed, vpec.ResultSkipped)}, 0, vpec.Witnessed, 0, 1, 0, true},
		{"thirds", []vpec.Record{rec(vpec.Mathematical, vpec.ResultPass), rec(vpec.Execution, vpec.ResultError), rec(vpec.Attestation, vpec.ResultOverride)}, 1, vpec.Attestation, 0.3333, 1, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gaps := make([]vpec.Gap, c.gaps)
			s := issue.Summarize(c.records, gaps, true)
			if s.ProofLevelFloor != c.floor || s.ProvableSurface != c.surface || s.ChecksPassed != c.passed || s.ChecksFailed != c.failed || s.IsClean != c.clean {
				t.Fatalf("got %+v", s)
			}
		})
	}
	s := issue.Summarize(cases[2].records, nil, true)
	if s.ProvableSurfaceBreakdown["mathematical"] != 0.8333 || s.ProvableSurfaceBreakdown["bounded_inference"] != 0.1667 {
		t.Errorf("breakdown %v", s.ProvableSurfaceBreakdown)
	}
	if want := map[string]int64{"mathematical": 5, "operator_bound": 1}; !reflect.DeepEqual(s.ProofLevelBreakdown, want) {
		t.Errorf("proof level breakdown %v, want %v", s.ProofLevelBreakdown, want)
	}
	// Every level, and one no list holds (the schema check refuses it,
	// but the summary still counts it by name), in any order.
	var all []vpec.Record
	want := map[string]int64{}
	for i, l := range append(vpec.ProofLevels(), "not_a_level") {
		for range i + 1 {
			all = append(all, rec(l, vpec.ResultPass))
		}
		want[string(l)] = int64(i + 1)
	}
	slices.Reverse(all)
	s = issue.Summarize(all, nil, true)
	if !reflect.DeepEqual(s.ProofLevelBreakdown, want) {
		t.Errorf("every level: breakdown %v, want %v", s.ProofLevelBreakdown, want)
	}
	if _, ok := s.ProvableSurfaceBreakdown["not_a_level"]; !ok || len(s.ProvableSurfaceBreakdown) != len(want) {
		t.Errorf("every level: surface breakdown %v", s.ProvableSurfaceBreakdown)
	}
}

func TestShare(t *testing.T) {
	for _, c := range []struct {
		n, d int64
		want float64
	}{{0, 0, 0}, {1, 3, 0.3333}, {2, 3, 0.6667}, {1, 8, 0.125}, {1, 20000, 0.0001}, {1, 20001, 0}, {5, 5, 1}} {
		if got := issue.Share(c.n, c.d); got != c.want {
			t.Errorf("Share(%d,%d) = %v, want %v", c.n, c.d, got, c.want)
		}
	}
}

// TestSealCancelled: Seal passes its context to the timestamper; a caller
// that has gone away gets ctx's error (errors.Is) and a VPEC with neither
// signature nor token, never a half-sealed one.
func TestSealCancelled(t *testing.T) {
	_, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := signing.NewSigner(priv)
	tsa, err := timestamp.InitAuthority(t.TempDir()+"/tsa", timestamp.AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := &vpec.VPEC{VPECID: names.NewID("vpec_"), RunID: names.NewID("run_"), WorkflowID: "wf", OrgID: "org_1",
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", IssuedAt: vpec.FormatTime(time.Now())}
	issue.Finish(v, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = issue.Seal(ctx, v, signer, tsa)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Seal with a cancelled context: %v, want context.Canceled", err)
	}
	if v.Signature != "" || v.TimestampRFC3161 != "" {
		t.Errorf("cancelled Seal left signature %q, token %d bytes", v.Signature, len(v.TimestampRFC3161))
	}
	if err := issue.Seal(context.Background(), v, signer, tsa); err != nil || v.Signature == "" || v.TimestampRFC3161 == "" {
		t.Fatalf("Seal after the cancelled one: %v", err)
	}
}

// TestGapsChainVerdict: the verdict GapsChain returns is the one Finish
// computes from the same records (intact, a hole, a tampered record, no
// records), and FinishIntact with it states the same VPEC as Finish.
func TestGapsChainVerdict(t *testing.T) {
	const stamp = "2026-11-22T00:00:00.000Z"
	intact := records(4, vpec.Execution)
	issue.Chain(vpec.Genesis("run_x"), intact)
	holed := append([]vpec.Record{intact[0]}, intact[2:]...)
	tampered := records(4, vpec.Execution)
	issue.Chain(vpec.Genesis("run_x"), tampered)
	tampered[2].Check = "changed"
	for _, tc := range []struct {
		name string
		recs []vpec.Record
		want bool
	}{
		{"intact", intact, true}, {"hole", holed, false}, {"tampered", tampered, false}, {"empty", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jcs, err := issue.RecordsJCS(tc.recs)
			if err != nil {
				t.Fatal(err)
			}
			gaps, ok := issue.GapsChain("run_x", tc.recs, jcs, stamp)
			if ok != tc.want {
				t.Fatalf("GapsChain intact = %v, want %v", ok, tc.want)
			}
			a := &vpec.VPEC{RunID: "run_x", Records: tc.recs, Gaps: gaps}
			b := &vpec.VPEC{RunID: "run_x", Records: tc.recs, Gaps: gaps}
			issue.Finish(a, jcs)
			issue.FinishIntact(b, ok)
			if a.ChainIntact != b.ChainIntact || a.MerkleRoot != b.MerkleRoot || fmt.Sprintf("%+v", *a) != fmt.Sprintf("%+v", *b) {
				t.Fatalf("Finish and FinishIntact differ: %+v / %+v", a, b)
			}
		})
	}
}
