package verify

import (
	"testing"

	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestCheckSummary(t *testing.T) {
	cases := []struct {
		name string
		edit func(v *vpec.VPEC)
		want want
	}{
		{"consistent", nil, want{Pass, "", false, "summary consistent (3 checks, 3 passed, 0 failed, sandbox environment)"}},
		{"floor raised", func(v *vpec.VPEC) { v.ProofLevelFloor = vpec.Mathematical },
			want{Fail, "SUMMARY MISMATCH", false, "proof_level_floor is mathematical, the records give execution"}},
		{"a failure hidden", func(v *vpec.VPEC) { v.Records[1].CheckResult = vpec.ResultFail },
			want{Fail, "SUMMARY MISMATCH", false, "checks_passed is 3, the records give 2"}},
		{"surface inflated", func(v *vpec.VPEC) { v.ProvableSurface = 1 }, want{Fail, "SUMMARY MISMATCH", false, "provable_surface is 1, the records give 0"}},
		{"breakdown edited", func(v *vpec.VPEC) { v.ProofLevelBreakdown = map[string]int64{"mathematical": 3} },
			want{Fail, "SUMMARY MISMATCH", false, "proof_level_breakdown is {mathematical=3}, the records give {execution=3}"}},
		{"clean with gaps", func(v *vpec.VPEC) { v.Gaps = append(v.Gaps, vpec.Gap{GapType: "custom"}) },
			want{Fail, "SUMMARY MISMATCH", false, "is_clean is true, the records give false"}},
		{"a production key in sandbox", func(v *vpec.VPEC) { v.APIKeyID = "pk_live_0123456789ab" },
			want{Fail, "SUMMARY MISMATCH", false, "environment is sandbox, but api_key_id pk_live_0123456789ab selects production"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := built(t, 3)
			if c.edit != nil {
				c.edit(v)
			}
			c.want.check(t, CheckSummary, checkSummary(v, breaksOf(v, recordBytes(t, v))))
		})
	}
}
