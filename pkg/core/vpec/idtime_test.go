package vpec_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// recID is a record_id of n bytes in all.
func recID(n int) string { return "rec_" + strings.Repeat("a", n-4) }

// TestPrefixedIDLengths: record_id (and run_id, vpec_id) is a prefixed id,
// 128 bytes at most in all, prefix included, its part after the prefix
// starting with a letter or digit (docs/FORMATS.md): one rule for the
// server (which calls Record.Validate) and the verifier. Found: FORMATS.md
// said rec_ + up to 128 bytes (132 in all), the server and verifier capped
// the whole id at 128, the second implementation allowed 132.
func TestPrefixedIDLengths(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{recID(128), true}, {recID(129), false}, {recID(131), false}, {recID(132), false}, {recID(133), false},
		{"rec_1", true}, {"rec_", false}, {"rec_-x", false}, {"rec_.x", false}, {"rec-1", false}, {"Rec_1", false},
	} {
		rec := records(1, vpec.Execution)[0]
		rec.RecordID = tc.id
		rec.ChainHash = vpec.FormatHash(vpec.Genesis("run_x"))
		if err := rec.Validate(); (err == nil) != tc.ok {
			t.Errorf("record_id of %d bytes (%.12s...): Validate() = %v, want ok=%v", len(tc.id), tc.id, err, tc.ok)
		}
		if got := vpec.ValidPrefixedID(tc.id, "rec_"); got != tc.ok {
			t.Errorf("ValidPrefixedID(%d bytes, rec_) = %v, want %v", len(tc.id), got, tc.ok)
		}
	}
	for _, tc := range []struct {
		id, prefix string
		ok         bool
	}{
		{"vpec_" + strings.Repeat("9", 123), "vpec_", true}, {"vpec_" + strings.Repeat("9", 124), "vpec_", false},
		{"run_" + strings.Repeat("b", 124), "run_", true}, {"run_" + strings.Repeat("b", 125), "run_", false}, {"run_", "run_", false},
	} {
		if got := vpec.ValidPrefixedID(tc.id, tc.prefix); got != tc.ok {
			t.Errorf("ValidPrefixedID(%d bytes, %s) = %v, want %v", len(tc.id), tc.prefix, got, tc.ok)
		}
	}
	f, clk := clockFixture(t)
	for _, n := range []int{128, 129, 132} {
		recs := records(1, vpec.Execution)
		recs[0].RecordID, recs[0].RecordedAt = recID(n), vpec.FormatTime(clk.now())
		r := verify(t, f.sealAt(t, clk, recs, nil), vpec.Options{Trust: f.trust})
		if want := n <= 128; r.Valid != want || (!want && r.Check(vpec.CheckSchema).Status != vpec.Fail) {
			t.Errorf("a signed VPEC with a %d-byte record_id: %s, want valid=%v (schema failure otherwise)", n, r.Verdict, want)
		}
	}
}

// sealOpened is fixture.sealAt with the VPEC's opened_at set to opened.
func (f *fixture) sealOpened(t *testing.T, clk *testClock, recs []vpec.Record, opened string) []byte {
	t.Helper()
	v := &vpec.VPEC{VPECID: vpec.NewID("vpec_"), RunID: "run_rules", WorkflowID: "wf", OrgID: "org_1", OpenedAt: opened,
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", Records: recs, IssuedAt: vpec.FormatTime(clk.now())}
	if _, err := vpec.Chain(vpec.Genesis(v.RunID), v.Records); err != nil {
		t.Fatal(err)
	}
	jcs, err := vpec.RecordsJCS(v.Records)
	if err != nil {
		t.Fatal(err)
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

// TestOpenedAtBound: a VPEC carrying opened_at (the run's open time) fails
// the time check (TIME VIOLATION) for a record dated more than
// MaxClockSkew before it, or an opened_at after its timestamp (+ skew);
// opened_at must be an RFC 3339 UTC time (schema). Found: recorded_at had
// no lower bound: a record of 0001-01-01 verified VALID.
func TestOpenedAtBound(t *testing.T) {
	f, clk := clockFixture(t)
	at := func(d time.Duration) string { return vpec.FormatTime(clk.now().Add(d)) }
	for _, tc := range []struct {
		name, opened, recorded string
		valid                  bool
		check                  vpec.CheckName
	}{
		{"no opened_at (an older VPEC)", "", "0001-01-01T00:00:00.000Z", true, "time"},
		{"record after the open", at(-time.Hour), at(-30 * time.Minute), true, "time"},
		{"record 4 min before the open", at(-time.Hour), at(-time.Hour - 4*time.Minute), true, "time"},
		{"record 6 min before the open", at(-time.Hour), at(-time.Hour - 6*time.Minute), false, vpec.CheckTime},
		{"record of year 1", at(-time.Hour), "0001-01-01T00:00:00.000Z", false, vpec.CheckTime},
		{"opened after the timestamp", at(time.Hour), at(0), false, vpec.CheckTime},
		{"opened_at not a time", "yesterday", at(0), false, vpec.CheckSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := records(2, vpec.Execution)
			recs[0].RecordedAt, recs[1].RecordedAt = tc.recorded, at(-time.Minute)
			r := verify(t, f.sealOpened(t, clk, recs, tc.opened), vpec.Options{Trust: f.trust})
			if r.Valid != tc.valid {
				t.Fatalf("verdict %s, want valid=%v", r.Verdict, tc.valid)
			}
			if !tc.valid {
				if c := r.Check(tc.check); c.Status != vpec.Fail {
					t.Errorf("check %s: %s %s, want a failure", tc.check, c.Status, c.Message)
				}
			}
		})
	}
}
