// Package zkverify is the verification half of svc's zero-knowledge
// proofs: the canonical encodings of BN254 Groth16 proofs and verifying
// keys, circuit ids, signed circuit entries (the circuit registry), sets
// of entries loaded from files or memory, and the verification of the
// zk_proof a VPEC record carries (docs/FORMATS.md, "Proofs in records"
// and "Circuit entries"; docs/PROOFS.md).
//
// Its BN254 Groth16 verifier is built on gnark-crypto alone (bn254.go),
// and it links none of gnark, svc's circuits, compilers or provers (pkg/zk, pkg/zk/head and pkg/zk/conditions are
// the proving side and re-export what is here), so svc verify,
// svc-verify and the offline verifier page (WebAssembly) verify proofs
// with this one package.
package zkverify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/svc-gov/svc/pkg/core/commitment"
)

// System is the only proof system of v1: Groth16 over BN254.
const System = "groth16-bn254"

// Size limits of the encoded objects (bytes, before base64). A BN254
// Groth16 proof is 128 bytes compressed, 196 with gnark's commitment
// extension (one commitment); a verifying key with a handful of public
// inputs is under 1 KB.
const (
	MaxProofBytes        = 1024
	MaxVerifyingKeyBytes = 64 << 10
)

// MaxHeadWidth is the largest layer width of an mlp_head circuit (its
// logits are public values), pkg/zk/head's MaxWidth.
const MaxHeadWidth = 4096

// Errors, matchable with errors.Is.
var (
	// ErrEncoding reports proof or key bytes that do not decode to exactly
	// one canonical object.
	ErrEncoding = errors.New("zk: malformed encoding")
	// ErrProofInvalid reports a proof that does not verify against the key
	// and the public inputs reconstructed from the record.
	ErrProofInvalid = errors.New("zk: proof does not verify")
)

// Errors of mlp_head verification (pkg/zk/head re-exports them). Every
// failure of VerifyHead wraps exactly one of them.
var (
	// ErrHeadKeyEncoding reports verifying-key bytes that are not the
	// canonical encoding of a BN254 Groth16 verifying key of a head.
	ErrHeadKeyEncoding = errors.New("head: malformed verifying key")
	// ErrHeadProofEncoding reports proof bytes that are not the canonical
	// encoding of a BN254 Groth16 proof.
	ErrHeadProofEncoding = errors.New("head: malformed proof")
	// ErrHeadPublicInputs reports public values that cannot belong to the
	// key: a commitment that is not poseidon2, a class out of range, or a
	// number of logits the key does not take.
	ErrHeadPublicInputs = errors.New("head: public inputs do not fit the verifying key")
	// ErrHeadInvalidProof reports a well-formed proof that does not verify
	// against the key and the public values: another input, another class
	// or logits, or another model's key.
	ErrHeadInvalidProof = errors.New("head: proof does not verify")
)

// Size bounds of the canonical encodings.
const (
	g1Bytes = 32 // compressed G1 point
	g2Bytes = 64 // compressed G2 point
	// maxCommitments bounds the Pedersen commitments (gnark's commitment
	// extension; a head circuit has one, for its range checks).
	maxCommitments = 4
	// maxPublic bounds the public inputs of any circuit's verifying key:
	// a head's commitment, class and logits, plus one.
	maxPublic = 2 + MaxHeadWidth + 1
)

// CircuitID returns the circuit id of a verifying key: "sha256:" and the
// lowercase hex SHA-256 of its canonical bytes (MarshalVerifyingKey).
func CircuitID(vk []byte) string { return commitment.String(vk) }

// MarshalVerifyingKey returns the canonical bytes of a verifying key:
// gnark's compressed encoding (VerifyingKey.WriteTo).
func MarshalVerifyingKey(vk io.WriterTo) ([]byte, error) {
	var b bytes.Buffer
	if _, err := vk.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("zk: encode verifying key: %w", err)
	}
	return b.Bytes(), nil
}

// ParseVerifyingKey decodes canonical verifying-key bytes, checking that
// every point is on the curve and in its subgroup and that the input is
// exactly one key in canonical form (re-encoding gives the same bytes).
func ParseVerifyingKey(b []byte) (*VerifyingKey, error) {
	if len(b) == 0 || len(b) > MaxVerifyingKeyBytes {
		return nil, fmt.Errorf("%w: verifying key is %d bytes, want 1-%d", ErrEncoding, len(b), MaxVerifyingKeyBytes)
	}
	return decodeVK(b)
}

