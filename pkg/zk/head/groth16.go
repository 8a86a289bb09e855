package head

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/logger"

	"github.com/svc-gov/svc/pkg/commitment"
)

// Errors of proving and verifying. Every verification failure wraps
// exactly one of them, so a caller can name the failed check.
var (
	// ErrKeyEncoding reports verifying-key bytes that are not the canonical
	// encoding of a BN254 Groth16 verifying key.
	ErrKeyEncoding = errors.New("head: malformed verifying key")
	// ErrProofEncoding reports proof bytes that are not the canonical
	// encoding of a BN254 Groth16 proof.
	ErrProofEncoding = errors.New("head: malformed proof")
	// ErrPublicInputs reports public values that cannot belong to the key:
	// a commitment that is not poseidon2, a class out of range, or a
	// number of logits the key does not take.
	ErrPublicInputs = errors.New("head: public inputs do not fit the verifying key")
	// ErrInvalidProof reports a well-formed proof that does not verify
	// against the key and the public values: another input, another
	// class or logits, or another model's key.
	ErrInvalidProof = errors.New("head: proof does not verify")
	// ErrInput reports an input the head cannot prove (wrong length).
	ErrInput = errors.New("head: bad input")
)

func init() {
	logger.Disable() // gnark logs debug lines to stderr otherwise
}

// Compiled is a head compiled to an R1CS constraint system.
type Compiled struct {
	// Q is the quantised head the constraints encode.
	Q *Quantized
	// CS is the constraint system (gnark R1CS over BN254): the input of
	// Groth16 setup, plain ([Setup]) or by ceremony (mpcsetup).
	CS constraint.ConstraintSystem
}

// Compile compiles a quantised head (checked first) to its constraint
// system. The result is deterministic: the same Quantized gives the same
// constraints.
func Compile(q *Quantized) (*Compiled, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	cs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, NewCircuit(q))
	if err != nil {
		return nil, fmt.Errorf("head: compile: %w", err)
	}
	return &Compiled{Q: q, CS: cs}, nil
}

// Setup runs a single-party Groth16 setup: for tests and development only
// (whoever runs it can forge proofs). Production keys come from a
// ceremony (gnark's backend/groth16/bn254/mpcsetup).
func Setup(c *Compiled) (*groth16bn254.ProvingKey, *groth16bn254.VerifyingKey, error) {
	pk, vk, err := groth16.Setup(c.CS)
	if err != nil {
		return nil, nil, fmt.Errorf("head: setup: %w", err)
	}
	return pk.(*groth16bn254.ProvingKey), vk.(*groth16bn254.VerifyingKey), nil
}

// Public are a proof's public values.
type Public struct {
	// Commitment is the poseidon2 commitment of the int8 input
	// (commitment.SumPoseidon2Int8).
	Commitment commitment.Hash
	// Class is the argmax of Logits, the smallest index on ties.
	Class int
	// Logits are the head's integer logits (multiply by the last layer's
	// OutScale for float logits).
	Logits []int64
}

// Vector returns the public witness: commitment, class, logits as BN254
// scalars (a negative value v as r - |v|).
func (p Public) Vector() (fr.Vector, error) {
	if p.Commitment.Algorithm != commitment.Poseidon2 || len(p.Commitment.Digest) != commitment.Poseidon2DigestBytes {
		return nil, fmt.Errorf("%w: the input commitment must be a poseidon2 commitment, got %q", ErrPublicInputs, p.Commitment.Algorithm)
	}
	v := make(fr.Vector, 2+len(p.Logits))
	if err := v[0].SetBytesCanonical(p.Commitment.Digest); err != nil {
		return nil, fmt.Errorf("%w: commitment: %v", ErrPublicInputs, err)
	}
	if p.Class < 0 || p.Class >= len(p.Logits) {
		return nil, fmt.Errorf("%w: class %d with %d logits", ErrPublicInputs, p.Class, len(p.Logits))
	}
	v[1].SetUint64(uint64(p.Class))
	for i, l := range p.Logits {
		v[2+i].SetInt64(l)
	}
	return v, nil
}

