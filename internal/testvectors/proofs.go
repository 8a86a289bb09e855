package testvectors

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	mrand "math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// The proof vectors (docs/FORMATS.md "zk_proof block", docs/PROOFS.md).
// The head's weights, its input vector and the condition's value and salt
// are fixed. The Groth16 keys come from a single-party dev setup and the
// proofs are randomised; gnark v0.16.0 takes no seed for either (its
// groth16.Setup toxic waste and the prover's r, s are fr.Element.SetRandom,
// which reads crypto/rand.Reader), so while it sets up and proves, the
// generator swaps crypto/rand.Reader for a ChaCha8 stream with a fixed seed
// (withSeededRand): the TEST-ONLY keys, circuit ids and proofs come out the
// same on every regeneration. Whoever knows the seed can forge proofs for
// these keys, which is what a dev setup's keys are anyway.

// Files of the signed circuit entries, relative to the vectors directory.
const (
	HeadCircuitFile      = "circuit/mlp-head-16-8-2.json"
	ThresholdCircuitFile = "circuit/threshold-check.json"
	// OtherKeyCircuitFile is the threshold entry signed by the key outside
	// the trust bundle.
	OtherKeyCircuitFile = "circuit/invalid-threshold-other-key.json"
)

// headDims are the tiny head's layer widths: a 16-value embedding, one
// hidden layer of 8, 2 classes.
var headDims = []int{16, 8, 2}

// headSeed selects the head's weights (pkg/ml/modelgen).
const headSeed = 1604

// condition: a quantised score of 731 against the threshold 500, passed.
const (
	condValue     = 731
	condThreshold = 500
)

// condSalt is the condition commitment's salt: the bytes 0, 1, …, 31 (a
// canonical BN254 scalar, since its top byte is 0).
func condSalt() conditions.Salt {
	var s conditions.Salt
	for i := range s {
		s[i] = byte(i)
	}
	return s
}

// embedding is the head's fixed input vector.
func embedding(scale float32) []float32 {
	x := make([]float32, headDims[0])
	for i := range x {
		x[i] = scale * float32(i%5-2) / 2
	}
	return x
}

// proofKit holds the keys and signed entries of the proof vectors.
type proofKit struct {
	head, threshold *zk.Keys
}

const devOperator = "svc TEST-ONLY operator"

// setupProofs makes the dev-setup keys, signs their circuit entries with
// the service key (and the threshold entry once more with the other key)
// and writes the entries.
func (g *gen) setupProofs() (*proofKit, error) {
	onnx, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: headDims, Seed: headSeed})
	if err != nil {
		return nil, err
	}
	kit := &proofKit{}
	for _, c := range []struct {
		circuit string
		model   []byte
		keys    **zk.Keys
		file    string
	}{
		{zkverify.CircuitMLPHead, onnx, &kit.head, HeadCircuitFile},
		{zkverify.CircuitThreshold, nil, &kit.threshold, ThresholdCircuitFile},
	} {
		e, k, err := zk.PrepareEntry(zk.PublishInput{Circuit: c.circuit, Model: c.model, DevSetup: true, Operator: devOperator}, g.clk.now())
		if err != nil {
			return nil, fmt.Errorf("circuit vector %s: %w", c.circuit, err)
		}
		*c.keys = k
		if err := g.writeEntry(c.file, e, g.service, "svc.test/.well-known/svc/trust-bundle.pem"); err != nil {
			return nil, err
		}
		if c.circuit == zkverify.CircuitThreshold {
			o := *e
			if err := g.writeEntry(OtherKeyCircuitFile, &o, g.other, "attacker.example/key.pem"); err != nil {
				return nil, err
			}
		}
	}
	return kit, nil
}

func (g *gen) writeEntry(rel string, e *zk.Entry, s *signing.Signer, signedBy string) error {
	if err := zk.Sign(e, s, signedBy); err != nil {
		return err
	}
	b, err := document.MarshalIndent(e)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(g.dir, rel), b)
}

// headRecord is a verifiable_inference record of the head on x.
func (g *gen) headRecord(k *zk.Keys, seq int64, x []float32) (vpec.Record, error) {
	hp, err := zk.ProveHead(k, x)
	if err != nil {
		return vpec.Record{}, fmt.Errorf("prove head vector: %w", err)
	}
	r := g.record(seq, "toxicity_head", "", vpec.ResultPass, vpec.VerifiableInference)
	if hp.Class == 1 {
		r.CheckResult = vpec.ResultFail
	}
	r.CommitmentAlgorithm, r.CommitmentHash = "poseidon2", hp.CommitmentHash
	r.ONNXModelHash = k.ModelHash
	r.ZKProof = hp.ZKProof
	return r, nil
}

