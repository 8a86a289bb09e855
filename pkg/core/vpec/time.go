package vpec

import (
	"errors"
	"fmt"
	"time"
)

// ErrTimeFormat is returned by ParseTime for a time that is not in the one
// accepted form.
var ErrTimeFormat = errors.New("not an RFC 3339 UTC time of the form YYYY-MM-DDTHH:MM:SS[.fraction]Z")

// ParseTime reads a document time (docs/FORMATS.md, JSON conventions):
// exactly "YYYY-MM-DDTHH:MM:SS", optionally "." and one or more digits, then "Z";
// two-digit fields, upper-case T and Z, a real calendar date, no leap
// second. time.Parse alone also takes a one-digit hour ("T2:27:04Z"), which
// would give one time two spellings.
func ParseTime(s string) (time.Time, error) {
	const fixed = len("2006-01-02T15:04:05")
	ok := len(s) >= fixed+1 && s[len(s)-1] == 'Z'
	for i := 0; ok && i < fixed; i++ {
		switch i {
		case 4, 7:
			ok = s[i] == '-'
		case 10:
			ok = s[i] == 'T'
		case 13, 16:
			ok = s[i] == ':'
		default:
			ok = s[i] >= '0' && s[i] <= '9'
		}
	}
	if frac := ""; ok {
		if frac = s[fixed : len(s)-1]; frac != "" {
			ok = frac[0] == '.' && len(frac) >= 2
			for i := 1; ok && i < len(frac); i++ {
				ok = frac[i] >= '0' && frac[i] <= '9'
			}
		}
	}
	if !ok {
		return time.Time{}, fmt.Errorf("%q: %w", s, ErrTimeFormat)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: %w: %v", s, ErrTimeFormat, err)
	}
	return t, nil
}

// validTime reports whether s is an RFC 3339 time in UTC ("Z").
func validTime(s string) bool {
	_, err := ParseTime(s)
	return err == nil
}

// FormatTime writes t as an RFC 3339 UTC timestamp with millisecond precision.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
