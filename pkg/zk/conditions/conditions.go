// Package conditions holds the circuits of the mathematical proof level:
// the deterministic pre- and post-conditions of a classifier check proved
// in zero knowledge (docs/PROOFS.md, "Condition circuits").
//
// Two circuits share one shape. A private value v (a 32-bit unsigned
// integer: a quantised score or a token count) is committed with
// Poseidon2 under a random salt; the public inputs are that commitment, a
// public bound b and a bit passed:
//
//	threshold_check:       passed = 1 exactly when v >= b (score at or above the threshold)
//	below_threshold_check: passed = 1 exactly when v < b (score below the threshold: Bounded Inference)
//	truncation_check:      passed = 1 exactly when v <= b (token count within the model's maximum)
//
// The proof shows that the committed value stands in that relation to the
// bound, without revealing the value.
package conditions

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	fposeidon2 "github.com/consensys/gnark-crypto/ecc/bn254/fr/poseidon2"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/std/hash/poseidon2"
)

// Kind names a condition circuit; it is the circuit name in records and
// circuit entries.
type Kind string

// The condition circuits.
const (
	Threshold  Kind = "threshold_check"
	Truncation Kind = "truncation_check"
	// BelowThreshold is the threshold condition of a Bounded Inference
	// check, which passes when the score is below the threshold: passed is
	// the negation of Threshold's bit. It is its own circuit with its own
	// domain (docs/PROOFS.md, "Condition circuits"), so a proof that a
	// score is below a threshold can never be read as one that it is at or
	// above it, nor the other way round.
	BelowThreshold Kind = "below_threshold_check"
)

// Kinds returns the condition circuits.
func Kinds() []Kind { return []Kind{Threshold, Truncation, BelowThreshold} }

// Valid reports whether k is a condition circuit.
func (k Kind) Valid() bool { return k == Threshold || k == Truncation || k == BelowThreshold }

// ValueBits is the width of committed values and bounds: both are
// unsigned integers below 2^32.
const ValueBits = 32

// Domain returns the first field element of a commitment of kind k: the
// ASCII bytes "svc/zk/<kind>/v1" read as a big-endian integer (at most 31
// bytes, so below the field modulus). It keeps a score commitment from
// being presented as a token-count commitment.
func (k Kind) Domain() *big.Int {
	return new(big.Int).SetBytes([]byte("svc/zk/" + string(k) + "/v1"))
}

// Errors, matchable with errors.Is.
var (
	// ErrKind reports a circuit name that is not a condition circuit.
	ErrKind = errors.New("conditions: unknown condition circuit")
	// ErrSalt reports a salt that is not a canonical BN254 scalar.
	ErrSalt = errors.New("conditions: salt is not a canonical BN254 scalar (32 bytes big-endian, below the field modulus)")
)

// Salt is the 32-byte big-endian encoding of a BN254 scalar-field element
// that blinds a commitment (NewSalt draws one at random).
type Salt [32]byte

// NewSalt returns a uniformly random salt.
func NewSalt() (Salt, error) {
	var e fr.Element
	if _, err := e.SetRandom(); err != nil {
		return Salt{}, fmt.Errorf("conditions: salt: %w", err)
	}
	return Salt(e.Bytes()), nil
}

// MarshalText writes the salt as 64 lowercase hex digits (how an opening
// is handed to an auditor).
func (s Salt) MarshalText() ([]byte, error) {
	return []byte(hex.EncodeToString(s[:])), nil
}

func (s Salt) element() (fr.Element, error) {
	var e fr.Element
	if err := e.SetBytesCanonical(s[:]); err != nil {
		return e, ErrSalt
	}
	return e, nil
}

// Commit returns the Poseidon2 commitment of value under salt for kind k:
// gnark-crypto's BN254 Poseidon2 Merkle–Damgård hash of the three field
// elements (Domain(k), value, salt), each written as 32 bytes big-endian;
// the digest is one field element, 32 bytes big-endian.
func Commit(k Kind, value uint32, salt Salt) ([32]byte, error) {
	if !k.Valid() {
		return [32]byte{}, fmt.Errorf("%w: %q", ErrKind, k)
	}
	se, err := salt.element()
	if err != nil {
		return [32]byte{}, err
	}
	var d, v fr.Element
	d.SetBigInt(k.Domain())
	v.SetUint64(uint64(value))
	h := fposeidon2.NewMerkleDamgardHasher()
	for _, e := range []fr.Element{d, v, se} {
		b := e.Bytes()
		h.Write(b[:])
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}

// Circuit is the gnark circuit of a condition. Public inputs, in this
// order: Commitment, Bound, Passed.
type Circuit struct {
	Commitment frontend.Variable `gnark:",public"`
	Bound      frontend.Variable `gnark:",public"`
	Passed     frontend.Variable `gnark:",public"`
	Value      frontend.Variable
	Salt       frontend.Variable

	kind Kind
}

// New returns the circuit of kind k, for compiling or as an assignment.
func New(k Kind) (*Circuit, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("%w: %q", ErrKind, k)
	}
	return &Circuit{kind: k}, nil
}

