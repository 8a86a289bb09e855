package verify

import (
	"fmt"
	"strings"

	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckGaps: the chain, sequence and empty-run gaps the VPEC declares are
// exactly those its records require (pkg/core/issue.Gaps); the check
// warns when there are gaps.
const CheckGaps CheckName = "gaps"

func (s *state) gaps() Check { return checkGaps(&s.doc.VPEC, s.breaks) }

// checkGaps compares the gaps v declares with the chain's breaks and its
// records, and lists them.
func checkGaps(v *vpec.VPEC, breaks []vpec.ChainBreak) Check {
	c := Check{Name: CheckGaps}
	if bad := gapMismatches(v, breaks); len(bad) > 0 {
		c.Details = bad
		return fail(c, "GAP MISMATCH", "governance gaps do not match the records: "+bad[0], false)
	}
	if len(v.Gaps) == 0 {
		c.Status, c.Message = Pass, "no governance gaps"
		return c
	}
	// One detail line per gap up to MaxReportDetails (a VPEC may hold
	// 100,000 gaps: the report stays small), and the message counts
	// the gap types in order of first appearance.
	var types []string
	count := map[string]int{}
	for i, g := range v.Gaps {
		if count[g.GapType]++; count[g.GapType] == 1 {
			types = append(types, g.GapType)
		}
		if i == MaxReportDetails {
			c.Details = append(c.Details, fmt.Sprintf("… and %d more", len(v.Gaps)-i))
		}
		if i >= MaxReportDetails {
			continue
		}
		d := fmt.Sprintf("%s (%s)", g.GapType, g.Severity)
		if g.Check != nil {
			d += " check " + *g.Check
		}
		switch {
		case g.Sequence != nil && g.SequenceEnd != nil && *g.SequenceEnd != *g.Sequence:
			d += fmt.Sprintf(" sequences %d-%d", *g.Sequence, *g.SequenceEnd)
		case g.Sequence != nil:
			d += fmt.Sprintf(" sequence %d", *g.Sequence)
		}
		c.Details = append(c.Details, d)
	}
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = t
		if n := count[t]; n > 1 {
			parts[i] = fmt.Sprintf("%s ×%d", t, n)
		}
	}
	c.Status, c.Message = Warn, fmt.Sprintf("%d governance gap(s): %s", len(v.Gaps), strings.Join(parts, ", "))
	return c
}

// gapMismatches returns the declared chain, sequence and empty-run gaps
// that the records do not bear out: a sequence_missing range that is not
// exactly a hole, a chain_break gap where the chain does not break (or
// where a hole, not a chain hash, is the break), an empty_run gap on a run
// with records, and a run without records that lacks its empty_run gap.
// (Undeclared breaks are the chain check's failure.)
func gapMismatches(v *vpec.VPEC, breaks []vpec.ChainBreak) []string {
	var out []string
	holes := map[[2]int64]bool{}
	hashBreaks := map[int64]bool{}
	for _, b := range breaks {
		if b.MissingFrom > 0 {
			holes[[2]int64{b.MissingFrom, b.MissingTo}] = true
		} else {
			hashBreaks[b.Sequence] = true
		}
	}
	emptyRun := 0
	declared := map[[3]int64]bool{} // {0 hole | 1 break, from, to}
	twice := func(i int, k [3]int64) {
		if declared[k] {
			out = append(out, fmt.Sprintf("gaps[%d] declares the same break as an earlier gap", i))
		}
		declared[k] = true
	}
	for i, g := range v.Gaps {
		switch g.GapType {
		case gap.SequenceMissing:
			if g.Sequence != nil && g.SequenceEnd != nil {
				if !holes[[2]int64{*g.Sequence, *g.SequenceEnd}] {
					out = append(out, fmt.Sprintf("gaps[%d] declares sequences %d-%d missing, which is not a hole in the records", i, *g.Sequence, *g.SequenceEnd))
				}
				twice(i, [3]int64{0, *g.Sequence, *g.SequenceEnd})
			}
		case gap.ChainBreak:
			if g.Sequence != nil {
				if !hashBreaks[*g.Sequence] {
					out = append(out, fmt.Sprintf("gaps[%d] declares a chain break at sequence %d, where the chain hash follows", i, *g.Sequence))
				}
				twice(i, [3]int64{1, *g.Sequence, *g.Sequence})
			}
		case gap.EmptyRun:
			emptyRun++
			if len(v.Records) > 0 {
				out = append(out, fmt.Sprintf("gaps[%d] declares an empty run, but the VPEC holds %d records", i, len(v.Records)))
			}
		}
	}
	if len(v.Records) == 0 && emptyRun != 1 {
		out = append(out, fmt.Sprintf("the VPEC holds no records and declares %d empty_run gaps (exactly one required)", emptyRun))
	}
	return out
}
