package zk_test

import (
	"encoding/base64"
	"testing"

	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/internal/gnarkcheck"
)

// TestAgreesWithGnark: zkverify's verifier (gnark-crypto alone) and
// gnark's give the same result on condition proofs (no commitments),
// passing and failing, and every mutation of them; only the honest
// proofs verify. (pkg/zk/head's test covers a proof with a commitment.)
func TestAgreesWithGnark(t *testing.T) {
	for _, kind := range []conditions.Kind{conditions.Threshold, conditions.Truncation, conditions.BelowThreshold} {
		k, err := zk.DevSetupCondition(kind)
		if err != nil {
			t.Fatal(err)
		}
		vk, err := zk.MarshalVerifyingKey(k.VK)
		if err != nil {
			t.Fatal(err)
		}
		for _, vb := range [][2]uint32{{3, 5}, {9, 5}} {
			p, err := zk.ProveCondition(k, vb[0], vb[1], conditions.Salt{31: 7})
			if err != nil {
				t.Fatal(err)
			}
			proof, _ := base64.StdEncoding.DecodeString(p.ZKProof.Proof)
			pub, err := zk.PublicWitness(&vpec.Record{CommitmentHash: p.CommitmentHash, CheckResult: p.CheckResult, ZKProof: p.ZKProof})
			if err != nil {
				t.Fatal(err)
			}
			cases := gnarkcheck.Cases(proof, pub)
			if n := gnarkcheck.Agree(t, vk, cases); n != 1 {
				t.Errorf("%s %v: %d of %d cases verified, want only the honest one", kind, vb, n, len(cases))
			}
		}
	}
}