// Define states the constraints: the commitment opens to (Value, Salt),
// Value and Bound are below 2^32, Passed is a bit, and Passed is 1 exactly
// when the relation of the kind holds.
func (c *Circuit) Define(api frontend.API) error {
	h, err := poseidon2.New(api)
	if err != nil {
		return err
	}
	h.Write(c.kind.Domain(), c.Value, c.Salt)
	api.AssertIsEqual(h.Sum(), c.Commitment)
	api.ToBinary(c.Value, ValueBits)
	api.ToBinary(c.Bound, ValueBits)
	api.AssertIsBoolean(c.Passed)
	// d = big - small + 2^32 lies in [1, 2^33): its bit 32 is set exactly
	// when big >= small.
	big, small := c.Value, c.Bound
	if c.kind == Truncation {
		big, small = c.Bound, c.Value
	}
	d := api.Add(api.Sub(big, small), uint64(1)<<ValueBits)
	bits := api.ToBinary(d, ValueBits+1)
	if c.kind == BelowThreshold {
		// below: passed = 1 - [v >= b]
		api.AssertIsEqual(api.Sub(1, bits[ValueBits]), c.Passed)
		return nil
	}
	api.AssertIsEqual(bits[ValueBits], c.Passed)
	return nil
}

// Holds reports the relation of kind k between value and bound: the
// Passed bit an honest prover publishes.
func Holds(k Kind, value, bound uint32) bool {
	switch k {
	case Truncation:
		return value <= bound
	case BelowThreshold:
		return value < bound
	}
	return value >= bound
}

// Compile compiles the circuit of kind k to a BN254 R1CS.
func Compile(k Kind) (constraint.ConstraintSystem, error) {
	c, err := New(k)
	if err != nil {
		return nil, err
	}
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, c)
	if err != nil {
		return nil, fmt.Errorf("conditions: compile %s: %w", k, err)
	}
	return ccs, nil
}

// Statement is what a condition proof states, in public: the commitment
// of the value, the bound and the outcome.
type Statement struct {
	Kind       Kind
	Commitment [32]byte
	Bound      uint32
	Passed     bool
}

// PublicWitness returns the public witness of the statement, the vector
// Groth16 verification takes.
func (s Statement) PublicWitness() (witness.Witness, error) {
	c, err := New(s.Kind)
	if err != nil {
		return nil, err
	}
	var cm fr.Element
	if err := cm.SetBytesCanonical(s.Commitment[:]); err != nil {
		return nil, fmt.Errorf("conditions: commitment is not a canonical BN254 scalar")
	}
	c.Commitment, c.Bound, c.Passed, c.Value, c.Salt = cm, s.Bound, 0, 0, 0
	if s.Passed {
		c.Passed = 1
	}
	w, err := frontend.NewWitness(c, ecc.BN254.ScalarField(), frontend.PublicOnly())
	if err != nil {
		return nil, fmt.Errorf("conditions: public witness: %w", err)
	}
	return w, nil
}

// Prove proves, with the proving key pk of the compiled circuit ccs of
// kind k, that value (committed under salt) stands against bound as the
// returned statement says.
func Prove(k Kind, ccs constraint.ConstraintSystem, pk groth16.ProvingKey, value, bound uint32, salt Salt) (groth16.Proof, Statement, error) {
	cm, err := Commit(k, value, salt)
	if err != nil {
		return nil, Statement{}, err
	}
	st := Statement{Kind: k, Commitment: cm, Bound: bound, Passed: Holds(k, value, bound)}
	c, _ := New(k)
	var cmE, se fr.Element
	cmE.SetBytes(cm[:])
	se, _ = salt.element()
	c.Commitment, c.Bound, c.Value, c.Salt = cmE, bound, value, se
	c.Passed = 0
	if st.Passed {
		c.Passed = 1
	}
	w, err := frontend.NewWitness(c, ecc.BN254.ScalarField())
	if err != nil {
		return nil, st, fmt.Errorf("conditions: witness: %w", err)
	}
	proof, err := groth16.Prove(ccs, pk, w)
	if err != nil {
		return nil, st, fmt.Errorf("conditions: prove %s: %w", k, err)
	}
	return proof, st, nil
}
