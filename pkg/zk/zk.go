// Package zk ties svc's zero-knowledge proofs to its documents: the byte
// encodings of Groth16 proofs and verifying keys, circuit ids, signed
// circuit entries (the circuit registry) and the verification of the
// proof a VPEC record carries (docs/FORMATS.md, "Proofs in records" and
// "Circuit entries"; docs/PROOFS.md).
//
// The circuits live in subpackages: pkg/zk/head (mlp_head: the
// verifiable_inference level) and pkg/zk/conditions (threshold_check,
// truncation_check: the mathematical level).
package zk

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/svc-gov/svc/pkg/zk/head"
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

// Errors, matchable with errors.Is.
var (
	// ErrEncoding reports proof or key bytes that do not decode to exactly
	// one canonical object.
	ErrEncoding = errors.New("zk: malformed encoding")
	// ErrProofInvalid reports a proof that does not verify against the key
	// and the public inputs reconstructed from the record.
	ErrProofInvalid = errors.New("zk: proof does not verify")
)

// CircuitID returns the circuit id of a verifying key: "sha256:" and the
// lowercase hex SHA-256 of its canonical bytes (MarshalVerifyingKey).
func CircuitID(vk []byte) string {
	sum := sha256.Sum256(vk)
	return "sha256:" + hex.EncodeToString(sum[:])
}

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
func ParseVerifyingKey(b []byte) (*groth16bn254.VerifyingKey, error) {
	if len(b) == 0 || len(b) > MaxVerifyingKeyBytes {
		return nil, fmt.Errorf("%w: verifying key is %d bytes, want 1-%d", ErrEncoding, len(b), MaxVerifyingKeyBytes)
	}
	if err := head.CheckVKLayout(b, maxPublic); err != nil {
		return nil, fmt.Errorf("%w: verifying key: %v", ErrEncoding, err)
	}
	vk := new(groth16bn254.VerifyingKey)
	n, err := readFrom(vk, b)
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
// encoding (Proof.WriteTo).
func MarshalProof(p io.WriterTo) ([]byte, error) {
	var b bytes.Buffer
	if _, err := p.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("zk: encode proof: %w", err)
	}
	return b.Bytes(), nil
}

// ParseProof decodes canonical proof bytes (see ParseVerifyingKey).
func ParseProof(b []byte) (*groth16bn254.Proof, error) {
	if len(b) == 0 || len(b) > MaxProofBytes {
		return nil, fmt.Errorf("%w: proof is %d bytes, want 1-%d", ErrEncoding, len(b), MaxProofBytes)
	}
	// The layout checks (commitment count bounded before anything is
	// allocated, exact length, canonical re-encoding) are head's: one
	// proof encoding for every circuit.
	p, err := head.DecodeProof(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEncoding, err)
	}
	return p, nil
}

// maxPublic bounds the public inputs of any circuit's verifying key
// (head.CheckVKLayout checks the layout before decoding).
const maxPublic = 4096 + 3

// readFrom decodes with gnark's reader, turning a panic on hostile input
// into an error.
func readFrom(r io.ReaderFrom, b []byte) (n int64, err error) {
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
	return verifyWith(vk, proofBytes, public)
}

// verifyWith checks proof bytes with a decoded key.
func verifyWith(vk *groth16bn254.VerifyingKey, proofBytes []byte, public fr.Vector) error {
	proof, err := ParseProof(proofBytes)
	if err != nil {
		return err
	}
	if err := verify(proof, vk, public); err != nil {
		return fmt.Errorf("%w: %v", ErrProofInvalid, err)
	}
	return nil
}

func verify(proof *groth16bn254.Proof, vk *groth16bn254.VerifyingKey, public fr.Vector) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("verifier panicked: %v", p)
		}
	}()
	return groth16bn254.Verify(proof, vk, public)
}
