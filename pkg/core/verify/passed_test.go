package verify_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestVerifyRequirePassed: clean is not passed. A VPEC whose records
// include a fail or an error is VALID and clean without RequirePassed and
// INVALID — NOT PASSED with it (ErrNotPassed, also ErrInvalid); skipped,
// degraded, override and not_applicable pass the gate; a gappy VPEC with
// a failed check under both options says NOT PASSED and matches both
// errors; the counts are in the report; an INVALID VPEC keeps its own
// verdict.
func TestVerifyRequirePassed(t *testing.T) {
	f := newFixture(t)
	with := func(results ...vpec.CheckResult) []vpec.Record {
		recs := records(len(results), vpec.Execution)
		for i, r := range results {
			recs[i].CheckResult = r
		}
		return recs
	}
	for _, tc := range []struct {
		name             string
		results          []vpec.CheckResult
		failed, errored  int
		verdict          string
		wantErr, notWant error
	}{
		{"all pass", []vpec.CheckResult{vpec.ResultPass, vpec.ResultPass}, 0, 0, "VALID", nil, nil},
		{"one fail", []vpec.CheckResult{vpec.ResultPass, vpec.ResultFail}, 1, 0, verify.VerdictNotPassed, verify.ErrNotPassed, verify.ErrNotClean},
		{"one error", []vpec.CheckResult{vpec.ResultError, vpec.ResultPass}, 0, 1, verify.VerdictNotPassed, verify.ErrNotPassed, verify.ErrNotClean},
		{"accepted results", []vpec.CheckResult{vpec.ResultSkipped, vpec.ResultDegraded, vpec.ResultOverride, vpec.ResultNotApplicable}, 0, 0, "VALID", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := f.issue(t, with(tc.results...), nil)
			r, err := verify.Verify(doc, verify.Options{Trust: f.trust})
			if err != nil || r.Verdict != "VALID" || !r.IsClean || r.ChecksFailed != tc.failed || r.ChecksErrored != tc.errored {
				t.Fatalf("without RequirePassed: %v, %q, clean %v, failed %d errored %d", err, r.Verdict, r.IsClean, r.ChecksFailed, r.ChecksErrored)
			}
			r, err = verify.Verify(doc, verify.Options{Trust: f.trust, RequirePassed: true, RequireClean: true})
			if r.Verdict != tc.verdict || r.Valid != (tc.wantErr == nil) || r.Passed() != (tc.wantErr == nil) {
				t.Fatalf("RequirePassed: verdict %q valid %v, want %q", r.Verdict, r.Valid, tc.verdict)
			}
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ve *verify.VerificationError
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, verify.ErrInvalid) || errors.Is(err, tc.notWant) || !errors.As(err, &ve) || ve.Check != nil {
				t.Fatalf("RequirePassed: err %v", err)
			}
		})
	}

	// Not clean and not passed: the verdict says NOT PASSED; the error
	// matches both.
	recs := with(vpec.ResultPass, vpec.ResultFail, vpec.ResultPass)
	gappy := f.issueRun(t, recs, func(r []vpec.Record) []vpec.Record { return append(r[:1:1], r[2:]...) }, nil)
	r, err := verify.Verify(gappy, verify.Options{Trust: f.trust, RequireClean: true})
	if r.Verdict != "INVALID — NOT CLEAN (--require-clean)" || !errors.Is(err, verify.ErrNotClean) || errors.Is(err, verify.ErrNotPassed) {
		t.Fatalf("gappy, RequireClean alone: %q %v", r.Verdict, err)
	}
	// The failed record was dropped: this one passes; make one that fails.
	recs = with(vpec.ResultFail, vpec.ResultPass, vpec.ResultPass)
	gappy = f.issueRun(t, recs, func(r []vpec.Record) []vpec.Record { return append(r[:1:1], r[2:]...) }, nil)
	r, err = verify.Verify(gappy, verify.Options{Trust: f.trust, RequireClean: true, RequirePassed: true})
	if r.Verdict != verify.VerdictNotPassed || !errors.Is(err, verify.ErrNotPassed) || !errors.Is(err, verify.ErrNotClean) || !errors.Is(err, verify.ErrInvalid) {
		t.Fatalf("gappy with a failed check, both options: %q %v", r.Verdict, err)
	}
	r, err = verify.Verify(gappy, verify.Options{Trust: f.trust, RequirePassed: true})
	if r.Verdict != verify.VerdictNotPassed || errors.Is(err, verify.ErrNotClean) {
		t.Fatalf("gappy with a failed check, RequirePassed alone: %q %v", r.Verdict, err)
	}

	// An INVALID VPEC keeps the verdict of what failed.
	doc := f.issue(t, with(vpec.ResultFail), nil)
	tampered := bytes.Replace(doc, []byte(`"check_0"`), []byte(`"check_X"`), 1)
	r, err = verify.Verify(tampered, verify.Options{Trust: f.trust, RequirePassed: true})
	if r.Verdict != "INVALID — SIGNATURE INVALID" || errors.Is(err, verify.ErrNotPassed) {
		t.Fatalf("tampered: %q %v", r.Verdict, err)
	}
}
