package zk_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"testing"

	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// Condition proofs (docs/BENCHMARKS.md): prove and verify a threshold_check,
// against the baseline of one Ed25519 verification (what every VPEC costs).
func BenchmarkConditionProve(b *testing.B) {
	k := keys(b)
	salt, _ := conditions.NewSalt()
	for b.Loop() {
		if _, err := zk.ProveCondition(k, 731, 500, salt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConditionVerify(b *testing.B) { benchConditionVerify(b, keys(b), 731, 500) }

// benchConditionVerify times svc-verify's work for one condition proof of
// value against bound under k: rebuilding the public inputs from the
// record and the Groth16 verification.
func benchConditionVerify(b *testing.B, k *zk.Keys, value, bound uint32) {
	salt, _ := conditions.NewSalt()
	cp, err := zk.ProveCondition(k, value, bound, salt)
	if err != nil {
		b.Fatal(err)
	}
	vk, _ := zk.MarshalVerifyingKey(k.VK)
	pb, _ := base64.StdEncoding.DecodeString(cp.ZKProof.Proof)
	r := &vpec.Record{CommitmentHash: cp.CommitmentHash, CheckResult: cp.CheckResult, ZKProof: cp.ZKProof}
	for b.Loop() {
		w, err := zk.PublicWitness(r)
		if err != nil {
			b.Fatal(err)
		}
		if err := zk.Verify(vk, pb, w); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pb)), "proof-bytes")
	b.ReportMetric(float64(len(vk)), "vk-bytes")
}

func BenchmarkBaselineEd25519Verify(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	msg := make([]byte, 1024)
	sig := ed25519.Sign(priv, msg)
	for b.Loop() {
		if !ed25519.Verify(pub, msg, sig) {
			b.Fatal("bad")
		}
	}
}
