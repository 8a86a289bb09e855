package verify

import (
	"fmt"
	"testing"

	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestCheckGaps(t *testing.T) {
	seq := func(n int64) *int64 { return &n }
	hole := func(v *vpec.VPEC) { v.Records = append(v.Records[:1], v.Records[3:]...) } // sequences 2-3 missing
	cases := []struct {
		name    string
		records int
		edit    func(v *vpec.VPEC) // before the issuer declares the gaps
		forge   func(v *vpec.VPEC) // after
		want    want
		details int
	}{
		{"none", 4, nil, nil, want{Pass, "", false, "no governance gaps"}, 0},
		{"a hole, declared", 4, hole, nil, want{Warn, "", false, "1 governance gap(s): sequence_missing"}, 1},
		{"an empty run", 0, nil, nil, want{Warn, "", false, "1 governance gap(s): empty_run"}, 1},
		{"a hole, undeclared", 4, hole, func(v *vpec.VPEC) { v.Gaps = nil }, want{Pass, "", false, "no governance gaps"}, 0}, // the chain check's failure
		{"a hole declared shorter", 4, hole, func(v *vpec.VPEC) { *v.Gaps[0].SequenceEnd = 2 },
			want{Fail, "GAP MISMATCH", false, "gaps[0] declares sequences 2-2 missing, which is not a hole in the records"}, 1},
		{"a chain break where the chain follows", 4, nil, func(v *vpec.VPEC) {
			v.Gaps = append(v.Gaps, vpec.Gap{GapType: gap.ChainBreak, Severity: gap.Critical, Sequence: seq(2)})
		}, want{Fail, "GAP MISMATCH", false, "declares a chain break at sequence 2, where the chain hash follows"}, 1},
		{"a break declared twice", 4, hole, func(v *vpec.VPEC) { v.Gaps = append(v.Gaps, v.Gaps[0]) },
			want{Fail, "GAP MISMATCH", false, "gaps[1] declares the same break as an earlier gap"}, 1},
		{"an empty run with records", 2, nil, func(v *vpec.VPEC) { v.Gaps = append(v.Gaps, vpec.Gap{GapType: gap.EmptyRun}) },
			want{Fail, "GAP MISMATCH", false, "declares an empty run, but the VPEC holds 2 records"}, 1},
		{"no records, no empty_run", 0, nil, func(v *vpec.VPEC) { v.Gaps = nil },
			want{Fail, "GAP MISMATCH", false, "declares 0 empty_run gaps (exactly one required)"}, 1},
		{"other gaps are listed", 2, nil, func(v *vpec.VPEC) {
			for i := range 3 {
				v.Gaps = append(v.Gaps, vpec.Gap{GapType: gap.ModelProfileMissing, Severity: gap.Medium, Check: &v.Records[0].Check, Sequence: seq(int64(i + 1))})
			}
		}, want{Warn, "", false, "3 governance gap(s): model_profile_missing ×3"}, 3},
		{"at most MaxReportDetails detail lines", 1, nil, func(v *vpec.VPEC) {
			for i := range MaxReportDetails + 5 {
				v.Gaps = append(v.Gaps, vpec.Gap{GapType: fmt.Sprintf("custom_%d", i%2), Severity: gap.Low})
			}
		}, want{Warn, "", false, "105 governance gap(s): custom_0 ×53, custom_1 ×52"}, MaxReportDetails + 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := built(t, c.records)
			if c.edit != nil {
				c.edit(v)
				v, _ = finish(t, v)
			}
			if c.forge != nil {
				c.forge(v)
			}
			got := checkGaps(v, breaksOf(v, recordBytes(t, v)))
			c.want.check(t, CheckGaps, got)
			if len(got.Details) != c.details {
				t.Errorf("%d detail lines, want %d: %q", len(got.Details), c.details, got.Details)
			}
		})
	}
}
