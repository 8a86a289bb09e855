package vpec

import (
	"fmt"
	"strings"
	"time"
)

// checkEvidence checks that every claimed proof level has its evidence
// (decision D6; docs/FORMATS.md, "Claims and their evidence"):
//   - mathematical: a zk_proof of a condition circuit (the zk_proofs check
//     verifies it), or else a pre_conditions or post_conditions record of
//     a bound_committed_inference stage that belongs to the decomposition
//     of an operator_bound inference record of this VPEC: the inference
//     record's check is this record's check without its last ":" and
//     what follows (docs/BOUNDED.md names the parts <check>:<part>), its
//     stage_part is inference, its stage_type bound_committed_inference,
//     and it commits to the same input (the same commitment_hash). Any
//     operator_bound record of another check or input is not evidence;
//   - operator_bound: a bounded_inference block, and witnessed: a review
//     block (the schema requires each block with its level and only with
//     it; the profile and reviews checks verify them);
//   - verifiable_inference: a zk_proof (the zk_proofs check).
func checkEvidence(p parsed) Check {
	c := Check{Name: CheckEvidence}
	type inference struct{ check, commitment string }
	anchors := map[inference]bool{}
	for i := range p.v.Records {
		r := &p.v.Records[i]
		if r.ProofLevel == OperatorBound && r.BoundedInference != nil && r.StageType == StageBoundCommittedInference && r.StagePart == StagePartInference {
			anchors[inference{r.Check, r.CommitmentHash}] = true
		}
	}
	math := 0
	for i := range p.v.Records {
		r := &p.v.Records[i]
		switch r.ProofLevel {
		case Mathematical:
			math++
			if r.ZKProof != nil {
				// Its own evidence: the zk_proofs check verifies it.
				break
			}
			base, part := r.Check, ""
			if i := strings.LastIndexByte(r.Check, ':'); i >= 0 {
				base, part = r.Check[:i], r.Check[i+1:]
			}
			switch {
			case r.StageType != StageBoundCommittedInference || (r.StagePart != StagePartPre && r.StagePart != StagePartPost):
				c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but is not a pre_conditions or post_conditions record of a %s stage", r.Sequence, r.Check, StageBoundCommittedInference))
			case part == "":
				c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but its check does not name a decomposition's part (<check>:<part>)", r.Sequence, r.Check))
			case !anchors[inference{base, r.CommitmentHash}]:
				c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but the VPEC holds no operator_bound %s inference record of check %q on the same input (commitment_hash %s)", r.Sequence, r.Check, StageBoundCommittedInference, base, shortHash(r.CommitmentHash)))
			}
		case OperatorBound:
			if r.BoundedInference == nil {
				c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s) claims operator_bound without a bounded_inference block", r.Sequence, r.Check))
			}
		case Witnessed:
			if r.Review == nil {
				c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s) claims witnessed without a review block", r.Sequence, r.Check))
			}
		}
	}
	if len(c.Details) > 0 {
		return fail(c, "CLAIM WITHOUT EVIDENCE", "proof level claimed without its evidence: "+c.Details[0], false)
	}
	c.Status, c.Message = Pass, "every claimed proof level has its evidence"
	if math > 0 {
		c.Message = fmt.Sprintf("every claimed proof level has its evidence (%d mathematical record(s): proved conditions, or pre/post-conditions of an operator_bound inference of their check and input)", math)
	}
	return c
}

// checkTime applies the time rules (decision D7) against the VPEC
// timestamp's verified genTime T:
//   - every record's recorded_at, every gap's timestamp and every session
//     token's genTime is at most T + MaxClockSkew;
//   - no gap is dated more than MaxClockSkew before the run: before the
//     earliest recorded_at, or before issued_at when that is earlier (an
//     empty run);
//   - every session opens no later than it closes.
//
// Without a verified timestamp there is no reference: the check does not
// apply (the timestamp check has failed, so the VPEC is not VALID).
func checkTime(p parsed, r *Report, sessions []sessionTimes) Check {
	c := Check{Name: CheckTime}
	if r.genTime.IsZero() {
		c.Status, c.Message = NotApplicable, "times not checked: no verified timestamp to compare them with"
		return c
	}
	limit := r.genTime.Add(MaxClockSkew)
	parse := func(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, s); return t }
	// late reports t, which what names, as after the limit (callers test
	// first, so a long VPEC costs no allocation per record).
	late := func(t time.Time, what string) {
		c.Details = append(c.Details, fmt.Sprintf("%s %s is after the VPEC timestamp %s (at most %s later allowed)", what, FormatTime(t), r.TimestampedAt, MaxClockSkew))
	}
	floor := parse(p.v.IssuedAt)
	for i := range p.v.Records {
		rec := &p.v.Records[i]
		at := parse(rec.RecordedAt)
		if at.After(limit) {
			late(at, fmt.Sprintf("records[%d] (sequence %d).recorded_at", i, rec.Sequence))
		}
		if at.Before(floor) {
			floor = at
		}
	}
	floor = floor.Add(-MaxClockSkew)
	for i, g := range p.v.Gaps {
		t := parse(g.Timestamp)
		if t.After(limit) {
			late(t, fmt.Sprintf("gaps[%d].timestamp", i))
		}
		if t.Before(floor) {
			c.Details = append(c.Details, fmt.Sprintf("gaps[%d].timestamp %s is before the run (earliest record or issued_at %s, less %s)", i, FormatTime(t), FormatTime(floor.Add(MaxClockSkew)), MaxClockSkew))
		}
	}
	for _, st := range sessions {
		rec := &p.v.Records[st.index]
		if st.open.After(limit) {
			late(st.open, fmt.Sprintf("records[%d] (sequence %d) session open genTime", st.index, rec.Sequence))
		}
		if !st.close.IsZero() {
			if st.close.After(limit) {
				late(st.close, fmt.Sprintf("records[%d] (sequence %d) session close genTime", st.index, rec.Sequence))
			}
			if st.close.Before(st.open) {
				c.Details = append(c.Details, fmt.Sprintf("records[%d] (sequence %d) session closes at %s, before it opens at %s", st.index, rec.Sequence, FormatTime(st.close), FormatTime(st.open)))
			}
		}
	}
	if len(c.Details) > 0 {
		return fail(c, "TIME VIOLATION", "time rules violated: "+c.Details[0], false)
	}
	c.Status = Pass
	c.Message = fmt.Sprintf("times consistent (none after the timestamp %s + %s; gaps not before the run; sessions open before they close)", r.TimestampedAt, MaxClockSkew)
	return c
}
