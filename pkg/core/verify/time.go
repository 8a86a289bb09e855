package verify

import (
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckTime: no time in the VPEC lies after its timestamp (plus
// MaxClockSkew), no record before the run opened, gaps are not dated
// before the run, sessions open before they close (decision D7).
const CheckTime CheckName = "time"

// MaxClockSkew is how far a time inside a VPEC (a record's recorded_at, a
// gap's timestamp, a session token's genTime) may lie after the VPEC
// timestamp's genTime. Anything later is a time violation.
const MaxClockSkew = 5 * time.Minute

func (s *state) time() Check { return checkTime(&s.doc.VPEC, s.genTime, s.sessionTimes()) }

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
// genTime is zero when the timestamp did not verify; sessions are the
// verified times of the VPEC's sessions.
func checkTime(v *vpec.VPEC, genTime time.Time, sessions []sessionTimes) Check {
	c := Check{Name: CheckTime}
	if genTime.IsZero() {
		c.Status, c.Message = NotApplicable, "times not checked: no verified timestamp to compare them with"
		return c
	}
	stamped := vpec.FormatTime(genTime)
	limit := genTime.Add(MaxClockSkew)
	// Every time passed the schema check, which read it with ParseTime.
	parse := func(s string) time.Time { t, _ := vpec.ParseTime(s); return t }
	// late reports t, which what names, as after the limit (callers test
	// first, so a long VPEC costs no allocation per record).
	late := func(t time.Time, what string) {
		c.Details = append(c.Details, fmt.Sprintf("%s %s is after the VPEC timestamp %s (at most %s later allowed)", what, vpec.FormatTime(t), stamped, MaxClockSkew))
	}
	floor := parse(v.IssuedAt)
	var opened time.Time
	if v.OpenedAt != "" {
		if opened = parse(v.OpenedAt); opened.After(limit) {
			late(opened, "opened_at")
		}
	}
	// A record time written as the service writes it is compared as
	// written (msOrder); any other is read.
	var bounds msBounds
	if !opened.IsZero() {
		bounds = newMSBounds(limit, opened.Add(-MaxClockSkew))
	} else {
		bounds = newMSBounds(limit, time.Time{})
	}
	earliest := "" // the earliest record time compared as written
	for i := range v.Records {
		rec := &v.Records[i]
		if s := rec.RecordedAt; bounds.ok && len(s) == len(vpec.TimeLayout) {
			if s > bounds.notAfter {
				late(parse(s), fmt.Sprintf("records[%d] (sequence %d).recorded_at", i, rec.Sequence))
			}
			if bounds.notBefore != "" && s < bounds.notBefore {
				c.Details = append(c.Details, fmt.Sprintf("records[%d] (sequence %d).recorded_at %s is before the run was opened (opened_at %s, at most %s earlier allowed)",
					i, rec.Sequence, vpec.FormatTime(parse(s)), v.OpenedAt, MaxClockSkew))
			}
			if earliest == "" || s < earliest {
				earliest = s
			}
			continue
		}
		at := parse(rec.RecordedAt)
		if at.After(limit) {
			late(at, fmt.Sprintf("records[%d] (sequence %d).recorded_at", i, rec.Sequence))
		}
		if !opened.IsZero() && at.Before(opened.Add(-MaxClockSkew)) {
			c.Details = append(c.Details, fmt.Sprintf("records[%d] (sequence %d).recorded_at %s is before the run was opened (opened_at %s, at most %s earlier allowed)",
				i, rec.Sequence, vpec.FormatTime(at), v.OpenedAt, MaxClockSkew))
		}
		if at.Before(floor) {
			floor = at
		}
	}
	if earliest != "" {
		if at := parse(earliest); at.Before(floor) {
			floor = at
		}
	}
	floor = floor.Add(-MaxClockSkew)
	for i, g := range v.Gaps {
		t := parse(g.Timestamp)
		if t.After(limit) {
			late(t, fmt.Sprintf("gaps[%d].timestamp", i))
		}
		if t.Before(floor) {
			c.Details = append(c.Details, fmt.Sprintf("gaps[%d].timestamp %s is before the run (earliest record or issued_at %s, less %s)", i, vpec.FormatTime(t), vpec.FormatTime(floor.Add(MaxClockSkew)), MaxClockSkew))
		}
	}
	for _, st := range sessions {
		rec := &v.Records[st.index]
		if st.open.After(limit) {
			late(st.open, fmt.Sprintf("records[%d] (sequence %d) session open genTime", st.index, rec.Sequence))
		}
		if !st.close.IsZero() {
			if st.close.After(limit) {
				late(st.close, fmt.Sprintf("records[%d] (sequence %d) session close genTime", st.index, rec.Sequence))
			}
			if st.close.Before(st.open) {
				c.Details = append(c.Details, fmt.Sprintf("records[%d] (sequence %d) session closes at %s, before it opens at %s", st.index, rec.Sequence, vpec.FormatTime(st.close), vpec.FormatTime(st.open)))
			}
		}
	}
	if len(c.Details) > 0 {
		return fail(c, "TIME VIOLATION", "time rules violated: "+c.Details[0], false)
	}
	c.Status = Pass
	c.Message = fmt.Sprintf("times consistent (none after the timestamp %s + %s; gaps not before the run; sessions open before they close)", stamped, MaxClockSkew)
	if !opened.IsZero() {
		c.Message = fmt.Sprintf("times consistent (none after the timestamp %s + %s; no record before opened_at %s - %s; gaps not before the run; sessions open before they close)",
			stamped, MaxClockSkew, v.OpenedAt, MaxClockSkew)
	}
	return c
}

// msBounds are the time check's bounds as vpec.TimeLayout strings, for
// comparing record times written in that layout without reading them (a
// long VPEC holds one per record; such strings order as their times do). Such a time t, a whole number of milliseconds,
// is after a limit exactly when it is after the limit rounded down to the
// millisecond (notAfter), and before an opening bound exactly when it is
// before that bound rounded up (notBefore; "" when there is none). ok is
// false when a bound's year is outside 0001-9999: times are then read.
type msBounds struct {
	notAfter, notBefore string
	ok                  bool
}

func newMSBounds(limit, openedBound time.Time) msBounds {
	inRange := func(t time.Time) bool { y := t.UTC().Year(); return y >= 1 && y <= 9999 }
	if !inRange(limit) || !openedBound.IsZero() && !inRange(openedBound.Add(time.Millisecond)) {
		return msBounds{}
	}
	b := msBounds{notAfter: limit.UTC().Truncate(time.Millisecond).Format(vpec.TimeLayout), ok: true}
	if !openedBound.IsZero() {
		up := openedBound.UTC().Truncate(time.Millisecond)
		if up.Before(openedBound) {
			up = up.Add(time.Millisecond)
		}
		b.notBefore = up.Format(vpec.TimeLayout)
	}
	return b
}
