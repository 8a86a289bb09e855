package vpec

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/canonical"
)

// MaxDetailsBytes bounds the canonical (RFC 8785) size of one record's
// details object. The server refuses larger details and the verifier
// reports a schema error, so both agree on what a VPEC may carry.
const MaxDetailsBytes = 16384

// MaxClockSkew is how far a time inside a VPEC (a record's recorded_at, a
// gap's timestamp, a session token's genTime) may lie after the VPEC
// timestamp's genTime. Anything later is a time violation.
const MaxClockSkew = 5 * time.Minute

// IssueGaps returns the gaps the service declares for a run from its
// records in sequence order and their canonical bytes (jcs[i], the bytes the
// chain hash covers), each dated stamp, with fresh ids:
//   - one sequence_missing gap per range of missing sequence numbers
//     (sequence = first missing, sequence_end = last missing), however long;
//   - one chain_break gap per record whose chain hash does not follow from
//     its predecessor (it never also declares a hole);
//   - one empty_run gap when there are no records.
//
// The verifier requires exactly these chain, sequence and empty-run gaps.
func IssueGaps(runID string, records []Record, jcs [][]byte, stamp string) []Gap {
	gaps := []Gap{}
	if len(records) == 0 {
		return append(gaps, Gap{GapID: NewID("gap_"), GapType: GapEmptyRun, Severity: GapSeverity(GapEmptyRun), Timestamp: stamp})
	}
	for _, b := range VerifyChain(runID, records, jcs) {
		if b.MissingFrom > 0 {
			from, to := b.MissingFrom, b.MissingTo
			gaps = append(gaps, Gap{GapID: NewID("gap_"), GapType: GapSequenceMissing, Severity: GapSeverity(GapSequenceMissing), Sequence: &from, SequenceEnd: &to, Timestamp: stamp})
			continue
		}
		sq := b.Sequence
		gaps = append(gaps, Gap{GapID: NewID("gap_"), GapType: GapChainBreak, Severity: GapSeverity(GapChainBreak), Sequence: &sq, Timestamp: stamp})
	}
	return gaps
}

// ErrInvalidName reports a name or id a person reads that holds a control
// character: C0, DEL, C1 or a bidirectional control.
var ErrInvalidName = errors.New("invalid name")

// ValidName reports whether s may be shown to a person as a name: valid
// UTF-8 without C0 controls (U+0000-U+001F), DEL, C1 controls
// (U+0080-U+009F) or bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069). The error wraps ErrInvalidName and names the offending
// code point and its byte offset.
func ValidName(s string) error {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return fmt.Errorf("%w: invalid UTF-8 at byte %d", ErrInvalidName, i)
			}
		}
		if IsControl(r) {
			return fmt.Errorf("%w: control character U+%04X at byte %d", ErrInvalidName, r, i)
		}
	}
	return nil
}

// IsControl reports whether r is a character ValidName refuses: C0, DEL,
// C1 or a bidirectional control.
func IsControl(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// checkGapRules applies the gap rules the struct decoder cannot: which
// members go with which gap type. bad reports a schema problem.
func checkGapRules(v *VPEC, bad func(string, ...any)) {
	for i, g := range v.Gaps {
		f := fmt.Sprintf("gaps[%d]", i)
		if err := ValidName(g.GapType); err != nil {
			bad("%s.gap_type: %v", f, err)
		}
		if g.Check != nil {
			if err := ValidName(*g.Check); err != nil {
				bad("%s.check: %v", f, err)
			}
		}
		switch g.GapType {
		case GapSequenceMissing:
			switch {
			case g.Sequence == nil || g.SequenceEnd == nil:
				bad("%s: a sequence_missing gap needs sequence (first missing) and sequence_end (last missing)", f)
			case *g.Sequence < 1 || *g.SequenceEnd < *g.Sequence:
				bad("%s: sequence %d to sequence_end %d is not a range of sequence numbers", f, *g.Sequence, *g.SequenceEnd)
			}
		case GapChainBreak:
			if g.Sequence == nil || *g.Sequence < 1 {
				bad("%s: a chain_break gap needs the sequence of the record whose chain hash fails", f)
			}
		case GapEmptyRun:
			if g.Check != nil || g.Sequence != nil {
				bad("%s: an empty_run gap has check and sequence null", f)
			}
		}
		if g.GapType != GapSequenceMissing && g.SequenceEnd != nil {
			bad("%s.sequence_end: only a sequence_missing gap has one", f)
		}
	}
}

// gapMismatches returns the declared chain, sequence and empty-run gaps
// that the records do not bear out: a sequence_missing range that is not
// exactly a hole, a chain_break gap where the chain does not break (or
// where a hole, not a chain hash, is the break), an empty_run gap on a run
// with records, and a run without records that lacks its empty_run gap.
// (Undeclared breaks are the chain check's failure.)
func gapMismatches(v *VPEC, breaks []ChainBreak) []string {
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
		case GapSequenceMissing:
			if g.Sequence != nil && g.SequenceEnd != nil {
				if !holes[[2]int64{*g.Sequence, *g.SequenceEnd}] {
					out = append(out, fmt.Sprintf("gaps[%d] declares sequences %d-%d missing, which is not a hole in the records", i, *g.Sequence, *g.SequenceEnd))
				}
				twice(i, [3]int64{0, *g.Sequence, *g.SequenceEnd})
			}
		case GapChainBreak:
			if g.Sequence != nil {
				if !hashBreaks[*g.Sequence] {
					out = append(out, fmt.Sprintf("gaps[%d] declares a chain break at sequence %d, where the chain hash follows", i, *g.Sequence))
				}
				twice(i, [3]int64{1, *g.Sequence, *g.Sequence})
			}
		case GapEmptyRun:
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

// detailsSize returns the size of details in canonical (RFC 8785) form. It
// walks the value for a cheap upper bound first and canonicalizes only
// when that bound exceeds MaxDetailsBytes.
func detailsSize(details map[string]any) int {
	if detailsBound(details, 0) <= MaxDetailsBytes {
		return 0
	}
	b, err := canonical.Marshal(details)
	if err != nil {
		return math.MaxInt
	}
	return len(b)
}

// detailsBound is an upper bound of v's canonical size: a string escapes
// to at most 6 bytes per byte, a number takes at most 25 bytes.
func detailsBound(v any, depth int) int {
	if depth > 1000 {
		return math.MaxInt / 2
	}
	switch x := v.(type) {
	case map[string]any:
		n := 2
		for k, e := range x {
			n += 6*len(k) + 4 + detailsBound(e, depth+1)
			if n > MaxDetailsBytes {
				return n
			}
		}
		return n
	case []any:
		n := 2
		for _, e := range x {
			n += 1 + detailsBound(e, depth+1)
			if n > MaxDetailsBytes {
				return n
			}
		}
		return n
	case string:
		return 6*len(x) + 2
	default:
		return 25
	}
}
