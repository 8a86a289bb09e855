package verify

import (
	"testing"

	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestCheckZKProofs covers what the check decides without a circuit
// entry; zk_test.go verifies real proofs with pkg/zk/zkverify's verifier
// (which imports this package, so only an external test can use it).
func TestCheckZKProofs(t *testing.T) {
	proved := func(v *vpec.VPEC) {
		v.Records[0].ProofLevel = vpec.Mathematical
		v.Records[0].ZKProof = &vpec.ZKProof{Circuit: "threshold_check"}
	}
	cases := []struct {
		name   string
		edit   func(v *vpec.VPEC)
		advice string
		want   want
	}{
		{"no proofs", nil, "", want{NotApplicable, "", false, "ZK proofs: none present"}},
		{"verifiable_inference without a proof", func(v *vpec.VPEC) { v.Records[1].ProofLevel = vpec.VerifiableInference }, "",
			want{Fail, "ZK PROOF UNVERIFIABLE", false, "1 record(s) claim verifiable_inference without a zero-knowledge proof"}},
		{"a proof, no circuit entries", proved, "", want{Fail, "CIRCUIT NOT AVAILABLE", true, "sequence 1 (check_0): no circuit entries given; " + DefaultCircuitAdvice}},
		{"the surface's own advice", proved, "pass --circuit", want{Fail, "CIRCUIT NOT AVAILABLE", true, "no circuit entries given; pass --circuit"}},
		{"a listed condition that is not there", func(v *vpec.VPEC) {
			r := &v.Records[1]
			r.StageType, r.StagePart = stage.OpenSourceML, stage.PartInference
			r.Details = map[string]any{stage.DetailConditionCommitments: map[string]any{"truncation_check": "poseidon2:00"}}
		}, "", want{Fail, "ZK PROOF INVALID", false, "condition not linked: details.condition_commitments.truncation_check poseidon2:00 is carried by 0 proved truncation_check records"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := built(t, 3)
			if c.edit != nil {
				c.edit(v)
			}
			c.want.check(t, CheckZK, checkZKProofs(v, nil, c.advice))
		})
	}
}
