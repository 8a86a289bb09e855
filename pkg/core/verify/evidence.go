package verify

import (
	"fmt"
	"strings"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckEvidence: each claimed proof level's evidence is present and of
// the right kind (docs/FORMATS.md, "Claims and their evidence").
const CheckEvidence CheckName = "evidence"

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
func (c *Claims) Add(r *vpec.Record) {
	switch {
	case r.ProofLevel == vpec.OperatorBound && r.BoundedInference != nil && r.StageType == stage.BoundCommittedInference && r.StagePart == stage.PartInference:
		if c.anchors == nil {
			c.anchors = map[claimKey]bool{}
		}
		c.anchors[claimKey{r.Check, r.CommitmentHash}] = true
	case r.ProofLevel == vpec.Mathematical && r.ZKProof == nil:
		pc := pendingClaim{seq: r.Sequence, check: r.Check,
			notInStage: r.StageType != stage.BoundCommittedInference || (r.StagePart != stage.PartPre && r.StagePart != stage.PartPost)}
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
			out = append(out, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but is not a pre_conditions or post_conditions record of a %s stage", pc.seq, pc.check, stage.BoundCommittedInference))
		case pc.withoutPart:
			out = append(out, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but its check does not name a decomposition's part (<check>:<part>)", pc.seq, pc.check))
		case !c.anchors[pc.key]:
			out = append(out, fmt.Sprintf("sequence %d (%s) claims mathematical without a proof, but there is no operator_bound %s inference record of check %q on the same input (commitment_hash %s)", pc.seq, pc.check, stage.BoundCommittedInference, pc.key.check, commitment.Short(pc.key.commitment)))
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
func (s *state) evidence() Check { return checkEvidence(&s.doc.VPEC) }

// checkEvidence is the evidence check of v.
func checkEvidence(v *vpec.VPEC) Check {
	c := Check{Name: CheckEvidence}
	var claims Claims
	math := 0
	for i := range v.Records {
		r := &v.Records[i]
		claims.Add(r)
		switch r.ProofLevel {
		case vpec.Mathematical:
			math++
		case vpec.OperatorBound:
			if r.BoundedInference == nil {
				c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s) claims operator_bound without a bounded_inference block", r.Sequence, r.Check))
			}
		case vpec.Witnessed:
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
