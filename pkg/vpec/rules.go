package vpec

import (
	"fmt"
	"time"
)

// checkEvidence checks that every claimed proof level has its evidence
// (decision D6; docs/FORMATS.md, "Claims and their evidence"):
//   - mathematical: only on a pre_conditions or post_conditions record of a
//     bound_committed_inference stage, in a VPEC that also holds the
//     operator_bound inference record of such a stage (v1 carries no
//     proofs, so this is the only evidence a mathematical claim can have);
//   - operator_bound: a bounded_inference block, and witnessed: a review
//     block (the schema requires each block with its level and only with
//     it; the profile and reviews checks verify them);
//   - verifiable_inference: never in v1 (the zk_proofs check fails it).
func checkEvidence(p parsed) Check {
	c := Check{Name: CheckEvidence}
	anchor := false
	math := 0
	for i := range p.v.Records {
		r := &p.v.Records[i]
		if r.ProofLevel == OperatorBound && r.BoundedInference != nil && r.StageType == StageBoundCommittedInference {
			anchor = true
		}
	}
	for i := range p.v.Records {
		r := &p.v.Records[i]
		switch r.ProofLevel {
		case Mathematical:
			math++
			if r.ZKProof != nil {
				// Its own evidence: the zk_proofs check verifies it.
				break
			}
			if r.StageType != StageBoundCommittedInference || (r.StagePart != StagePartPre && r.StagePart != StagePartPost) {
				c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s) claims mathematical, but is not a pre_conditions or post_conditions record of a %s stage", r.Sequence, r.Check, StageBoundCommittedInference))
			} else if !anchor {
				c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s) claims mathematical, but the VPEC holds no operator_bound %s inference record", r.Sequence, r.Check, StageBoundCommittedInference))
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
		c.Message = fmt.Sprintf("every claimed proof level has its evidence (%d mathematical record(s): pre/post-conditions of a bound_committed_inference stage or proved conditions)", math)
	}
	return c
}

// checkTime applies the time rules (decision D7) against the VPEC
// timestamp's verified genTime T:
//   - every record's recorded_at, every gap's timestamp and every session
//     token's genTime is at most T + MaxClockSkew, and so is opened_at;
//   - when the VPEC carries opened_at (the run's open time), no record's
//     recorded_at is more than MaxClockSkew before it;
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
	var opened time.Time
	if p.v.OpenedAt != "" {
		if opened = parse(p.v.OpenedAt); opened.After(limit) {
			late(opened, "opened_at")
		}
	}
	for i := range p.v.Records {
		rec := &p.v.Records[i]
		at := parse(rec.RecordedAt)
		if at.After(limit) {
			late(at, fmt.Sprintf("records[%d] (sequence %d).recorded_at", i, rec.Sequence))
		}
		if !opened.IsZero() && at.Before(opened.Add(-MaxClockSkew)) {
			c.Details = append(c.Details, fmt.Sprintf("records[%d] (sequence %d).recorded_at %s is before the run was opened (opened_at %s, at most %s earlier allowed)",
				i, rec.Sequence, FormatTime(at), p.v.OpenedAt, MaxClockSkew))
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
	if !opened.IsZero() {
		c.Message = fmt.Sprintf("times consistent (none after the timestamp %s + %s; no record before opened_at %s - %s; gaps not before the run; sessions open before they close)",
			r.TimestampedAt, MaxClockSkew, p.v.OpenedAt, MaxClockSkew)
	}
	return c
}
