package zk_test

import (
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

var threshold = sync.OnceValues(func() (*zk.Keys, error) { return zk.DevSetup(zkverify.CircuitThreshold, nil) })

func keys(t testing.TB) *zk.Keys {
	t.Helper()
	k, err := threshold()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The condition circuits' size (docs/PROOFS.md quotes it).
func TestConditionConstraints(t *testing.T) {
	for _, k := range conditions.Kinds() {
		ccs, err := conditions.Compile(k)
		if err != nil {
			t.Fatal(err)
		}
		if n := ccs.GetNbConstraints(); n < 100 || n > 1000 {
			t.Errorf("%s: %d constraints", k, n)
		}
		t.Logf("%s: %d constraints, %d public inputs", k, ccs.GetNbConstraints(), ccs.GetNbPublicVariables()-1)
	}
}

// A prover cannot claim the other outcome: the Passed bit is bound.
func TestConditionOutcomes(t *testing.T) {
	k := keys(t)
	salt, _ := conditions.NewSalt()
	for _, tc := range []struct {
		value, bound uint32
		want         vpec.CheckResult
	}{{500, 500, vpec.ResultPass}, {499, 500, vpec.ResultFail}, {0, 0, vpec.ResultPass}, {1<<32 - 1, 0, vpec.ResultPass}, {0, 1<<32 - 1, vpec.ResultFail}} {
		cp, err := zk.ProveCondition(k, tc.value, tc.bound, salt)
		if err != nil {
			t.Fatal(err)
		}
		if cp.CheckResult != tc.want {
			t.Errorf("%d >= %d: %s", tc.value, tc.bound, cp.CheckResult)
		}
		for _, res := range []vpec.CheckResult{vpec.ResultPass, vpec.ResultFail} {
			r := &vpec.Record{CommitmentHash: cp.CommitmentHash, CheckResult: res, ZKProof: cp.ZKProof}
			w, err := zk.PublicWitness(r)
			if err != nil {
				t.Fatal(err)
			}
			vk, _ := zk.MarshalVerifyingKey(k.VK)
			pb, _ := base64.StdEncoding.DecodeString(cp.ZKProof.Proof)
			err = zk.Verify(vk, pb, w)
			if (res == tc.want) != (err == nil) {
				t.Errorf("%d vs %d claimed %s: %v", tc.value, tc.bound, res, err)
			}
			if err != nil && !errors.Is(err, zk.ErrProofInvalid) {
				t.Errorf("error %v does not match ErrProofInvalid", err)
			}
		}
	}
}

// Keys for another circuit or another model are refused on load.
func TestLoadKeysChecksTheCircuit(t *testing.T) {
	k := keys(t)
	vk, _ := zk.MarshalVerifyingKey(k.VK)
	pk, err := zk.MarshalProvingKey(k.PK)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zk.LoadKeys(zkverify.CircuitThreshold, nil, vk, pk); err != nil {
		t.Fatalf("own keys: %v", err)
	}
	if _, err := zk.LoadKeys(zkverify.CircuitTruncation, nil, vk, pk); !errors.Is(err, zk.ErrKeys) {
		t.Fatalf("threshold keys as truncation keys: %v", err)
	}
	other, err := zk.DevSetup(zkverify.CircuitThreshold, nil)
	if err != nil {
		t.Fatal(err)
	}
	ovk, _ := zk.MarshalVerifyingKey(other.VK)
	if _, err := zk.LoadKeys(zkverify.CircuitThreshold, nil, ovk, pk); !errors.Is(err, zk.ErrKeys) {
		t.Fatalf("mismatched pk/vk: %v", err)
	}
	onnx, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{16, 4, 2}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zk.LoadKeys(zkverify.CircuitMLPHead, onnx, vk, pk); err == nil {
		t.Fatal("condition keys loaded as a head's")
	}
	e, err := zk.NewEntry(k, "", zk.Ceremony{TranscriptHash: zk.HashBytes(nil), Contributors: []string{"a"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zk.LoadEntryKeys(e, nil, append(pk, 0)); !errors.Is(err, zk.ErrKeys) {
		t.Fatalf("proving key not the entry's: %v", err)
	}
}

// Entries: signed, strictly parsed, any change breaks the signature; the
// circuit id must be the key's hash.
func TestEntrySignature(t *testing.T) {
	k := keys(t)
	_, priv, _ := signing.GenerateKey()
	signer, _ := signing.NewSigner(priv)
	trust := signing.NewBundle()
	trust.AddKey(signer.PublicKey())
	e, err := zk.NewEntry(k, "", zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("t")), Contributors: []string{"alice", "bob"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := zk.Sign(e, signer, "x"); err != nil {
		t.Fatal(err)
	}
	doc, _ := document.Marshal(e)
	if _, err := zk.VerifyEntry(doc, trust); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(doc), `"bob"`, `"mallory"`, 1)
	if _, err := zk.VerifyEntry([]byte(bad), trust); !errors.Is(err, signing.ErrBadSignature) {
		t.Fatalf("changed contributor: %v", err)
	}
	e2 := *e
	e2.CircuitID = "sha256:" + strings.Repeat("0", 64)
	if err := e2.Validate(); !errors.Is(err, zk.ErrEntryInvalid) || !strings.Contains(err.Error(), "hashes to") {
		t.Fatalf("circuit id not the key's hash: %v", err)
	}
	e3 := *e
	e3.ONNXModelHash = "sha256:" + strings.Repeat("1", 64)
	if err := e3.Validate(); !errors.Is(err, zk.ErrEntryInvalid) {
		t.Fatalf("condition entry with a model: %v", err)
	}
}

func FuzzParseEntry(f *testing.F) {
	k := keys(f)
	e, _ := zk.NewEntry(k, "", zk.Ceremony{TranscriptHash: zk.HashBytes(nil), Contributors: []string{"a"}}, time.Now())
	doc, _ := document.Marshal(e)
	f.Add(doc)
	f.Add([]byte(`{"schema":"svc.circuit/v1"}`))
	for _, p := range []string{"mlp-head-16-8-2.json", "threshold-check.json"} {
		if b, err := os.ReadFile("../../testdata/vectors/circuit/" + p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := zk.ParseEntry(b)
		if err == nil {
			if verr := e.Validate(); verr != nil {
				t.Fatalf("parsed an invalid entry: %v", verr)
			}
		}
	})
}

func FuzzParseVerifyingKey(f *testing.F) {
	k := keys(f)
	vk, _ := zk.MarshalVerifyingKey(k.VK)
	f.Add(vk)
	f.Add(vk[:len(vk)-1])
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := zk.ParseVerifyingKey(b); err != nil && !errors.Is(err, zk.ErrEncoding) {
			t.Fatalf("error %v does not match ErrEncoding", err)
		}
	})
}

func FuzzParseProof(f *testing.F) {
	k := keys(f)
	salt, _ := conditions.NewSalt()
	cp, err := zk.ProveCondition(k, 3, 2, salt)
	if err != nil {
		f.Fatal(err)
	}
	pb, _ := base64.StdEncoding.DecodeString(cp.ZKProof.Proof)
	f.Add(pb)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := zk.ParseProof(b); err != nil && !errors.Is(err, zk.ErrEncoding) {
			t.Fatalf("error %v does not match ErrEncoding", err)
		}
	})
}

func FuzzParseVector(f *testing.F) {
	f.Add([]byte(`[0.5, -1, 2e3]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[1e39]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := zk.ParseVector(b)
		if err != nil && !errors.Is(err, zk.ErrVector) {
			t.Fatalf("error %v does not match ErrVector", err)
		}
		if err == nil && len(v) == 0 {
			t.Fatal("empty vector accepted")
		}
	})
}

// FuzzRecordProof feeds untrusted zk_proof blocks (and commitment hashes
// and results) through the record rules and the verifier: never a panic,
// and nothing but the honest record verifies.
func FuzzRecordProof(f *testing.F) {
	k := keys(f)
	salt, _ := conditions.NewSalt()
	cp, err := zk.ProveCondition(k, 731, 500, salt)
	if err != nil {
		f.Fatal(err)
	}
	honest, _ := document.Marshal(cp.ZKProof)
	_, priv, _ := signing.GenerateKey()
	signer, _ := signing.NewSigner(priv)
	trust := signing.NewBundle()
	trust.AddKey(signer.PublicKey())
	e, _ := zk.NewEntry(k, "", zk.Ceremony{TranscriptHash: zk.HashBytes(nil), Contributors: []string{"a"}}, time.Now())
	if err := zk.Sign(e, signer, "x"); err != nil {
		f.Fatal(err)
	}
	entry, _ := document.Marshal(e)
	f.Add(honest, cp.CommitmentHash, "pass")
	f.Add(honest, cp.CommitmentHash, "fail")
	f.Add([]byte(`{"system":"groth16-bn254","circuit":"mlp_head","circuit_id":"`+k.CircuitID+`","proof":"AAAA","class":1,"logits":[1,2]}`), cp.CommitmentHash, "pass")
	f.Fuzz(func(t *testing.T, block []byte, cm, result string) {
		var z vpec.ZKProof
		if _, err := document.Parse(block, &z); err != nil {
			return
		}
		r := vpec.Record{RecordID: "rec_1", Sequence: 1, Check: "c", ManifestID: "m", CheckResult: vpec.CheckResult(result),
			ProofLevel: vpec.Mathematical, CommitmentAlgorithm: "poseidon2", CommitmentHash: cm, Visibility: vpec.Opaque,
			RecordedAt: "2026-11-24T00:00:00Z", ChainHash: "sha256:" + strings.Repeat("0", 64), ZKProof: &z}
		if z.Circuit == zkverify.CircuitMLPHead {
			r.ProofLevel, r.ONNXModelHash = vpec.VerifiableInference, "sha256:"+strings.Repeat("1", 64)
		}
		if r.Validate() != nil {
			return
		}
		set := zk.NewSet()
		set.Add(entry)
		v := &zk.Verifier{Trust: trust, Circuits: set}
		_, err := v.VerifyProof("run_1", &r)
		isHonest := string(block) == string(honest) && cm == cp.CommitmentHash && result == "pass"
		if err == nil && !isHonest {
			// Only an encoding of the same statement may verify.
			w1, _ := zk.PublicWitness(&r)
			w0, _ := zk.PublicWitness(&vpec.Record{CommitmentHash: cp.CommitmentHash, CheckResult: vpec.ResultPass, ZKProof: cp.ZKProof})
			b1, _ := w1.MarshalBinary()
			b0, _ := w0.MarshalBinary()
			if string(b1) != string(b0) || z.Proof != cp.ZKProof.Proof {
				t.Fatalf("a different statement verified: %s %s %s", block, cm, result)
			}
		}
	})
}
