package zkverify

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Errors of record verification, each naming the check that failed;
// matchable with errors.Is.
var (
	// ErrCircuitMismatch: the entry for the proof's circuit id is for
	// another circuit than the record names.
	ErrCircuitMismatch = errors.New("circuit mismatch")
	// ErrModelMismatch: the entry's onnx_model_hash is not the record's.
	ErrModelMismatch = errors.New("model mismatch")
	// ErrStatement: the public inputs cannot be rebuilt from the record.
	ErrStatement = errors.New("public inputs not derivable from the record")
)

// Verifier checks the zk_proof of VPEC records against signed circuit
// entries; it implements verify.ProofVerifier. It verifies and decodes each
// entry once and remembers the outcome, so use one Verifier per
// verification and not from several goroutines at once.
type Verifier struct {
	// Trust holds the service keys that sign circuit entries.
	Trust *signing.Bundle
	// Root, when set and not a legacy PEM bundle, is the trust root whose
	// circuit-signing windows an entry's key must be inside at its
	// published_at (EntryKey).
	Root *trustroot.Root
	// Circuits resolves circuit ids to entry documents.
	Circuits *Set
	// Given names, in the words of the surface that verifies, how the
	// explicitly given entries (Set.Explicit) reached it: a problem with
	// one is reported as "<Given> <name>: ...". Empty: "circuit entry"
	// (svc verify says "--circuit", the offline page "circuit entry file").
	Given string

	cache map[string]*verifiedEntry
}

// verifiedEntry is a circuit entry whose signature verified, with its key
// decoded once for every record that uses it.
type verifiedEntry struct {
	e       *Entry
	vk      *VerifyingKey
	headVK  *VerifyingKey
	headErr error
	err     error
}

// entry resolves, verifies and decodes the entry of a circuit id once per
// Verifier (a VPEC may hold many proofs with one key).
func (v *Verifier) entry(id string) (*verifiedEntry, error) {
	if ve, ok := v.cache[id]; ok {
		return ve, ve.err
	}
	if v.cache == nil {
		v.cache = map[string]*verifiedEntry{}
	}
	ve := &verifiedEntry{}
	v.cache[id] = ve
	doc, err := v.Circuits.Entry(id)
	if err != nil {
		ve.err = err
		return ve, err
	}
	if ve.e, err = VerifyEntryWithRoot(doc, v.Trust, v.Root); err != nil {
		ve.err = fmt.Errorf("circuit entry signature: %w", err)
		return ve, ve.err
	}
	raw, _ := ve.e.VerifyingKeyBytes()
	if ve.vk, err = ParseVerifyingKey(raw); err != nil {
		ve.err = err
		return ve, err
	}
	if ve.e.Circuit == CircuitMLPHead {
		ve.headVK, ve.headErr = ParseHeadKey(raw)
	}
	return ve, nil
}

// Problems lists the explicitly given entries that are not valid signed
// entries: the verifier reports them as invalid even when no record needs
// them.
func (v *Verifier) Problems() []string {
	if v.Circuits == nil {
		return nil
	}
	given := v.Given
	if given == "" {
		given = "circuit entry"
	}
	var out []string
	for _, f := range v.Circuits.Explicit() {
		err := f.Err
		if err == nil {
			_, err = VerifyEntryWithRoot(f.Doc, v.Trust, v.Root)
		}
		if err != nil {
			out = append(out, fmt.Sprintf("%s %s: circuit entry signature or schema: %v", given, f.Path, err))
		}
	}
	return out
}