// decodeVK is ParseVerifyingKey without the size limit of an entry's key
// (the layout check bounds it).
func decodeVK(b []byte) (*VerifyingKey, error) {
	if err := CheckVKLayout(b, maxPublic); err != nil {
		return nil, fmt.Errorf("%w: verifying key: %v", ErrEncoding, err)
	}
	vk := new(VerifyingKey)
	n, err := ReadFrom(vk, b)
	if err != nil {
		return nil, fmt.Errorf("%w: verifying key: %v", ErrEncoding, err)
	}
	if n != int64(len(b)) {
		return nil, fmt.Errorf("%w: verifying key: %d trailing bytes", ErrEncoding, int64(len(b))-n)
	}
	again, err := MarshalVerifyingKey(vk)
	if err != nil || !bytes.Equal(again, b) {
		return nil, fmt.Errorf("%w: verifying key is not in canonical (compressed) form", ErrEncoding)
	}
	return vk, nil
}

// MarshalProof returns the canonical bytes of a proof: gnark's compressed
// encoding (Proof.WriteTo): Ar (G1, 32) | Bs (G2, 64) | Krs (G1, 32) |
// uint32 big-endian count n | n Pedersen commitments (G1, 32 each) |
// commitment proof of knowledge (G1, 32). 196 bytes for n = 1.
func MarshalProof(p io.WriterTo) ([]byte, error) {
	var b bytes.Buffer
	if _, err := p.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("zk: encode proof: %w", err)
	}
	return b.Bytes(), nil
}

// ParseProof decodes canonical proof bytes: the exact layout of
// MarshalProof (the commitment count bounded before anything is
// allocated), every point on the curve and in its subgroup, no trailing
// bytes, and re-encoding gives the same bytes. One proof encoding for
// every circuit. Errors wrap ErrEncoding.
func ParseProof(b []byte) (*Proof, error) {
	if len(b) == 0 || len(b) > MaxProofBytes {
		return nil, fmt.Errorf("%w: proof is %d bytes, want 1-%d", ErrEncoding, len(b), MaxProofBytes)
	}
	const head = 2*g1Bytes + g2Bytes
	if len(b) < head+4+g1Bytes {
		return nil, fmt.Errorf("%w: proof: %d bytes, at least %d needed", ErrEncoding, len(b), head+4+g1Bytes)
	}
	n := binary.BigEndian.Uint32(b[head:])
	if n > maxCommitments {
		return nil, fmt.Errorf("%w: proof: %d commitments (at most %d)", ErrEncoding, n, maxCommitments)
	}
	if want := head + 4 + int(n)*g1Bytes + g1Bytes; len(b) != want {
		return nil, fmt.Errorf("%w: proof: %d bytes, want %d for %d commitments", ErrEncoding, len(b), want, n)
	}
	p := new(Proof)
	if _, err := ReadFrom(p, b); err != nil {
		return nil, fmt.Errorf("%w: proof: %v", ErrEncoding, err)
	}
	again, err := MarshalProof(p)
	if err != nil || !bytes.Equal(again, b) {
		return nil, fmt.Errorf("%w: proof is not in canonical (compressed) form", ErrEncoding)
	}
	// With no commitments the proof of knowledge proves nothing and
	// gnark's verifier never reads it: any point would verify, so only
	// the point at infinity (docs/FORMATS.md) is the proof's one encoding.
	if len(p.Commitments) == 0 && !p.CommitmentPok.IsInfinity() {
		return nil, fmt.Errorf("%w: proof: no commitments, and the proof of knowledge is not the point at infinity (0x40 then 31 zero bytes)", ErrEncoding)
	}
	return p, nil
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

// ReadFrom decodes b with r's reader (gnark's or this package's), turning a panic on hostile
// input into an error.
func ReadFrom(r io.ReaderFrom, b []byte) (n int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panicked: %v", p)
		}
	}()
	return r.ReadFrom(bytes.NewReader(b))
}

