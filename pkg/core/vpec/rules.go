package vpec

import (
	"fmt"
	"strings"
	"time"
)

// Claims follows, record by record in any order, whether every unproved
// mathematical claim of a VPEC (or of a run the service is about to seal)
// has its evidence (decision D6; docs/FORMATS.md, "Claims and their
// evidence"): it is a pre_conditions or post_conditions record
// <check>:<part> of a bound_committed_inference stage, and the VPEC holds
// the operator_bound inference record of that decomposition: check
// <check>, stage_part inference, stage_type bound_committed_inference, the
// same commitment_hash (every record of a decomposition commits to the
// check's input). An operator_bound record of another check or input is
// not evidence. The verifier's evidence check and the service's close use
// it. The zero value is ready.
type Claims struct {
	anchors map[claimKey]bool
	pending []pendingClaim
}

type claimKey struct{ check, commitment string }

type pendingClaim struct {
	seq         int64
	check       string
	key         claimKey
	notInStage  bool // not a pre/post-condition of a bound_committed_inference stage
	withoutPart bool // its check names no part (<check>:<part>)
}

// Add takes one record into account.
func (c *Claims) Add(r *Record) {
	switch {
	case r.ProofLevel == OperatorBound && r.BoundedInference != nil && r.StageType == StageBoundCommittedInference && r.StagePart == StagePartInference:
		if c.anchors == nil {
			c.anchors = map[claimKey]bool{}
		}
		c.anchors[claimKey{r.Check, r.CommitmentHash}] = true
	case r.ProofLevel == Mathematical && r.ZKProof == nil:
		pc := pendingClaim{seq: r.Sequence, check: r.Check,
			notInStage: r.StageType != StageBoundCommittedInference || (r.StagePart != StagePartPre && r.StagePart != StagePartPost)}
		if i := strings.LastIndexByte(r.Check, ':'); i >= 0 && i < len(r.Check)-1 {
			pc.key = claimKey{r.Check[:i], r.CommitmentHash}
		} else {
			pc.withoutPart = true
		}
		c.pending = append(c.pending, pc)
	}
}

// Unsupported returns, in the order the records were added, a sentence
// for each unproved mathematical claim without its evidence, naming its
// sequence and check and what is missing; nil when there is none.
func (c *Claims) Unsupported() []string {
	var out []string
	for _, pc := range c.pending {
		switch {
		case pc.notInStage:
			out = append(out, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but is not a pre_conditions or post_conditions record of a %s stage", pc.seq, pc.check, StageBoundCommittedInference))
		case pc.withoutPart:
			out = append(out, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but its check does not name a decomposition's part (<check>:<part>)", pc.seq, pc.check))
		case !c.anchors[pc.key]:
			out = append(out, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but there is no operator_bound %s inference record of check %q on the same input (commitment_hash %s)", pc.seq, pc.check, StageBoundCommittedInference, pc.key.check, shortHash(pc.key.commitment)))
		}
	}
	return out
}

// checkEvidence checks that every claimed proof level has its evidence
// (decision D6; docs/FORMATS.md, "Claims and their evidence"):
//   - mathematical: a zk_proof of a condition circuit (the zk_proofs check
//     verifies it), or else the decomposition's evidence (Claims);
//   - operator_bound: a bounded_inference block, and witnessed: a review
//     block (the schema requires each block with its level and only with
//     it; the profile and reviews checks verify them);
//   - verifiable_inference: a zk_proof (the zk_proofs check).
func checkEvidence(p parsed) Check {
	c := Check{Name: CheckEvidence}
	var claims Claims
	math := 0
	for i := range p.v.Records {
		r := &p.v.Records[i]
		claims.Add(r)
		switch r.ProofLevel {
		case Mathematical:
			math++
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
	c.Details = append(claims.Unsupported(), c.Details...)
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
