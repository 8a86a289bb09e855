package zk

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"

	"github.com/svc-gov/svc/pkg/vpec"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// Keys are what a prover needs for one circuit: the compiled constraint
// system, the proving key and the circuit id of the matching verifying
// key.
type Keys struct {
	Circuit   string
	CCS       constraint.ConstraintSystem
	PK        groth16.ProvingKey
	VK        groth16.VerifyingKey
	CircuitID string
}

// MarshalProvingKey returns a proving key's bytes (gnark's compressed
// encoding), the bytes an entry's proving_key_hash is over.
func MarshalProvingKey(pk groth16.ProvingKey) ([]byte, error) {
	var b bytes.Buffer
	if _, err := pk.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("zk: encode proving key: %w", err)
	}
	return b.Bytes(), nil
}

// HashBytes returns "sha256:<hex>" of b.
func HashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// DevSetupCondition compiles a condition circuit and makes its keys with a
// single-party Groth16 setup (groth16.Setup): for tests and trying things
// only. Whoever ran it can forge proofs; production keys come from a
// multi-party ceremony (svc zk ceremony).
func DevSetupCondition(kind conditions.Kind) (*Keys, error) {
	ccs, err := conditions.Compile(kind)
	if err != nil {
		return nil, err
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, fmt.Errorf("zk: setup %s: %w", kind, err)
	}
	vkb, err := MarshalVerifyingKey(vk)
	if err != nil {
		return nil, err
	}
	return &Keys{Circuit: string(kind), CCS: ccs, PK: pk, VK: vk, CircuitID: CircuitID(vkb)}, nil
}

// LoadConditionKeys compiles a condition circuit and reads its proving key
// from pkBytes, which must hash to the signed entry's proving_key_hash.
func LoadConditionKeys(e *Entry, pkBytes []byte) (*Keys, error) {
	kind := conditions.Kind(e.Circuit)
	if !kind.Valid() {
		return nil, fmt.Errorf("%w: entry %s is a %s circuit", conditions.ErrKind, shortID(e.CircuitID), e.Circuit)
	}
	if got := HashBytes(pkBytes); got != e.ProvingKeyHash {
		return nil, fmt.Errorf("%w: proving key hashes to %s, the circuit entry binds %s", ErrEncoding, shortID(got), shortID(e.ProvingKeyHash))
	}
	ccs, err := conditions.Compile(kind)
	if err != nil {
		return nil, err
	}
	pk := groth16.NewProvingKey(ecc.BN254)
	if _, err := readFrom(pk, pkBytes); err != nil {
		return nil, fmt.Errorf("%w: proving key: %v", ErrEncoding, err)
	}
	vkb, _ := e.VerifyingKeyBytes()
	vk, err := ParseVerifyingKey(vkb)
	if err != nil {
		return nil, err
	}
	return &Keys{Circuit: e.Circuit, CCS: ccs, PK: pk, VK: vk, CircuitID: e.CircuitID}, nil
}

// NewEntry returns an unsigned circuit entry for keys: the verifying key,
// its circuit id, the proving key's hash and the ceremony.
func NewEntry(k *Keys, onnxModelHash string, ceremony Ceremony, now time.Time) (*Entry, error) {
	vkb, err := MarshalVerifyingKey(k.VK)
	if err != nil {
		return nil, err
	}
	pkb, err := MarshalProvingKey(k.PK)
	if err != nil {
		return nil, err
	}
	e := &Entry{
		Schema: EntrySchema, CircuitID: CircuitID(vkb), Circuit: k.Circuit, System: System,
		ONNXModelHash: onnxModelHash, VerifyingKey: base64.StdEncoding.EncodeToString(vkb), ProvingKeyHash: HashBytes(pkb),
		Ceremony: ceremony, PublishedAt: vpec.FormatTime(now),
	}
	return e, e.Validate()
}

// ConditionProof is a proved condition, ready for a mathematical record:
// the record's commitment_hash and check_result, and its zk_proof block.
type ConditionProof struct {
	CommitmentHash string
	CheckResult    vpec.CheckResult
	ZKProof        *vpec.ZKProof
}

// ProveCondition proves that value (committed under salt) passes or fails
// the condition against bound, with k's keys.
func ProveCondition(k *Keys, value, bound uint32, salt conditions.Salt) (*ConditionProof, error) {
	kind := conditions.Kind(k.Circuit)
	proof, st, err := conditions.Prove(kind, k.CCS, k.PK, value, bound, salt)
	if err != nil {
		return nil, err
	}
	pb, err := MarshalProof(proof)
	if err != nil {
		return nil, err
	}
	b := int64(bound)
	z := &vpec.ZKProof{System: System, Circuit: k.Circuit, CircuitID: k.CircuitID, Proof: base64.StdEncoding.EncodeToString(pb)}
	if kind == conditions.Threshold {
		z.Threshold = &b
	} else {
		z.MaxTokens = &b
	}
	res := vpec.ResultFail
	if st.Passed {
		res = vpec.ResultPass
	}
	return &ConditionProof{CommitmentHash: "poseidon2:" + hex.EncodeToString(st.Commitment[:]), CheckResult: res, ZKProof: z}, nil
}
