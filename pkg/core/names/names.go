// Package names holds the rules for the names and ids svc's documents
// carry, below every package that reads or writes them: a name a person
// reads holds no control character (ValidName), an id is a short run of
// letters, digits and ._:- (ValidID), a prefixed id (rec_, run_, vpec_) is
// its prefix and an id (ValidPrefixedID), and NewID and NewOrderedID make
// fresh prefixed ids. pkg/core/vpec, pkg/core/api and
// pkg/zk/ceremony/transcript apply these rules; none keeps a copy.
package names

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrInvalidName reports a name or id a person reads that holds a control
// character: C0, DEL, C1 or a bidirectional control.
var ErrInvalidName = errors.New("invalid name")

// ValidName reports whether s may be shown to a person as a name: valid
// UTF-8 without C0 controls (U+0000-U+001F), DEL, C1 controls
// (U+0080-U+009F) or bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069). The error wraps ErrInvalidName and names the offending
// code point and its byte offset.
func ValidName(s string) error {
	// Printable ASCII, the common case, holds none of them.
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return nil
	}
	return validNameRunes(s)
}

// validNameRunes is ValidName rune by rune.
func validNameRunes(s string) error {
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

// MaxIDBytes is the longest id, a prefixed id (rec_, run_, vpec_) prefix
// included.
const MaxIDBytes = 128

// ValidID reports whether s is 1-128 characters of letters, digits and
// ._:- starting with a letter or digit (the rule for every id in a VPEC).
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != ':' && c != '-')) {
			return false
		}
	}
	return true
}

// ValidPrefixedID reports whether s is prefix followed by an id, the rule
// of record_id (rec_), run_id (run_) and vpec_id (vpec_): the part after
// the prefix starts with a letter or digit, and the whole value is an id,
// at most MaxIDBytes bytes in all (rec_ and up to 124 more). The server
// and the verifier apply this one rule.
func ValidPrefixedID(s, prefix string) bool {
	tail, ok := strings.CutPrefix(s, prefix)
	// The tail's bytes after its first are s's, under the same rule.
	return ok && tail != "" && ValidID(tail[:1]) && ValidID(s)
}

// NewID returns prefix followed by a random UUID (version 4), e.g. "gap_…".
func NewID(prefix string) string {
	var b [16]byte
	random(b[:])
	b[6] = b[6]&0x0f | 0x40
	return uuid(prefix, &b)
}

// NewOrderedID returns prefix followed by a UUID version 7 (RFC 9562) for
// the time t: 48 bits of Unix milliseconds, then 12 bits of the fraction
// of that millisecond (RFC 9562 section 6.2, method 3), then 62 random
// bits. Ids made 245 ns or more apart sort in time order, so a table or
// index keyed by them grows at one end rather than at a random page. svc
// makes run_, rec_ and vpec_ ids this way (their documents show those
// times anyway, as opened_at, recorded_at and issued_at); the 62 random
// bits keep them unguessable.
func NewOrderedID(prefix string, t time.Time) string {
	var b [16]byte
	random(b[8:])
	ms := uint64(t.UnixMilli())
	frac := uint64(t.Nanosecond()%int(time.Millisecond)) << 12 / uint64(time.Millisecond)
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6], b[7] = 0x70|byte(frac>>8), byte(frac)
	return uuid(prefix, &b)
}

// random fills b from crypto/rand, which does not fail on the platforms
// Go supports.
func random(b []byte) {
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
}

// uuid is prefix and b, whose version nibble is set, as a lowercase UUID
// string with the RFC 9562 variant.
func uuid(prefix string, b *[16]byte) string {
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return prefix + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
