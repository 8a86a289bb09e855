package verify

import (
	"fmt"

	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckChain: the hash chain over the records recomputes from genesis, or
// every break is declared as a gap (then the check warns).
const CheckChain CheckName = "chain"

func (s *state) chain() Check { return checkChain(&s.doc.VPEC, s.breaks) }

// checkChain judges the breaks recomputed from the records against what
// v says: chain_intact and the declared gaps.
func checkChain(v *vpec.VPEC, breaks []vpec.ChainBreak) Check {
	c := Check{Name: CheckChain}
	if len(breaks) == 0 {
		if !v.ChainIntact {
			return fail(c, "CHAIN MISMATCH", "chain_intact is false, but the chain recomputes intact from genesis", false)
		}
		c.Status, c.Message = Pass, fmt.Sprintf("chain intact (%d records from genesis)", len(v.Records))
		return c
	}
	undeclared := 0
	for _, b := range breaks {
		c.Details = append(c.Details, fmt.Sprintf("sequence %d: %s", b.Sequence, b.Reason))
		if !declaredBreak(v.Gaps, b) {
			undeclared++
		}
	}
	if v.ChainIntact || undeclared > 0 {
		return fail(c, "CHAIN BROKEN", fmt.Sprintf("chain broken at sequence %d: %s", breaks[0].Sequence, breaks[0].Reason), false)
	}
	c.Status, c.Message = Warn, fmt.Sprintf("chain not intact: %d break(s), each declared as a governance gap", len(breaks))
	return c
}

// declaredBreak reports whether gaps account for a chain break exactly: a
// hole (sequence numbers absent before b.Sequence) by one sequence_missing
// gap whose range is the hole, any other break by a chain_break gap at the
// record whose chain hash fails. A chain_break gap never declares a hole.
func declaredBreak(gaps []vpec.Gap, b vpec.ChainBreak) bool {
	for _, g := range gaps {
		if g.Sequence == nil {
			continue
		}
		if b.MissingFrom > 0 {
			if g.GapType == gap.SequenceMissing && *g.Sequence == b.MissingFrom && g.SequenceEnd != nil && *g.SequenceEnd == b.MissingTo {
				return true
			}
		} else if g.GapType == gap.ChainBreak && *g.Sequence == b.Sequence {
			return true
		}
	}
	return false
}
