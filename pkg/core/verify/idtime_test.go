package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// recID is a record_id of n bytes in all.
func recID(n int) string { return "rec_" + strings.Repeat("a", n-4) }

// sealOpened is fixture.sealAt with the VPEC's opened_at set to opened.
func (f *fixture) sealOpened(t *testing.T, clk *testClock, recs []vpec.Record, opened string) []byte {
	t.Helper()
	v := &vpec.VPEC{VPECID: names.NewID("vpec_"), RunID: "run_rules", WorkflowID: "wf", OrgID: "org_1", OpenedAt: opened,
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", Records: recs, IssuedAt: vpec.FormatTime(clk.now())}
	if _, err := issue.Chain(vpec.Genesis(v.RunID), v.Records); err != nil {
		t.Fatal(err)
	}
	jcs, err := issue.RecordsJCS(v.Records)
	if err != nil {
		t.Fatal(err)
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

// TestPrefixedIDLengths: the verifier applies the one prefixed-id rule
// (names.ValidPrefixedID, 128 bytes at most in all, prefix included) to
// a signed VPEC's record_id: 128 bytes verify, 129 and 132 fail the schema
// check. Found: FORMATS.md said rec_ + up to 128 bytes (132 in all), the
// server and verifier capped the whole id at 128, the second
// implementation allowed 132.
func TestPrefixedIDLengths(t *testing.T) {
	f, clk := clockFixture(t)
	for _, n := range []int{128, 129, 132} {
		recs := records(1, vpec.Execution)
		recs[0].RecordID, recs[0].RecordedAt = recID(n), vpec.FormatTime(clk.now())
		r := verifyDoc(t, f.sealAt(t, clk, recs, nil), verify.Options{Trust: f.trust})
		if want := n <= 128; r.Valid != want || (!want && r.Check(verify.CheckSchema).Status != verify.Fail) {
			t.Errorf("a signed VPEC with a %d-byte record_id: %s, want valid=%v (schema failure otherwise)", n, r.Verdict, want)
		}
	}
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
		check                  verify.CheckName
	}{
		{"no opened_at (an older VPEC)", "", "0001-01-01T00:00:00.000Z", true, "time"},
		{"record after the open", at(-time.Hour), at(-30 * time.Minute), true, "time"},
		{"record 4 min before the open", at(-time.Hour), at(-time.Hour - 4*time.Minute), true, "time"},
		{"record 6 min before the open", at(-time.Hour), at(-time.Hour - 6*time.Minute), false, verify.CheckTime},
		{"record of year 1", at(-time.Hour), "0001-01-01T00:00:00.000Z", false, verify.CheckTime},
		{"opened after the timestamp", at(time.Hour), at(0), false, verify.CheckTime},
		{"opened_at not a time", "yesterday", at(0), false, verify.CheckSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := records(2, vpec.Execution)
			recs[0].RecordedAt, recs[1].RecordedAt = tc.recorded, at(-time.Minute)
			r := verifyDoc(t, f.sealOpened(t, clk, recs, tc.opened), verify.Options{Trust: f.trust})
			if r.Valid != tc.valid {
				t.Fatalf("verdict %s, want valid=%v", r.Verdict, tc.valid)
			}
			if !tc.valid {
				if c := r.Check(tc.check); c.Status != verify.Fail {
					t.Errorf("check %s: %s %s, want a failure", tc.check, c.Status, c.Message)
				}
			}
		})
	}
}
