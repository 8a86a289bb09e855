package vpec

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// MaxDetailsBytes bounds the canonical (RFC 8785) size of one record's
// details object. The server refuses larger details and the verifier
// reports a schema error, so both agree on what a VPEC may carry.
const MaxDetailsBytes = 16384

// MaxClockSkew is how far a time inside a VPEC (a record's recorded_at, a
// gap's timestamp, a session token's genTime) may lie after the VPEC
// timestamp's genTime. Anything later is a time violation.
const MaxClockSkew = 5 * time.Minute

// maxGapsPerBreak bounds the sequence_missing gaps one break produces
// (today's server behaviour; replaced by one gap per range).
const maxGapsPerBreak = 1000

// IssueGaps returns the gaps the service declares for a run from its
// records in sequence order and their canonical bytes (jcs[i], the bytes the
// chain hash covers): chain breaks and missing sequence numbers. stamp is
// the gaps' timestamp. Gap ids are fresh.
func IssueGaps(runID string, records []Record, jcs [][]byte, stamp string) []Gap {
	gaps := []Gap{}
	for _, b := range VerifyChain(runID, records, jcs) {
		if b.MissingFrom > 0 {
			for seq := b.MissingFrom; seq <= b.MissingTo && seq < b.MissingFrom+maxGapsPerBreak; seq++ {
				sq := seq
				gaps = append(gaps, Gap{GapID: NewID("gap_"), GapType: GapSequenceMissing, Severity: High, Sequence: &sq, Timestamp: stamp})
			}
			continue
		}
		sq := b.Sequence
		gaps = append(gaps, Gap{GapID: NewID("gap_"), GapType: GapChainBreak, Severity: Critical, Sequence: &sq, Timestamp: stamp})
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
