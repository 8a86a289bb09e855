package verify

import (
	"reflect"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestCheckTime(t *testing.T) {
	stamped := time.Date(2026, 11, 22, 0, 10, 0, 0, time.UTC)
	at := func(d time.Duration) string { return vpec.FormatTime(stamped.Add(d)) }
	cases := []struct {
		name     string
		edit     func(v *vpec.VPEC)
		genTime  time.Time
		sessions []sessionTimes
		want     want
	}{
		{"no verified timestamp", nil, time.Time{}, nil, want{NotApplicable, "", false, "no verified timestamp"}},
		{"consistent", nil, stamped, nil, want{Pass, "", false, "times consistent (none after the timestamp 2026-11-22T00:10:00.000Z + 5m0s;"}},
		{"with opened_at", func(v *vpec.VPEC) { v.OpenedAt = at(-time.Hour) }, stamped, nil,
			want{Pass, "", false, "no record before opened_at 2026-11-21T23:10:00.000Z - 5m0s"}},
		{"a record just within the skew", func(v *vpec.VPEC) { v.Records[1].RecordedAt = at(MaxClockSkew) }, stamped, nil, want{Pass, "", false, "times consistent"}},
		{"a record after the timestamp", func(v *vpec.VPEC) { v.Records[1].RecordedAt = at(MaxClockSkew + time.Millisecond) }, stamped, nil,
			want{Fail, "TIME VIOLATION", false, "records[1] (sequence 2).recorded_at 2026-11-22T00:15:00.001Z is after the VPEC timestamp"}},
		{"opened_at after the timestamp", func(v *vpec.VPEC) { v.OpenedAt = at(time.Hour) }, stamped, nil,
			want{Fail, "TIME VIOLATION", false, "opened_at 2026-11-22T01:10:00.000Z is after the VPEC timestamp"}},
		{"a record before the run opened", func(v *vpec.VPEC) { v.OpenedAt = at(MaxClockSkew) }, stamped, nil,
			want{Fail, "TIME VIOLATION", false, "is before the run was opened"}},
		{"a gap dated before the run", func(v *vpec.VPEC) { v.Gaps = append(v.Gaps, vpec.Gap{Timestamp: "1970-01-01T00:00:00.000Z"}) }, stamped, nil,
			want{Fail, "TIME VIOLATION", false, "gaps[0].timestamp 1970-01-01T00:00:00.000Z is before the run"}},
		{"a session opened after the timestamp", nil, stamped, []sessionTimes{{index: 1, open: stamped.Add(time.Hour)}},
			want{Fail, "TIME VIOLATION", false, "records[1] (sequence 2) session open genTime"}},
		{"a session closed before it opened", nil, stamped, []sessionTimes{{index: 0, open: stamped, close: stamped.Add(-time.Second)}},
			want{Fail, "TIME VIOLATION", false, "session closes at 2026-11-22T00:09:59.000Z, before it opens at 2026-11-22T00:10:00.000Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := built(t, 3)
			for i := range v.Records {
				v.Records[i].RecordedAt = at(-time.Minute)
			}
			if c.edit != nil {
				c.edit(v)
			}
			c.want.check(t, CheckTime, checkTime(v, c.genTime, c.sessions))
		})
	}
}

// TestCheckTimeAsWritten: record times compared as written (the service's
// millisecond form, msBounds) give what reading each one gives: the same
// report, detail for detail, as the same VPEC with every record time
// spelt with a fourth fraction digit (same instant, read with ParseTime),
// at every millisecond around the limit and the opening bound, with
// timestamps and openings not on a millisecond, and with bounds past year
// 9999 (then every time is read).
func TestCheckTimeAsWritten(t *testing.T) {
	base := time.Date(2026, 11, 22, 0, 10, 0, 0, time.UTC)
	fourth := func(s string) string { return s[:len(s)-1] + "0Z" } // .123Z -> .1230Z
	for _, genTime := range []time.Time{base, base.Add(123456 * time.Nanosecond), base.Add(999_999 * time.Nanosecond), time.Date(9999, 12, 31, 23, 58, 0, 500, time.UTC)} {
		limit := genTime.Add(MaxClockSkew)
		for _, opened := range []time.Time{{}, genTime.Add(-time.Hour), genTime.Add(-time.Hour + 400*time.Microsecond), genTime.Add(-time.Hour + time.Millisecond)} {
			v, _ := built(t, 12)
			if !opened.IsZero() {
				v.OpenedAt = opened.Format(time.RFC3339Nano)
			}
			around := []time.Time{limit.Add(-time.Millisecond), limit, limit.Add(time.Millisecond), limit.Add(2 * time.Millisecond)}
			if !opened.IsZero() {
				b := opened.Add(-MaxClockSkew)
				around = append(around, b.Add(-time.Millisecond), b, b.Add(time.Millisecond), b.Add(2*time.Millisecond))
			}
			around = append(around, genTime.Add(-24*time.Hour), genTime)
			for i := range v.Records {
				v.Records[i].RecordedAt = vpec.FormatTime(around[i%len(around)].Truncate(time.Millisecond))
			}
			v.Gaps = []vpec.Gap{{Timestamp: vpec.FormatTime(genTime.Add(-48 * time.Hour))}}
			got := checkTime(v, genTime, nil)
			for i := range v.Records {
				v.Records[i].RecordedAt = fourth(v.Records[i].RecordedAt)
			}
			want := checkTime(v, genTime, nil)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("genTime %s, opened %s:\nas written %+v\nread       %+v", genTime.Format(time.RFC3339Nano), v.OpenedAt, got, want)
			}
			if genTime.Year() < 9999 && len(got.Details) == 0 {
				t.Fatalf("genTime %s: no detail; the times around the bounds should break them", genTime.Format(time.RFC3339Nano))
			}
		}
	}
}
