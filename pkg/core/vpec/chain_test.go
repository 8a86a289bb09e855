package vpec_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
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
			Details: map[string]any{"model": "pii-v3", "score": 0.25 + float64(i%4)/10},
		}
	}
	return out
}

func TestVerifyChainBreaks(t *testing.T) {
	run := "run_x"
	recs := records(5, vpec.Execution)
	issue.Chain(vpec.Genesis(run), recs)
	jcs, _ := issue.RecordsJCS(recs)
	if b := vpec.VerifyChain(run, recs, jcs); len(b) != 0 {
		t.Fatalf("intact chain reports %v", b)
	}
	if b := vpec.VerifyChain("run_y", recs, jcs); len(b) == 0 || b[0].Sequence != 1 {
		t.Fatalf("another run's genesis: %v", b)
	}
	skipped := append(append([]vpec.Record{}, recs[:2]...), recs[4])
	sj := append(append([][]byte{}, jcs[:2]...), jcs[4])
	b := vpec.VerifyChain(run, skipped, sj)
	if len(b) != 1 || b[0].Sequence != 5 || b[0].MissingFrom != 3 || b[0].MissingTo != 4 {
		t.Fatalf("skip: %+v", b)
	}
	changed := append([]vpec.Record{}, recs...)
	changed[1].Check = "other"
	cj, _ := issue.RecordsJCS(changed)
	if b := vpec.VerifyChain(run, changed, cj); len(b) != 1 || b[0].Sequence != 2 {
		t.Fatalf("changed record: %+v", b)
	}
}

// TestRecordIDLengths: Record.Validate applies the prefixed-id rule
// (names.ValidPrefixedID) to record_id: 128 bytes in all, prefix
// included; what the server refuses with 400, field record_id.
func TestRecordIDLengths(t *testing.T) {
	recID := func(n int) string { return "rec_" + strings.Repeat("a", n-4) }
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{recID(128), true}, {recID(129), false}, {recID(131), false}, {recID(132), false}, {recID(133), false},
		{"rec_1", true}, {"rec_", false}, {"rec_-x", false}, {"rec_.x", false}, {"rec-1", false}, {"Rec_1", false},
	} {
		rec := records(1, vpec.Execution)[0]
		rec.RecordID = tc.id
		rec.ChainHash = commitment.OfSHA256(vpec.Genesis("run_x")).String()
		if err := rec.Validate(); (err == nil) != tc.ok {
			t.Errorf("record_id of %d bytes (%.12s...): Validate() = %v, want ok=%v", len(tc.id), tc.id, err, tc.ok)
		}
	}
}