// Prove runs the head on the int8 input x and proves the run. It returns
// the canonical proof bytes ([EncodeProof]) and the public values.
func Prove(c *Compiled, pk *groth16bn254.ProvingKey, x []int8) ([]byte, Public, error) {
	d := c.Q.Dims()
	if len(x) != d[0] {
		return nil, Public{}, fmt.Errorf("%w: %d values, the head takes %d", ErrInput, len(x), d[0])
	}
	logits, class, err := c.Q.Run(x)
	if err != nil {
		return nil, Public{}, err
	}
	pub := Public{Commitment: commitment.SumPoseidon2Int8(x), Class: class, Logits: logits}
	assign := &Circuit{
		Commitment: new(big.Int).SetBytes(pub.Commitment.Digest),
		Class:      class,
		Logits:     make([]frontend.Variable, len(logits)),
		Input:      make([]frontend.Variable, len(x)),
	}
	for i, l := range logits {
		assign.Logits[i] = l
	}
	for i, v := range commitment.Int8Payload(x) {
		assign.Input[i] = int(v)
	}
	w, err := frontend.NewWitness(assign, ecc.BN254.ScalarField())
	if err != nil {
		return nil, Public{}, fmt.Errorf("head: witness: %w", err)
	}
	proof, err := groth16.Prove(c.CS, pk, w)
	if err != nil {
		return nil, Public{}, fmt.Errorf("head: prove: %w", err)
	}
	b, err := EncodeProof(proof.(*groth16bn254.Proof))
	if err != nil {
		return nil, Public{}, err
	}
	return b, pub, nil
}

// Verify checks proof bytes against canonical verifying-key bytes and the
// public values. It is pure Go (no cgo). Errors wrap [ErrKeyEncoding],
// [ErrProofEncoding], [ErrPublicInputs] or [ErrInvalidProof].
func Verify(vkBytes, proofBytes []byte, pub Public) error {
	vk, err := DecodeVerifyingKey(vkBytes)
	if err != nil {
		return err
	}
	return VerifyWithKey(vk, proofBytes, pub)
}

// VerifyWithKey is [Verify] with a decoded key (decode once, verify many).
func VerifyWithKey(vk *groth16bn254.VerifyingKey, proofBytes []byte, pub Public) error {
	proof, err := DecodeProof(proofBytes)
	if err != nil {
		return err
	}
	v, err := pub.Vector()
	if err != nil {
		return err
	}
	if want := nbPublic(vk); len(v) != want {
		return fmt.Errorf("%w: the key takes %d public values (%d logits), got %d logits", ErrPublicInputs, want, want-2, len(pub.Logits))
	}
	if err := groth16bn254.Verify(proof, vk, v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidProof, err)
	}
	return nil
}

// nbPublic is the number of public inputs a key takes (without the
// constant-one wire and the commitment wires).
func nbPublic(vk *groth16bn254.VerifyingKey) int {
	return len(vk.G1.K) - len(vk.PublicAndCommitmentCommitted) - 1
}

// Size bounds of the canonical encodings.
const (
	g1Bytes = 32 // compressed G1 point
	g2Bytes = 64 // compressed G2 point
	// maxCommitments bounds the Pedersen commitments (gnark's commitment
	// extension; a head circuit has one, for its range checks).
	maxCommitments = 4
	// maxPublic bounds the public inputs of a verifying key.
	maxPublic = 2 + MaxWidth + 1
)

// EncodeProof returns the canonical bytes of a proof: gnark's
// compressed encoding (Proof.WriteTo): Ar (G1, 32) | Bs (G2, 64) | Krs
// (G1, 32) | uint32 big-endian count n | n Pedersen commitments (G1, 32
// each) | commitment proof of knowledge (G1, 32). 196 bytes for n = 1.
func EncodeProof(p *groth16bn254.Proof) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("head: encode proof: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeProof decodes canonical proof bytes: the exact layout of
// [EncodeProof], every point on the curve and in its subgroup, no
// trailing bytes, and re-encoding gives the same bytes. Errors wrap
// [ErrProofEncoding].
func DecodeProof(b []byte) (*groth16bn254.Proof, error) {
	const head = 2*g1Bytes + g2Bytes
	if len(b) < head+4+g1Bytes {
		return nil, fmt.Errorf("%w: %d bytes, at least %d needed", ErrProofEncoding, len(b), head+4+g1Bytes)
	}
	n := binary.BigEndian.Uint32(b[head:])
	if n > maxCommitments {
		return nil, fmt.Errorf("%w: %d commitments (at most %d)", ErrProofEncoding, n, maxCommitments)
	}
	if want := head + 4 + int(n)*g1Bytes + g1Bytes; len(b) != want {
		return nil, fmt.Errorf("%w: %d bytes, want %d for %d commitments", ErrProofEncoding, len(b), want, n)
	}
	p := new(groth16bn254.Proof)
	if _, err := p.ReadFrom(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProofEncoding, err)
	}
	again, err := EncodeProof(p)
	if err != nil || !bytes.Equal(again, b) {
		return nil, fmt.Errorf("%w: not in canonical (compressed) form", ErrProofEncoding)
	}
	return p, nil
}

