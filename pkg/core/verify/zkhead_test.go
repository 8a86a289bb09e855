package verify_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// headKeys are dev-setup keys of two small generated heads (the second a
// different model of the same shape).
var headKeys = sync.OnceValues(func() ([2]*zk.Keys, error) {
	var out [2]*zk.Keys
	for i := range out {
		onnx, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{32, 8, 3}, Seed: int64(11 + i)})
		if err != nil {
			return out, err
		}
		if out[i], err = zk.DevSetup(zkverify.CircuitMLPHead, onnx); err != nil {
			return out, err
		}
	}
	return out, nil
})

func headRecord(t *testing.T, k *zk.Keys, x []float32) vpec.Record {
	t.Helper()
	hp, err := zk.ProveHead(k, x)
	if err != nil {
		t.Fatal(err)
	}
	return vpec.Record{RecordID: names.NewID("rec_"), Check: "toxicity_head", ManifestID: "sha256:" + strings.Repeat("cd", 32),
		CheckResult: vpec.ResultPass, ProofLevel: vpec.VerifiableInference, CommitmentAlgorithm: "poseidon2", CommitmentHash: hp.CommitmentHash,
		ONNXModelHash: k.ModelHash, Visibility: vpec.Opaque, RecordedAt: "2026-11-22T00:00:00.000Z", ZKProof: hp.ZKProof}
}

func vector(n int, seed float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = seed * float32(i%7-3) / 3
	}
	return x
}

// A VPEC with verifiable_inference (head) and mathematical (condition)
// records verifies VALID with "ZK proofs valid"; a proof about another
// input, another model or another class fails, naming the check.
func TestZKHeadProofs(t *testing.T) {
	f := newZKFixture(t)
	heads, err := headKeys()
	if err != nil {
		t.Fatal(err)
	}
	entryA := signedEntryFor(t, heads[0], f.signer)
	entryB := signedEntryFor(t, heads[1], f.signer)
	all := f.verifier(entryA, entryB, f.entries[conditions.Threshold])

	doc := f.issueRecs(t, headRecord(t, heads[0], vector(32, 1)), f.condRecord(t, conditions.Threshold, 700, 500))
	rep, err := verify.Verify(doc, verify.Options{Trust: f.trust, Proofs: all})
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, dump(rep))
	}
	if c := rep.Check(verify.CheckZK); !strings.HasPrefix(c.Message, "ZK proofs valid (2 proofs, circuit ids ") {
		t.Fatalf("zk check: %+v", c)
	}
	if rep.ProofLevelFloor != vpec.VerifiableInference {
		t.Fatalf("floor %s", rep.ProofLevelFloor)
	}

	cases := map[string]struct {
		rec  func() vpec.Record
		want string
	}{
		"another input": {func() vpec.Record {
			r := headRecord(t, heads[0], vector(32, 1))
			r.CommitmentHash = headRecord(t, heads[0], vector(32, -2)).CommitmentHash
			return r
		}, "groth16 verify"},
		"flipped class": {func() vpec.Record {
			r := headRecord(t, heads[0], vector(32, 1))
			c := (*r.ZKProof.Class + 1) % 3
			r.ZKProof.Class = &c
			return r
		}, "groth16 verify"},
		"another model": {func() vpec.Record {
			r := headRecord(t, heads[0], vector(32, 1))
			r.ONNXModelHash = heads[1].ModelHash
			return r
		}, "model mismatch"},
		"another model's key": {func() vpec.Record {
			r := headRecord(t, heads[1], vector(32, 1))
			r.ZKProof.CircuitID = heads[0].CircuitID
			r.ONNXModelHash = heads[0].ModelHash
			return r
		}, "groth16 verify"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			doc := f.issueRecs(t, tc.rec())
			rep, err := verify.Verify(doc, verify.Options{Trust: f.trust, Proofs: all})
			c := rep.Check(verify.CheckZK)
			if err == nil || c.Code != "ZK PROOF INVALID" || !strings.Contains(c.Message, tc.want) {
				t.Fatalf("err %v, zk check %+v, want ZK PROOF INVALID naming %q", err, c, tc.want)
			}
		})
	}
}

func signedEntryFor(t *testing.T, k *zk.Keys, signer *signing.Signer) []byte {
	t.Helper()
	e, err := zk.NewEntry(k, k.ModelHash, zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("transcript")), Contributors: []string{"svc-operator", "acme-audit"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := zk.Sign(e, signer, "svc.example/trust"); err != nil {
		t.Fatal(err)
	}
	doc, err := document.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
