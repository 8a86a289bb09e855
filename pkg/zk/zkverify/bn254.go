package zkverify

import (
	"errors"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/hash_to_field"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/pedersen"
)

// The Groth16 BN254 verifier of this package is built on gnark-crypto
// alone: gnark's backend/groth16/bn254 would link gnark's constraint
// systems, logger and profiler, and their package initialisation is most
// of a verifier binary's start-up (docs/BENCHMARKS.md, "Issue 26"). The
// types below encode and decode exactly as gnark's Proof and VerifyingKey
// (compressed WriteTo/ReadFrom), and Verify is gnark v0.16's
// groth16/bn254 Verify with the default options; TestAgreesWithGnark
// (pkg/zk) runs both on the same proofs.

// commitmentDst is gnark's constraint.CommitmentDst, the domain separator
// of the hash of a Pedersen commitment into the public inputs.
const commitmentDst = "bsb22-commitment"

// Proof is a BN254 Groth16 proof with gnark's commitment extension.
type Proof struct {
	Ar, Krs       curve.G1Affine
	Bs            curve.G2Affine
	Commitments   []curve.G1Affine // Pedersen commitments (BSB22)
	CommitmentPok curve.G1Affine   // batched proof of knowledge of the commitments
}

// WriteTo writes the canonical (compressed) encoding: Ar | Bs | Krs |
// uint32 n | n commitments | proof of knowledge.
func (p *Proof) WriteTo(w io.Writer) (int64, error) {
	enc := curve.NewEncoder(w)
	for _, v := range []any{&p.Ar, &p.Bs, &p.Krs, p.Commitments, &p.CommitmentPok} {
		if err := enc.Encode(v); err != nil {
			return enc.BytesWritten(), err
		}
	}
	return enc.BytesWritten(), nil
}

// ReadFrom decodes the compressed encoding, checking that every point is
// on the curve and in its subgroup.
func (p *Proof) ReadFrom(r io.Reader) (int64, error) {
	dec := curve.NewDecoder(r)
	for _, v := range []any{&p.Ar, &p.Bs, &p.Krs, &p.Commitments, &p.CommitmentPok} {
		if err := dec.Decode(v); err != nil {
			return dec.BytesRead(), err
		}
	}
	return dec.BytesRead(), nil
}

// VerifyingKey is a BN254 Groth16 verifying key with gnark's commitment
// extension; decode it with ParseVerifyingKey, which also precomputes
// e(α, β), -γ and -δ.
type VerifyingKey struct {
	G1 struct {
		Alpha, Beta, Delta curve.G1Affine
		K                  []curve.G1Affine // one per public wire, then one per commitment
	}
	G2 struct {
		Beta, Delta, Gamma curve.G2Affine
		deltaNeg, gammaNeg curve.G2Affine
	}
	e curve.GT

	CommitmentKeys []pedersen.VerifyingKey
	// PublicAndCommitmentCommitted lists, per commitment, the public wires
	// (1-based) hashed with it into its public input.
	PublicAndCommitmentCommitted [][]int
}

