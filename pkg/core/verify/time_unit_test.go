package verify

import (
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
