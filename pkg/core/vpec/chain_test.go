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

// TestVerifyChainInputs: a chain input in two windows (Head then Tail) is
// hashed as the two joined, wherever the cut falls; Bytes joins them.
func TestVerifyChainInputs(t *testing.T) {
	run := "run_x"
	recs := records(3, vpec.Execution)
	issue.Chain(vpec.Genesis(run), recs)
	jcs, _ := issue.RecordsJCS(recs)
	for cut := 0; cut <= len(jcs[1]); cut++ {
		in := make([]vpec.ChainInput, len(jcs))
		for i, b := range jcs {
			in[i].Head = b
		}
		in[1] = vpec.ChainInput{Head: jcs[1][:cut:cut], Tail: jcs[1][cut:]}
		if got := in[1].Bytes(); string(got) != string(jcs[1]) {
			t.Fatalf("cut at %d: Bytes = %q", cut, got)
		}
		if b := vpec.VerifyChainInputs(run, recs, in); len(b) != 0 {
			t.Fatalf("cut at %d: intact chain reports %v", cut, b)
		}
		if len(in[1].Tail) > 0 {
			in[1].Tail = in[1].Tail[1:] // a byte short
		} else {
			in[1].Head = in[1].Head[1:]
		}
		if b := vpec.VerifyChainInputs(run, recs, in); len(b) != 1 || b[0].Sequence != 2 {
			t.Fatalf("cut at %d, a byte short: %+v", cut, b)
		}
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

// verifyChainSequential is VerifyChain one record after another, each
// link hashed from the previous record's stated hash as it goes: the
// definition the chunked VerifyChain must match.
func verifyChainSequential(runID string, records []vpec.Record, jcs [][]byte) []vpec.ChainBreak {
	var breaks []vpec.ChainBreak
	prev := vpec.Genesis(runID)
	var prevSeq int64
	for i := range records {
		r := &records[i]
		got, err := commitment.ParseSHA256(r.ChainHash)
		if err != nil {
			breaks = append(breaks, vpec.ChainBreak{Sequence: r.Sequence, Reason: fmt.Sprintf("chain_hash: %v", err)})
			prev, prevSeq = [32]byte{}, r.Sequence
			continue
		}
		if want := prevSeq + 1; r.Sequence != want {
			b := vpec.ChainBreak{Sequence: r.Sequence}
			if r.Sequence > want {
				b.MissingFrom, b.MissingTo = want, r.Sequence-1
			}
			breaks = append(breaks, b)
			prev, prevSeq = got, r.Sequence
			continue
		}
		if want := vpec.NextChainHash(prev, jcs[i]); want != got {
			breaks = append(breaks, vpec.ChainBreak{Sequence: r.Sequence})
		}
		prev, prevSeq = got, r.Sequence
	}
	return breaks
}

// TestVerifyChainLong: a chain long enough to be hashed on several
// goroutines reports the breaks a one-record-at-a-time walk reports, at
// the first record, at chunk edges and at the last: a malformed hash, a
// poseidon2 hash, a skipped and a repeated sequence, a changed record.
func TestVerifyChainLong(t *testing.T) {
	const run, n = "run_long", 700
	base := records(n, vpec.Execution)
	issue.Chain(vpec.Genesis(run), base)
	for name, edit := range map[string]func(r []vpec.Record){
		"intact":          func([]vpec.Record) {},
		"first malformed": func(r []vpec.Record) { r[0].ChainHash = "sha256:zz" },
		"poseidon2 at 175": func(r []vpec.Record) {
			r[175].ChainHash = "poseidon2:" + strings.Repeat("0", 64)
		},
		"skip at 350":           func(r []vpec.Record) { r[350].Sequence += 3 },
		"repeat at 351":         func(r []vpec.Record) { r[351].Sequence = r[350].Sequence },
		"changed 174, 175, 699": func(r []vpec.Record) { r[174].Check, r[175].Check, r[699].Check = "x", "y", "z" },
		"every tenth malformed": func(r []vpec.Record) {
			for i := 0; i < len(r); i += 10 {
				r[i].ChainHash = "sha256:"
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			recs := append([]vpec.Record(nil), base...)
			edit(recs)
			jcs, err := issue.RecordsJCS(recs)
			if err != nil {
				t.Fatal(err)
			}
			got, want := vpec.VerifyChain(run, recs, jcs), verifyChainSequential(run, recs, jcs)
			if len(got) != len(want) {
				t.Fatalf("%d breaks, one at a time %d: %v", len(got), len(want), got)
			}
			for i := range got {
				if got[i].Sequence != want[i].Sequence || got[i].MissingFrom != want[i].MissingFrom || got[i].MissingTo != want[i].MissingTo {
					t.Fatalf("break %d: %+v, one at a time %+v", i, got[i], want[i])
				}
			}
			if name != "intact" && len(got) == 0 {
				t.Fatal("no break found")
			}
		})
	}
}
