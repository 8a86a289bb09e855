package zk

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/constraint"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/head"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// Keys are what a prover needs for one circuit: the compiled constraint
// system, the proving key and the circuit id of the matching verifying
// key.
type Keys struct {
	Circuit string
	// Head is the compiled head of an mlp_head circuit (nil otherwise);
	// ModelHash its onnx_model_hash.
	Head      *head.Compiled
	ModelHash string
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
func HashBytes(b []byte) string { return commitment.String(b) }

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
	if kind == conditions.Truncation {
		z.MaxTokens = &b
	} else {
		z.Threshold = &b
	}
	res := vpec.ResultFail
	if st.Passed {
		res = vpec.ResultPass
	}
	return &ConditionProof{CommitmentHash: "poseidon2:" + hex.EncodeToString(st.Commitment[:]), CheckResult: res, ZKProof: z}, nil
}

// HeadProof is a proved inference of an MLP head, ready for a
// verifiable_inference record: its commitment_hash (the poseidon2
// commitment of the quantised input) and zk_proof (class and logits).
type HeadProof struct {
	CommitmentHash string
	Class          int
	Logits         []int64
	ZKProof        *vpec.ZKProof
}

// ProveHead quantises the embedding x, runs the head on it and proves the
// run with k's keys (an mlp_head circuit).
func ProveHead(k *Keys, x []float32) (*HeadProof, error) {
	if k.Head == nil {
		return nil, fmt.Errorf("%w: %s keys are not an mlp_head circuit's", ErrKeys, k.Circuit)
	}
	pk, ok := k.PK.(*groth16bn254.ProvingKey)
	if !ok {
		return nil, fmt.Errorf("%w: not a BN254 proving key", ErrKeys)
	}
	if d := k.Head.Q.Dims()[0]; len(x) != d {
		return nil, fmt.Errorf("%w: the input vector has %d values, the head takes %d", head.ErrInput, len(x), d)
	}
	proof, pub, err := head.Prove(k.Head, pk, k.Head.Q.QuantizeInput(x))
	if err != nil {
		return nil, err
	}
	class := int64(pub.Class)
	z := &vpec.ZKProof{System: System, Circuit: zkverify.CircuitMLPHead, CircuitID: k.CircuitID,
		Proof: base64.StdEncoding.EncodeToString(proof), Class: &class, Logits: pub.Logits}
	return &HeadProof{CommitmentHash: pub.Commitment.String(), Class: pub.Class, Logits: pub.Logits, ZKProof: z}, nil
}

// MaxVectorBytes bounds an input vector file.
const MaxVectorBytes = 1 << 20

// ErrVector reports an input vector file that is not a JSON array of
// finite numbers.
var ErrVector = errors.New("zk: malformed input vector")

// ParseVector reads an input vector: a JSON array of 1 to head.MaxWidth
// finite numbers (an embedding, as float32).
func ParseVector(data []byte) ([]float32, error) {
	if len(data) > MaxVectorBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrVector, len(data), MaxVectorBytes)
	}
	var v []float64
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: want a JSON array of numbers: %v", ErrVector, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the array", ErrVector)
	}
	if len(v) == 0 || len(v) > head.MaxWidth {
		return nil, fmt.Errorf("%w: %d values, want 1-%d", ErrVector, len(v), head.MaxWidth)
	}
	out := make([]float32, len(v))
	for i, f := range v {
		if math.IsNaN(f) || math.Abs(f) > math.MaxFloat32 {
			return nil, fmt.Errorf("%w: value %d (%v) is not a finite float32", ErrVector, i, f)
		}
		out[i] = float32(f)
	}
	return out, nil
}