// VerifyProof checks the proof of record r: its circuit entry is signed by
// a key of the trust bundle, names the same circuit (and, for mlp_head,
// the record's onnx_model_hash), and the Groth16 proof verifies against
// the entry's key with public inputs rebuilt from the record's fields.
func (v *Verifier) VerifyProof(_ string, r *vpec.Record) (verify.ProofInfo, error) {
	z := r.ZKProof
	if z == nil {
		return verify.ProofInfo{}, fmt.Errorf("record has no zk_proof")
	}
	if v.Circuits == nil {
		return verify.ProofInfo{}, fmt.Errorf("%w: %s", verify.ErrCircuitNotFound, z.CircuitID)
	}
	ve, err := v.entry(z.CircuitID)
	if err != nil {
		return verify.ProofInfo{}, err
	}
	e := ve.e
	if e.Circuit != z.Circuit {
		return verify.ProofInfo{}, fmt.Errorf("%w: circuit %s is a %s entry, the record names %s", ErrCircuitMismatch, shortID(e.CircuitID), e.Circuit, z.Circuit)
	}
	if e.Circuit == CircuitMLPHead && e.ONNXModelHash != r.ONNXModelHash {
		return verify.ProofInfo{}, fmt.Errorf("%w: circuit %s proves model %s, the record names %s", ErrModelMismatch, shortID(e.CircuitID), shortID(e.ONNXModelHash), shortID(r.ONNXModelHash))
	}
	proof, err := signing.DecodeBase64(z.Proof)
	if err != nil {
		return verify.ProofInfo{}, fmt.Errorf("%w: proof: %v", ErrEncoding, err)
	}
	if e.Circuit == CircuitMLPHead {
		pub, err := RecordHeadPublic(r)
		if err != nil {
			return verify.ProofInfo{}, err
		}
		if ve.headVK == nil {
			return verify.ProofInfo{}, fmt.Errorf("groth16 verify (circuit %s, %s): %w", shortID(e.CircuitID), e.Circuit, ve.headErr)
		}
		if err := VerifyHead(ve.headVK, proof, pub); err != nil {
			if errors.Is(err, ErrHeadInvalidProof) {
				err = fmt.Errorf("%w: %v", ErrProofInvalid, err)
			}
			return verify.ProofInfo{}, fmt.Errorf("groth16 verify (circuit %s, %s): %w", shortID(e.CircuitID), e.Circuit, err)
		}
		return verify.ProofInfo{CircuitID: e.CircuitID, Contributors: e.Ceremony.Contributors}, nil
	}
	public, err := PublicWitness(r)
	if err != nil {
		return verify.ProofInfo{}, err
	}
	if err := VerifyWithKey(ve.vk, proof, public); err != nil {
		return verify.ProofInfo{}, fmt.Errorf("groth16 verify (circuit %s, %s): %w", shortID(e.CircuitID), e.Circuit, err)
	}
	return verify.ProofInfo{CircuitID: e.CircuitID, Contributors: e.Ceremony.Contributors}, nil
}

// PublicWitness rebuilds the public inputs of a condition proof from the
// record's own fields, in the circuit's order: the value commitment from
// commitment_hash, the bound from zk_proof.threshold (threshold_check,
// below_threshold_check) or max_tokens (truncation_check), and
// passed from check_result (pass 1, fail 0). (An mlp_head proof's are
// RecordHeadPublic.)
func PublicWitness(r *vpec.Record) (fr.Vector, error) {
	z := r.ZKProof
	h, err := commitment.Parse(r.CommitmentHash)
	if err != nil || h.Algorithm != commitment.Poseidon2 || len(h.Digest) != 32 {
		return nil, fmt.Errorf("%w: commitment_hash is not a 32-byte poseidon2 commitment", ErrStatement)
	}
	switch z.Circuit {
	case CircuitThreshold, CircuitTruncation, CircuitBelowThreshold:
		bound := z.Threshold
		if z.Circuit == CircuitTruncation {
			bound = z.MaxTokens
		}
		passed, ok := PassedBit(r.CheckResult)
		if !ok || bound == nil || *bound < 0 || *bound > 1<<32-1 {
			return nil, fmt.Errorf("%w: %s needs check_result pass or fail and a 32-bit bound", ErrStatement, z.Circuit)
		}
		v := make(fr.Vector, 3)
		if err := v[0].SetBytesCanonical(h.Digest); err != nil {
			return nil, fmt.Errorf("%w: commitment_hash is not a canonical BN254 scalar", ErrStatement)
		}
		v[1].SetUint64(uint64(*bound))
		if passed {
			v[2].SetOne()
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: circuit %q has no condition public inputs (mlp_head: RecordHeadPublic)", ErrStatement, z.Circuit)
}

// RecordHeadPublic rebuilds the public values of an mlp_head proof from the
// record: the input commitment is the record's commitment_hash (the
// poseidon2 commitment of the quantised input vector), the class and
// logits are the record's zk_proof.class and zk_proof.logits.
func RecordHeadPublic(r *vpec.Record) (HeadPublic, error) {
	z := r.ZKProof
	h, err := commitment.Parse(r.CommitmentHash)
	if err != nil || h.Algorithm != commitment.Poseidon2 {
		return HeadPublic{}, fmt.Errorf("%w: commitment_hash is not a poseidon2 commitment", ErrStatement)
	}
	if z.Class == nil || len(z.Logits) < 2 || *z.Class < 0 || *z.Class >= int64(len(z.Logits)) {
		return HeadPublic{}, fmt.Errorf("%w: an mlp_head proof needs class and logits", ErrStatement)
	}
	return HeadPublic{Commitment: h, Class: int(*z.Class), Logits: z.Logits}, nil
}

func shortID(s string) string {
	if len(s) > 19 {
		return s[:19] + "…"
	}
	return s
}
