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
	if !timeForm(s) {
		return time.Time{}, fmt.Errorf("%q: %w", s, ErrTimeFormat)
	}
	if t, ok := fixedTime(s); ok {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: %w: %v", s, ErrTimeFormat, err)
	}
	return t, nil
}

// timeForm reports whether s has ParseTime's layout, its fields not yet
// judged as a date and time.
func timeForm(s string) bool {
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
	return ok
}

// fixedTime reads s, of ParseTime's layout, when it has no fraction or
// one of three digits (as the service writes times) and is a real date and
// time, as time.Parse would; else it reports false and time.Parse decides
// (and names the problem). A VPEC holds a time per record, each read twice.
func fixedTime(s string) (time.Time, bool) {
	f, ok := fixedFields(s)
	if !ok {
		return time.Time{}, false
	}
	return time.Date(f.year, time.Month(f.month), f.day, f.hour, f.minute, f.sec, f.nsec, time.UTC), true
}

// timeFields are the fields of a time in fixedTime's layout.
type timeFields struct{ year, month, day, hour, minute, sec, nsec int }

// fixedFields is fixedTime without building the time.Time (validTime only
// asks whether there is one).
func fixedFields(s string) (timeFields, bool) {
	if len(s) != len("2006-01-02T15:04:05Z") && len(s) != len(TimeLayout) {
		return timeFields{}, false
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range s[from:to] {
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec := num(11, 13), num(14, 16), num(17, 19)
	nsec := 0
	if len(s) > 20 {
		nsec = num(20, 23) * 1e6
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return timeFields{}, false
	}
	return timeFields{year, month, day, hour, minute, sec, nsec}, true
}

// daysIn is the number of days of month in year (proleptic Gregorian).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// validTime reports whether s is an RFC 3339 time in UTC ("Z").
func validTime(s string) bool {
	if !timeForm(s) {
		return false
	}
	if _, ok := fixedFields(s); ok {
		return true
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// FormatTime writes t as an RFC 3339 UTC timestamp with millisecond precision.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// TimeLayout is the layout FormatTime writes (as the service writes every
// time): fixed width, most significant field first, so that for years
// 0001-9999 two such strings order as their times do. A time ParseTime
// accepts that has this length is in this layout.
const TimeLayout = "2006-01-02T15:04:05.000Z"
