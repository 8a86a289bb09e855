package verify

import (
	"testing"

	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestCheckEvidence(t *testing.T) {
	// decomposition makes records 1-3 of check "pii": its pre-condition,
	// its operator_bound inference and its post-condition.
	decomposition := func(v *vpec.VPEC) {
		for i, part := range []string{stage.PartPre, stage.PartInference, stage.PartPost} {
			r := &v.Records[i]
			r.StageType, r.StagePart, r.CommitmentHash = stage.BoundCommittedInference, part, v.Records[0].CommitmentHash
			r.Check, r.ProofLevel = "pii:"+part, vpec.Mathematical
		}
		v.Records[1].Check, v.Records[1].ProofLevel = "pii", vpec.OperatorBound
		v.Records[1].BoundedInference = &vpec.BoundedInference{ProfileID: "p"}
	}
	cases := []struct {
		name string
		edit func(v *vpec.VPEC)
		want want
	}{
		{"execution only", nil, want{Pass, "", false, "every claimed proof level has its evidence"}},
		{"a decomposition", decomposition, want{Pass, "", false, "(2 mathematical record(s)"}},
		{"mathematical alone", func(v *vpec.VPEC) { v.Records[0].ProofLevel = vpec.Mathematical },
			want{Fail, "CLAIM WITHOUT EVIDENCE", false, "sequence 1 (check_0) claims mathematical without a proof, but is not a pre_conditions or post_conditions record"}},
		{"a condition without its part", func(v *vpec.VPEC) { decomposition(v); v.Records[0].Check = "pii" },
			want{Fail, "CLAIM WITHOUT EVIDENCE", false, "does not name a decomposition's part"}},
		{"a condition of another input", func(v *vpec.VPEC) { decomposition(v); v.Records[2].CommitmentHash = v.Records[3].CommitmentHash },
			want{Fail, "CLAIM WITHOUT EVIDENCE", false, "sequence 3 (pii:post_conditions) claims mathematical without a proof, but there is no operator_bound"}},
		{"operator_bound without its block", func(v *vpec.VPEC) { v.Records[3].ProofLevel = vpec.OperatorBound },
			want{Fail, "CLAIM WITHOUT EVIDENCE", false, "claims operator_bound without a bounded_inference block"}},
		{"witnessed without its review", func(v *vpec.VPEC) { v.Records[3].ProofLevel = vpec.Witnessed },
			want{Fail, "CLAIM WITHOUT EVIDENCE", false, "claims witnessed without a review block"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := built(t, 4)
			if c.edit != nil {
				c.edit(v)
			}
			c.want.check(t, CheckEvidence, checkEvidence(v))
		})
	}
}
