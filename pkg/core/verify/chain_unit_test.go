package verify

import (
	"testing"

	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestCheckChain(t *testing.T) {
	cases := []struct {
		name string
		edit func(v *vpec.VPEC) // after the issuer finished: what a forger changes
		want want
	}{
		{"intact", nil, want{Pass, "", false, "chain intact (4 records from genesis)"}},
		{"intact but declared broken", func(v *vpec.VPEC) { v.ChainIntact = false }, want{Fail, "CHAIN MISMATCH", false, "recomputes intact"}},
		{"a record changed", func(v *vpec.VPEC) { v.Records[2].Check = "other" }, want{Fail, "CHAIN BROKEN", false, "chain broken at sequence 3: chain_hash is sha256:"}},
		{"a record removed", func(v *vpec.VPEC) { v.Records = append(v.Records[:1], v.Records[2:]...) },
			want{Fail, "CHAIN BROKEN", false, "sequence 3 follows 1 (record 2 missing or out of order)"}},
		{"a hole declared as such", func(v *vpec.VPEC) {
			v.Records = append(v.Records[:1], v.Records[2:]...)
			from, to := int64(2), int64(2)
			v.Gaps = append(v.Gaps, vpec.Gap{GapType: gap.SequenceMissing, Sequence: &from, SequenceEnd: &to})
			v.ChainIntact = false
		}, want{Warn, "", false, "1 break(s), each declared as a governance gap"}},
		{"a hole declared as a chain break", func(v *vpec.VPEC) {
			v.Records = append(v.Records[:1], v.Records[2:]...)
			at := int64(3)
			v.Gaps = append(v.Gaps, vpec.Gap{GapType: gap.ChainBreak, Sequence: &at})
			v.ChainIntact = false
		}, want{Fail, "CHAIN BROKEN", false, "chain broken at sequence 3"}},
		{"a declared hole, but chain_intact true", func(v *vpec.VPEC) {
			v.Records = append(v.Records[:1], v.Records[2:]...)
			from, to := int64(2), int64(2)
			v.Gaps = append(v.Gaps, vpec.Gap{GapType: gap.SequenceMissing, Sequence: &from, SequenceEnd: &to})
		}, want{Fail, "CHAIN BROKEN", false, "chain broken at sequence 3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := built(t, 4)
			if c.edit != nil {
				c.edit(v)
			}
			jcs := recordBytes(t, v)
			c.want.check(t, CheckChain, checkChain(v, breaksOf(v, jcs)))
		})
	}
}