// Verify checks a Groth16 proof (canonical bytes) against a verifying key
// (canonical bytes) and the public inputs (PublicWitness): nil, or an
// error matching ErrEncoding or ErrProofInvalid. It uses BN254's concrete
// verifier only, so a binary that verifies links no other curve.
func Verify(vkBytes, proofBytes []byte, public fr.Vector) error {
	vk, err := ParseVerifyingKey(vkBytes)
	if err != nil {
		return err
	}
	return VerifyWithKey(vk, proofBytes, public)
}

// VerifyWithKey is Verify with a decoded key (decode once, verify many).
func VerifyWithKey(vk *VerifyingKey, proofBytes []byte, public fr.Vector) error {
	proof, err := ParseProof(proofBytes)
	if err != nil {
		return err
	}
	if err := groth16Verify(proof, vk, public); err != nil {
		return fmt.Errorf("%w: %v", ErrProofInvalid, err)
	}
	return nil
}

func groth16Verify(proof *Proof, vk *VerifyingKey, public fr.Vector) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("verifier panicked: %v", p)
		}
	}()
	return verifyBN254(proof, vk, public)
}

// HeadPublic are the public values of an mlp_head proof.
type HeadPublic struct {
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
func (p HeadPublic) Vector() (fr.Vector, error) {
	if p.Commitment.Algorithm != commitment.Poseidon2 || len(p.Commitment.Digest) != commitment.Poseidon2DigestBytes {
		return nil, fmt.Errorf("%w: the input commitment must be a poseidon2 commitment, got %q", ErrHeadPublicInputs, p.Commitment.Algorithm)
	}
	v := make(fr.Vector, 2+len(p.Logits))
	if err := v[0].SetBytesCanonical(p.Commitment.Digest); err != nil {
		return nil, fmt.Errorf("%w: commitment: %v", ErrHeadPublicInputs, err)
	}
	if p.Class < 0 || p.Class >= len(p.Logits) {
		return nil, fmt.Errorf("%w: class %d with %d logits", ErrHeadPublicInputs, p.Class, len(p.Logits))
	}
	v[1].SetUint64(uint64(p.Class))
	for i, l := range p.Logits {
		v[2+i].SetInt64(l)
	}
	return v, nil
}

// ParseHeadKey decodes the canonical verifying-key bytes of an mlp_head
// circuit: ParseVerifyingKey's checks (the layout bounds its size), one
// commitment key per commitment, and at least the four public
// values of a head (commitment, class, two logits). Errors wrap
// ErrHeadKeyEncoding (and ErrEncoding for the encoding).
func ParseHeadKey(b []byte) (*VerifyingKey, error) {
	vk, err := decodeVK(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHeadKeyEncoding, err)
	}
	if len(vk.PublicAndCommitmentCommitted) != len(vk.CommitmentKeys) {
		return nil, fmt.Errorf("%w: %d commitment keys for %d commitments", ErrHeadKeyEncoding, len(vk.CommitmentKeys), len(vk.PublicAndCommitmentCommitted))
	}
	if nbPublic(vk) < 4 {
		return nil, fmt.Errorf("%w: %d public inputs, a head has at least 4 (commitment, class, 2 logits)", ErrHeadKeyEncoding, nbPublic(vk))
	}
	return vk, nil
}

// VerifyHead checks the proof bytes of an mlp_head circuit against its
// decoded key (ParseHeadKey) and the public values. Errors wrap
// ErrHeadProofEncoding, ErrHeadPublicInputs or ErrHeadInvalidProof.
func VerifyHead(vk *VerifyingKey, proofBytes []byte, pub HeadPublic) error {
	proof, err := ParseProof(proofBytes)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHeadProofEncoding, err)
	}
	v, err := pub.Vector()
	if err != nil {
		return err
	}
	if want := nbPublic(vk); len(v) != want {
		return fmt.Errorf("%w: the key takes %d public values (%d logits), got %d logits", ErrHeadPublicInputs, want, want-2, len(pub.Logits))
	}
	if err := groth16Verify(proof, vk, v); err != nil {
		return fmt.Errorf("%w: %v", ErrHeadInvalidProof, err)
	}
	return nil
}

// nbPublic is the number of public inputs a key takes (without the
// constant-one wire and the commitment wires).
func nbPublic(vk *VerifyingKey) int {
	return len(vk.G1.K) - len(vk.PublicAndCommitmentCommitted) - 1
}