// proofRecords: an opaque execution record, the head's proved inference,
// and the proved threshold condition on its score.
func (g *gen) proofRecords(kit *proofKit) ([]vpec.Record, error) {
	h, err := g.headRecord(kit.head, 2, embedding(1))
	if err != nil {
		return nil, err
	}
	cp, err := zk.ProveCondition(kit.threshold, condValue, condThreshold, condSalt())
	if err != nil {
		return nil, fmt.Errorf("prove threshold vector: %w", err)
	}
	t := g.record(3, "toxicity_threshold", "", cp.CheckResult, vpec.Mathematical)
	t.CommitmentAlgorithm, t.CommitmentHash = "poseidon2", cp.CommitmentHash
	t.StagePart = stage.PartPost
	t.ZKProof = cp.ZKProof
	return []vpec.Record{
		g.record(1, "pii_detection", "Patient John Doe, DOB 1970-01-01, claim #4411", vpec.ResultPass, vpec.Execution),
		h, t,
	}, nil
}

const proofsRun = "run_00000000-0000-4000-8000-00000000900f"

func (g *gen) proofs() error {
	// Only the setup and the proving run on the seeded stream; sealing
	// (the TSA's ECDSA signatures) runs on crypto/rand as always.
	var (
		kit                                *proofKit
		valid, flipped, otherInput, signer []vpec.Record
		another                            vpec.Record
		err                                error
	)
	withSeededRand(func() {
		if kit, err = g.setupProofs(); err != nil {
			return
		}
		for _, recs := range []*[]vpec.Record{&valid, &flipped, &otherInput, &signer} {
			if *recs, err = g.proofRecords(kit); err != nil {
				return
			}
		}
		another, err = g.headRecord(kit.head, 2, embedding(-3))
	})
	if err != nil {
		return err
	}
	both := []string{HeadCircuitFile, ThresholdCircuitFile}
	v, err := g.newVPEC(proofsRun, valid, nil)
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/proofs.json", v); err != nil {
		return err
	}
	g.add(Vector{Name: "proofs", Kind: "vpec", Valid: true, Exit: 0, File: "vpec/valid/proofs.json", Circuits: both,
		Description: fmt.Sprintf("a verifiable_inference record (a %d-%d-%d MLP head's Groth16 proof: class and logits) and a mathematical threshold_check record (a committed score of %d proved to meet the threshold %d), with their signed circuit entries (TEST-ONLY dev setup from a fixed seed: keys, circuit ids and proofs are the same on every regeneration)", headDims[0], headDims[1], headDims[2], condValue, condThreshold)})
	if err := g.circuitMissing(kit.head.ModelHash); err != nil {
		return err
	}
	if err := g.proofSchema(valid); err != nil {
		return err
	}

	// Invalid: each re-chained and sealed by the genuine key, so only the
	// proof fails.
	c := 1 - *flipped[1].ZKProof.Class
	flipped[1].ZKProof.Class = &c
	if err := g.proofVector("run_00000000-0000-4000-8000-0000000090e1", "proof-flipped-class", "the head record's zk_proof.class flipped to the other class, re-chained and re-signed: the proof does not verify with the rebuilt public inputs", flipped, both); err != nil {
		return err
	}
	otherInput[1].CommitmentHash = another.CommitmentHash
	if err := g.proofVector("run_00000000-0000-4000-8000-0000000090e2", "proof-other-input", "the head record's commitment_hash replaced by another input's commitment, re-chained and re-signed: the proof is about the other input", otherInput, both); err != nil {
		return err
	}
	return g.proofVector("run_00000000-0000-4000-8000-0000000090e3", "circuit-untrusted-signer", "a valid proof VPEC checked with a threshold_check circuit entry signed by a key outside the trust bundle", signer, []string{HeadCircuitFile, OtherKeyCircuitFile})
}

// withSeededRand runs f with crypto/rand.Reader replaced by a ChaCha8
// stream of a fixed seed, and restores it.
func withSeededRand(f func()) {
	saved := rand.Reader
	rand.Reader = mrand.NewChaCha8([32]byte([]byte("svc TEST-ONLY zk vectors seed v1")))
	defer func() { rand.Reader = saved }()
	f()
}

