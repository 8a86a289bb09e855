package head

import (
	"errors"
	"fmt"
	"io"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// Errors of proving and verifying. Every verification failure wraps
// exactly one of them, so a caller can name the failed check. The
// verification errors are pkg/zk/zkverify's (the same values).
var (
	// ErrKeyEncoding reports verifying-key bytes that are not the canonical
	// encoding of a BN254 Groth16 verifying key.
	ErrKeyEncoding = zkverify.ErrHeadKeyEncoding
	// ErrProofEncoding reports proof bytes that are not the canonical
	// encoding of a BN254 Groth16 proof.
	ErrProofEncoding = zkverify.ErrHeadProofEncoding
	// ErrPublicInputs reports public values that cannot belong to the key:
	// a commitment that is not poseidon2, a class out of range, or a
	// number of logits the key does not take.
	ErrPublicInputs = zkverify.ErrHeadPublicInputs
	// ErrInvalidProof reports a well-formed proof that does not verify
	// against the key and the public values: another input, another
	// class or logits, or another model's key.
	ErrInvalidProof = zkverify.ErrHeadInvalidProof
	// ErrInput reports an input the head cannot prove (wrong length).
	ErrInput = errors.New("head: bad input")
)

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

// Public are a proof's public values: commitment, class and logits
// (zkverify.HeadPublic, whose Vector is the public witness).
type Public = zkverify.HeadPublic

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

// VerifyWithKey is [Verify] with a decoded key (decode once, verify many):
// zkverify.VerifyHead.
func VerifyWithKey(vk *zkverify.VerifyingKey, proofBytes []byte, pub Public) error {
	return zkverify.VerifyHead(vk, proofBytes, pub)
}

// EncodeProof returns the canonical bytes of a proof: gnark's
// compressed encoding (zkverify.MarshalProof): Ar (G1, 32) | Bs (G2, 64)
// | Krs (G1, 32) | uint32 big-endian count n | n Pedersen commitments
// (G1, 32 each) | commitment proof of knowledge (G1, 32). 196 bytes for
// n = 1.
func EncodeProof(p io.WriterTo) ([]byte, error) {
	b, err := zkverify.MarshalProof(p)
	if err != nil {
		return nil, fmt.Errorf("head: encode proof: %w", err)
	}
	return b, nil
}

// DecodeProof decodes canonical proof bytes (zkverify.ParseProof: the
// exact layout of [EncodeProof], every point on the curve and in its
// subgroup, no trailing bytes, re-encoding gives the same bytes). Errors
// wrap [ErrProofEncoding].
func DecodeProof(b []byte) (*zkverify.Proof, error) {
	p, err := zkverify.ParseProof(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProofEncoding, err)
	}
	return p, nil
}

// EncodeVerifyingKey returns the canonical bytes of a verifying key:
// gnark's compressed encoding (VerifyingKey.WriteTo), see
// docs/FORMATS.md "Groth16 proofs". zkverify.CircuitID hashes these bytes.
func EncodeVerifyingKey(vk io.WriterTo) ([]byte, error) {
	b, err := zkverify.MarshalVerifyingKey(vk)
	if err != nil {
		return nil, fmt.Errorf("head: encode verifying key: %w", err)
	}
	return b, nil
}

// DecodeVerifyingKey decodes the canonical verifying-key bytes of a head
// (zkverify.ParseHeadKey: every length prefix bounded before anything is
// allocated, points on the curve and in their subgroups, no trailing
// bytes, canonical, at least four public values). Errors wrap
// [ErrKeyEncoding].
func DecodeVerifyingKey(b []byte) (*zkverify.VerifyingKey, error) {
	return zkverify.ParseHeadKey(b)
}

// CheckVKLayout walks a BN254 Groth16 verifying key's compressed layout
// before gnark's decoder allocates anything (zkverify.CheckVKLayout).
func CheckVKLayout(b []byte, maxPublic int) error { return zkverify.CheckVKLayout(b, maxPublic) }