// WriteTo writes the canonical (compressed) encoding, gnark's
// VerifyingKey.WriteTo: α1 β1 β2 γ2 δ1 δ2 | K | committed indexes |
// uint32 nc | nc Pedersen verifying keys.
func (vk *VerifyingKey) WriteTo(w io.Writer) (int64, error) {
	committed := make([][]uint64, len(vk.PublicAndCommitmentCommitted))
	for i, s := range vk.PublicAndCommitmentCommitted {
		committed[i] = make([]uint64, len(s))
		for j, v := range s {
			committed[i][j] = uint64(v)
		}
	}
	enc := curve.NewEncoder(w)
	for _, v := range []any{&vk.G1.Alpha, &vk.G1.Beta, &vk.G2.Beta, &vk.G2.Gamma, &vk.G1.Delta, &vk.G2.Delta,
		vk.G1.K, committed, uint32(len(vk.CommitmentKeys))} {
		if err := enc.Encode(v); err != nil {
			return enc.BytesWritten(), err
		}
	}
	n := enc.BytesWritten()
	for i := range vk.CommitmentKeys {
		m, err := vk.CommitmentKeys[i].WriteTo(w)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ReadFrom decodes the compressed encoding (points on the curve and in
// their subgroups) and precomputes what Verify needs.
func (vk *VerifyingKey) ReadFrom(r io.Reader) (int64, error) {
	dec := curve.NewDecoder(r)
	var committed [][]uint64
	var nc uint32
	for i, v := range []any{&vk.G1.Alpha, &vk.G1.Beta, &vk.G2.Beta, &vk.G2.Gamma, &vk.G1.Delta, &vk.G2.Delta,
		&vk.G1.K, &committed, &nc} {
		if err := dec.Decode(v); err != nil {
			return dec.BytesRead(), fmt.Errorf("read field %d: %w", i, err)
		}
	}
	vk.PublicAndCommitmentCommitted = make([][]int, len(committed))
	for i, s := range committed {
		vk.PublicAndCommitmentCommitted[i] = make([]int, len(s))
		for j, v := range s {
			vk.PublicAndCommitmentCommitted[i][j] = int(v)
		}
	}
	n := dec.BytesRead()
	vk.CommitmentKeys = nil
	for i := 0; i < int(nc); i++ {
		var k pedersen.VerifyingKey
		m, err := k.ReadFrom(r)
		n += m
		if err != nil {
			return n, fmt.Errorf("read commitment key %d: %w", i, err)
		}
		vk.CommitmentKeys = append(vk.CommitmentKeys, k)
	}
	var err error
	if vk.e, err = curve.Pair([]curve.G1Affine{vk.G1.Alpha}, []curve.G2Affine{vk.G2.Beta}); err != nil {
		return n, fmt.Errorf("precompute e(α, β): %w", err)
	}
	vk.G2.deltaNeg.Neg(&vk.G2.Delta)
	vk.G2.gammaNeg.Neg(&vk.G2.Gamma)
	return n, nil
}

var (
	errPairing  = errors.New("pairing doesn't match")
	errSubgroup = errors.New("points in the proof are not in the correct subgroup")
)

// verifyBN254 is gnark v0.16's groth16/bn254 Verify with its default
// options (hash to field with domain commitmentDst): e(Ar, Bs) =
// e(α, β) · e(Σ xᵢKᵢ + Σ Dᵢ, γ) · e(Krs, δ), after the commitments'
// proof of knowledge. public is not modified.
func verifyBN254(proof *Proof, vk *VerifyingKey, public fr.Vector) error {
	nbPublicVars := len(vk.G1.K) - len(vk.PublicAndCommitmentCommitted)
	if len(vk.CommitmentKeys) != len(vk.PublicAndCommitmentCommitted) {
		return fmt.Errorf("invalid verifying key: got %d commitment keys, expected %d", len(vk.CommitmentKeys), len(vk.PublicAndCommitmentCommitted))
	}
	if len(proof.Commitments) != len(vk.PublicAndCommitmentCommitted) {
		return fmt.Errorf("invalid proof: got %d commitments, expected %d", len(proof.Commitments), len(vk.PublicAndCommitmentCommitted))
	}
	if len(public) != nbPublicVars-1 {
		return fmt.Errorf("invalid witness size, got %d, expected %d (public - ONE_WIRE)", len(public), len(vk.G1.K)-1)
	}
	if !proof.Ar.IsInSubGroup() || !proof.Krs.IsInSubGroup() || !proof.Bs.IsInSubGroup() {
		return errSubgroup
	}
	witness := make(fr.Vector, len(public), len(public)+len(proof.Commitments))
	copy(witness, public)

	htf := hash_to_field.New([]byte(commitmentDst))
	commitmentsSerialized := make([]byte, 0, len(vk.PublicAndCommitmentCommitted)*fr.Bytes)
	for i, committed := range vk.PublicAndCommitmentCommitted {
		pre := make([]byte, 0, curve.SizeOfG1AffineUncompressed+len(committed)*fr.Bytes)
		pre = append(pre, proof.Commitments[i].Marshal()...)
		for _, j := range committed {
			// j counts the public wires, then the commitment wires
			// already computed (gnark indexes its growing witness).
			if j < 1 || j > len(witness) {
				return fmt.Errorf("invalid verifying key: commitment %d hashes wire %d of %d", i, j, len(witness))
			}
			pre = append(pre, witness[j-1].Marshal()...)
		}
		htf.Write(pre)
		h := htf.Sum(nil)
		htf.Reset()
		nb := min(fr.Bytes, htf.Size())
		var res fr.Element
		res.SetBytes(h[:nb])
		witness = append(witness, res)
		commitmentsSerialized = append(commitmentsSerialized, res.Marshal()...)
	}
	if len(vk.CommitmentKeys) > 0 {
		challenge, err := fr.Hash(commitmentsSerialized, []byte("G16-BSB22"), 1)
		if err != nil {
			return err
		}
		if err := pedersen.BatchVerifyMultiVk(vk.CommitmentKeys, proof.Commitments, []curve.G1Affine{proof.CommitmentPok}, challenge[0]); err != nil {
			return err
		}
	}

	var kSum curve.G1Jac
	if _, err := kSum.MultiExp(vk.G1.K[1:], witness, ecc.MultiExpConfig{}); err != nil {
		return err
	}
	kSum.AddMixed(&vk.G1.K[0])
	for i := range proof.Commitments {
		kSum.AddMixed(&proof.Commitments[i])
	}
	var kSumAff curve.G1Affine
	kSumAff.FromJacobian(&kSum)

	ml, err := curve.MillerLoop(
		[]curve.G1Affine{proof.Krs, proof.Ar, kSumAff},
		[]curve.G2Affine{vk.G2.deltaNeg, proof.Bs, vk.G2.gammaNeg})
	if err != nil {
		return err
	}
	right := curve.FinalExponentiation(&ml)
	if !vk.e.Equal(&right) {
		return errPairing
	}
	return nil
}