func (g *gen) proofVector(runID, name, desc string, recs []vpec.Record, circuits []string) error {
	v, err := g.newVPEC(runID, recs, nil)
	if err != nil {
		return err
	}
	if err := g.badVPEC(name, desc, []string{"zk_proofs"}, "INVALID — ZK PROOF INVALID", v); err != nil {
		return err
	}
	g.vectors[len(g.vectors)-1].Circuits = circuits
	return nil
}

// proofSchema writes the vectors whose zk_proof.proof is not the canonical
// base64 of 1 to 1024 bytes, and a circuit_missing gap at another severity
// than its fixed one: schema errors, for every verifier (the by-hand
// recipe once took both, stopping at step 8 unverified or passing).
func (g *gen) proofSchema(valid []vpec.Record) error {
	for _, c := range []struct {
		name, runID, desc string
		proof             func(string) string
	}{
		{"proof-not-canonical-base64", "run_00000000-0000-4000-8000-0000000090e4", "the head record's zk_proof.proof with non-zero pad bits (a second spelling of the same bytes), re-chained and re-signed",
			func(p string) string {
				i := strings.IndexByte(p, '=') - 1
				const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
				return p[:i] + string(alphabet[strings.IndexByte(alphabet, p[i])|1]) + p[i+1:]
			}},
		{"proof-too-long", "run_00000000-0000-4000-8000-0000000090e5", "the head record's zk_proof.proof is 1025 bytes (vpec.MaxZKProofBytes is 1024), re-chained and re-signed",
			func(string) string { return base64.StdEncoding.EncodeToString(make([]byte, vpec.MaxZKProofBytes+1)) }},
	} {
		recs := slices.Clone(valid)
		z := *recs[1].ZKProof
		z.Proof = c.proof(z.Proof)
		recs[1].ZKProof = &z
		v, err := g.newVPEC(c.runID, recs, nil)
		if err != nil {
			return err
		}
		if err := g.badVPEC(c.name, c.desc, []string{"schema"}, "INVALID — SCHEMA ERROR", v); err != nil {
			return err
		}
	}
	v, err := g.circuitMissingVPEC("run_00000000-0000-4000-8000-0000000c0c02", valid[1].ONNXModelHash, gap.High)
	if err != nil {
		return err
	}
	return g.badVPEC("circuit-missing-wrong-severity", "a circuit_missing gap at severity High (its fixed severity is Medium)", []string{"schema"}, "INVALID — SCHEMA ERROR", v)
}

// circuitMissing writes the VPEC a service issues for an MLP head's
// inference recorded at execution for want of a published circuit: stage
// type mlp_head, the head's onnx_model_hash, and the advisory
// circuit_missing gap.
func (g *gen) circuitMissing(modelHash string) error {
	v, err := g.circuitMissingVPEC("run_00000000-0000-4000-8000-0000000c0c01", modelHash, gap.SeverityOf(gap.CircuitMissing))
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/circuit-missing.json", v); err != nil {
		return err
	}
	g.add(Vector{Name: "circuit-missing", Kind: "vpec", Valid: true, Exit: 0, File: "vpec/valid/circuit-missing.json",
		Description: "an MLP head's inference recorded at execution (stage_type mlp_head, its onnx_model_hash) with the advisory circuit_missing gap the service raises while no circuit is published for the model: authentic but not clean"})
	return nil
}

// circuitMissingVPEC is the circuit-missing VPEC of run runID with its gap
// at severity sev.
func (g *gen) circuitMissingVPEC(runID, modelHash string, sev gap.Severity) (*vpec.VPEC, error) {
	recs := []vpec.Record{
		g.record(1, "pii_detection", "Patient John Doe, DOB 1970-01-01, claim #4411", vpec.ResultPass, vpec.Execution),
		g.record(2, "toxicity_head", "[0.5,-0.5,1,0,-1,0.5,-0.5,1,0,-1,0.5,-0.5,1,0,-1,0.5]", vpec.ResultPass, vpec.Execution),
	}
	recs[1].StageType, recs[1].ONNXModelHash = stage.MLPHead, modelHash
	check, seq := recs[1].Check, recs[1].Sequence
	g.clk.advance(time.Second)
	gaps := []vpec.Gap{{GapID: "gap_00000000-0000-4000-8000-" + runID[len(runID)-12:], GapType: gap.CircuitMissing,
		Severity: sev, Check: &check, Sequence: &seq, Timestamp: g.stamp()}}
	return g.newVPEC(runID, recs, gaps)
}
