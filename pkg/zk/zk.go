// Package zk ties svc's zero-knowledge proofs to its documents: keys,
// proving, publishing circuit entries, and (re-exported from
// pkg/zk/zkverify, the verification half that links no circuit or
// prover) the byte encodings of Groth16 proofs and verifying keys,
// circuit ids, signed circuit entries (the circuit registry) and the
// verification of the proof a VPEC record carries (docs/FORMATS.md,
// "Proofs in records" and "Circuit entries"; docs/PROOFS.md).
//
// The circuits live in subpackages: pkg/zk/head (mlp_head: the
// verifiable_inference level) and pkg/zk/conditions (threshold_check,
// truncation_check: the mathematical level).
//
// None of these packages configures gnark's logger (a global of
// github.com/consensys/gnark/logger, which writes debug lines to stdout
// outside tests): the program decides. svc and svc-verify turn it off
// (pkg/app/cli/clicore.Run).
package zk

import (
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// System is the only proof system of v1: Groth16 over BN254.
const System = zkverify.System

// Size limits of the encoded objects (zkverify's).
const (
	MaxProofBytes        = zkverify.MaxProofBytes
	MaxVerifyingKeyBytes = zkverify.MaxVerifyingKeyBytes
)

// Entry limits and schema (zkverify's).
const (
	EntrySchema         = zkverify.EntrySchema
	MaxContributors     = zkverify.MaxContributors
	MaxContributorBytes = zkverify.MaxContributorBytes
)

// Errors, matchable with errors.Is: the same values as zkverify's.
var (
	// ErrEncoding reports proof or key bytes that do not decode to exactly
	// one canonical object.
	ErrEncoding = zkverify.ErrEncoding
	// ErrProofInvalid reports a proof that does not verify against the key
	// and the public inputs reconstructed from the record.
	ErrProofInvalid = zkverify.ErrProofInvalid
	// ErrEntryInvalid reports an entry whose fields break the v1 rules.
	ErrEntryInvalid = zkverify.ErrEntryInvalid
	// ErrEntryUnsigned reports an entry without a signature.
	ErrEntryUnsigned = zkverify.ErrEntryUnsigned
	// ErrAmbiguous reports two explicitly given entry files that hold the
	// same circuit_id with different bytes.
	ErrAmbiguous = zkverify.ErrAmbiguous
	// ErrCircuitMismatch: the entry for the proof's circuit id is for
	// another circuit than the record names.
	ErrCircuitMismatch = zkverify.ErrCircuitMismatch
	// ErrModelMismatch: the entry's onnx_model_hash is not the record's.
	ErrModelMismatch = zkverify.ErrModelMismatch
	// ErrStatement: the public inputs cannot be rebuilt from the record.
	ErrStatement = zkverify.ErrStatement
)

// Entry is a signed circuit entry (zkverify.Entry).
type Entry = zkverify.Entry

// Ceremony names the setup that made a circuit's keys (zkverify.Ceremony).
type Ceremony = zkverify.Ceremony

// Set holds circuit entry documents by circuit id (zkverify.Set).
type Set = zkverify.Set

// EntryFile is a circuit entry given explicitly (zkverify.EntryFile).
type EntryFile = zkverify.EntryFile

// Verifier checks the zk_proof of VPEC records against signed circuit
// entries (zkverify.Verifier); it implements verify.ProofVerifier.
type Verifier = zkverify.Verifier

// NewSet returns an empty set of circuit entries.
func NewSet() *Set { return zkverify.NewSet() }

// CircuitID returns the circuit id of a verifying key: "sha256:" and the
// lowercase hex SHA-256 of its canonical bytes (MarshalVerifyingKey).
func CircuitID(vk []byte) string { return zkverify.CircuitID(vk) }

// MarshalVerifyingKey returns the canonical bytes of a verifying key:
// gnark's compressed encoding (VerifyingKey.WriteTo).
func MarshalVerifyingKey(vk io.WriterTo) ([]byte, error) { return zkverify.MarshalVerifyingKey(vk) }

// ParseVerifyingKey decodes canonical verifying-key bytes
// (zkverify.ParseVerifyingKey).
// zkverify checks the bytes; gnark decodes them again for its prover.
func ParseVerifyingKey(b []byte) (*groth16bn254.VerifyingKey, error) {
	if _, err := zkverify.ParseVerifyingKey(b); err != nil {
		return nil, err
	}
	vk := new(groth16bn254.VerifyingKey)
	if _, err := readFrom(vk, b); err != nil {
		return nil, fmt.Errorf("%w: verifying key: %v", ErrEncoding, err)
	}
	return vk, nil
}

// MarshalProof returns the canonical bytes of a proof: gnark's compressed
// encoding (Proof.WriteTo).
func MarshalProof(p io.WriterTo) ([]byte, error) { return zkverify.MarshalProof(p) }

// ParseProof decodes canonical proof bytes (zkverify.ParseProof checks
// them) into gnark's type.
func ParseProof(b []byte) (*groth16bn254.Proof, error) {
	if _, err := zkverify.ParseProof(b); err != nil {
		return nil, err
	}
	p := new(groth16bn254.Proof)
	if _, err := readFrom(p, b); err != nil {
		return nil, fmt.Errorf("%w: proof: %v", ErrEncoding, err)
	}
	return p, nil
}

// Verify checks a Groth16 proof (canonical bytes) against a verifying key
// (canonical bytes) and the public inputs (zkverify.Verify).
func Verify(vkBytes, proofBytes []byte, public fr.Vector) error {
	return zkverify.Verify(vkBytes, proofBytes, public)
}

// ParseEntry decodes and validates an entry without checking its
// signature (zkverify.ParseEntry).
func ParseEntry(doc []byte) (*Entry, error) { return zkverify.ParseEntry(doc) }

// VerifyEntry parses doc and checks its signature against the trust
// bundle (zkverify.VerifyEntry).
func VerifyEntry(doc []byte, trust *signing.Bundle) (*Entry, error) {
	return zkverify.VerifyEntry(doc, trust)
}

// Sign validates e, then signs it with signer (zkverify.Sign).
func Sign(e *Entry, signer *signing.Signer, signedBy string) error {
	return zkverify.Sign(e, signer, signedBy)
}

// PublicWitness rebuilds the public inputs of a condition proof from the
// record's own fields (zkverify.PublicWitness).
func PublicWitness(r *vpec.Record) (fr.Vector, error) { return zkverify.PublicWitness(r) }

// HeadPublic rebuilds the public values of an mlp_head proof from the
// record (zkverify.RecordHeadPublic).
func HeadPublic(r *vpec.Record) (zkverify.HeadPublic, error) { return zkverify.RecordHeadPublic(r) }

// readFrom decodes with gnark's reader, turning a panic on hostile input
// into an error.
func readFrom(r io.ReaderFrom, b []byte) (int64, error) { return zkverify.ReadFrom(r, b) }

func shortID(s string) string {
	if len(s) > 19 {
		return s[:19] + "…"
	}
	return s
}