// EncodeVerifyingKey returns the canonical bytes of a verifying key:
// gnark's compressed encoding (VerifyingKey.WriteTo), see
// docs/FORMATS.md "Groth16 proofs". [CircuitID] hashes these bytes.
func EncodeVerifyingKey(vk *groth16bn254.VerifyingKey) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := vk.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("head: encode verifying key: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeVerifyingKey decodes canonical verifying-key bytes: the layout of
// [EncodeVerifyingKey] with every length prefix bounded before anything
// is allocated, points on the curve and in their subgroups, no trailing
// bytes, and re-encoding gives the same bytes. Errors wrap
// [ErrKeyEncoding].
func DecodeVerifyingKey(b []byte) (*groth16bn254.VerifyingKey, error) {
	if err := CheckVKLayout(b, maxPublic); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeyEncoding, err)
	}
	vk := new(groth16bn254.VerifyingKey)
	if _, err := vk.ReadFrom(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeyEncoding, err)
	}
	again, err := EncodeVerifyingKey(vk)
	if err != nil || !bytes.Equal(again, b) {
		return nil, fmt.Errorf("%w: not in canonical (compressed) form", ErrKeyEncoding)
	}
	if len(vk.PublicAndCommitmentCommitted) != len(vk.CommitmentKeys) {
		return nil, fmt.Errorf("%w: %d commitment keys for %d commitments", ErrKeyEncoding, len(vk.CommitmentKeys), len(vk.PublicAndCommitmentCommitted))
	}
	if nbPublic(vk) < 4 {
		return nil, fmt.Errorf("%w: %d public inputs, a head has at least 4 (commitment, class, 2 logits)", ErrKeyEncoding, nbPublic(vk))
	}
	return vk, nil
}

// CheckVKLayout walks a BN254 Groth16 verifying key's compressed layout
// α1 β1 β2 γ2 δ1 δ2 | uint32 nK, nK G1 | uint32 m, m × (uint32 c, c
// uint64) | uint32 nc, nc × (G2, G2) before gnark's decoder allocates
// anything: every count is bounded (at most maxPublic public inputs), and
// the length must be exact.
func CheckVKLayout(b []byte, maxPublic int) error {
	off := 3*g1Bytes + 3*g2Bytes
	u32 := func(what string, bound int) (int, error) {
		if len(b) < off+4 {
			return 0, fmt.Errorf("truncated at %s (byte %d of %d)", what, off, len(b))
		}
		v := binary.BigEndian.Uint32(b[off:])
		off += 4
		if int64(v) > int64(bound) {
			return 0, fmt.Errorf("%s %d exceeds %d", what, v, bound)
		}
		return int(v), nil
	}
	nK, err := u32("public key count", maxPublic+maxCommitments)
	if err != nil {
		return err
	}
	off += nK * g1Bytes
	m, err := u32("commitment count", maxCommitments)
	if err != nil {
		return err
	}
	for i := 0; i < m; i++ {
		c, err := u32("committed public count", nK)
		if err != nil {
			return err
		}
		off += 8 * c
	}
	nc, err := u32("commitment key count", maxCommitments)
	if err != nil {
		return err
	}
	off += nc * 2 * g2Bytes
	if off != len(b) {
		return fmt.Errorf("%d bytes, the layout gives %d", len(b), off)
	}
	return nil
}

// CircuitID returns the circuit id of a verifying key: "sha256:" and the
// SHA-256 of its canonical bytes ([EncodeVerifyingKey]) in lowercase hex.
func CircuitID(vkBytes []byte) string {
	d := sha256.Sum256(vkBytes)
	return "sha256:" + hex.EncodeToString(d[:])
}
