package testvectors

import (
	"time"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// newClasses writes the invalid vectors of issue 21's failure classes,
// each sealed by the genuine key so that only its one rule is broken.
func (g *gen) newClasses() error {
	// A review's minimum duration at the documented maximum (2^40) and at
	// the first whole number of seconds whose nanoseconds overflow int64:
	// both once verified VALID for a 30 s review.
	for _, c := range []struct {
		name, runID, desc string
		min               int64
	}{
		{"review-min-duration-max", "run_00000000-0000-4000-8000-00000000500f", "review lasted about 30 s, min_duration_seconds 2^40 (1099511627776, the documented maximum)", 1 << 40},
		{"review-min-duration-int64-edge", "run_00000000-0000-4000-8000-000000005010", "review lasted about 30 s, min_duration_seconds 9223372037 (the first whole number of seconds whose nanoseconds overflow int64)", 9223372037},
	} {
		v, err := g.witnessed(c.runID, 30*time.Second, c.min)
		if err != nil {
			return err
		}
		if err := g.badVPEC(c.name, c.desc, []string{"reviews"}, "INVALID — REVIEW INVALID", v); err != nil {
			return err
		}
	}

	// Claims and their evidence: an unproved mathematical condition
	// belongs to an operator_bound inference of its own check and input.
	for _, c := range []struct {
		name, runID, desc string
		edit              func(r *vpec.Record)
	}{
		{"mathematical-other-check", "run_00000000-0000-4000-8000-0000000000b4", "an unproved mathematical post-condition named toxicity:threshold_check beside the operator_bound inference of check pii_detector (no inference of its own check)",
			func(r *vpec.Record) { r.Check = "toxicity:threshold_check" }},
		{"mathematical-other-input", "run_00000000-0000-4000-8000-0000000000b5", "an unproved mathematical post-condition of check pii_detector on another input than the operator_bound inference's (its commitment_hash differs)",
			func(r *vpec.Record) { r.CommitmentHash = commitment.String([]byte("another input")) }},
	} {
		recs, err := g.boundedRecords("cpu", testBounded)
		if err != nil {
			return err
		}
		c.edit(&recs[4])
		v, err := g.newVPEC(c.runID, recs, nil)
		if err != nil {
			return err
		}
		if err := g.badVPEC(c.name, c.desc, []string{"evidence"}, "INVALID — CLAIM WITHOUT EVIDENCE", v, ProfileFile); err != nil {
			return err
		}
	}

	// A record dated 100 ns after the VPEC's timestamp plus 5 minutes:
	// compared in doubles (0.24 µs apart at today's dates) it passed.
	recs := g.cleanRecords()
	genTime := g.clk.now().Add(time.Second).Truncate(time.Second) // newVPEC seals one second on
	recs[3].RecordedAt = genTime.Add(verify.MaxClockSkew + 100*time.Nanosecond).UTC().Format("2006-01-02T15:04:05.000000000Z")
	v, err := g.newVPEC("run_00000000-0000-4000-8000-00000000e5e5", recs, nil)
	if err != nil {
		return err
	}
	return g.badVPEC("record-just-after-timestamp", "a record's recorded_at is 5 minutes and 100 ns after the VPEC's timestamp (times compare to the nanosecond)", []string{"time"}, "INVALID — TIME VIOLATION", v)
}
