// Package gnarkcheck cross-checks pkg/zk/zkverify's Groth16 BN254
// verifier (gnark-crypto alone) against gnark's own
// backend/groth16/bn254 verifier on the same bytes, for tests: the two
// must accept and refuse the same proofs, except where zkverify's
// one-encoding rules refuse bytes gnark reads (docs/FORMATS.md).
package gnarkcheck

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// gnarkVerify decodes with gnark's readers and verifies with gnark's
// verifier; a panic is an error.
func gnarkVerify(vkb, pb []byte, pub fr.Vector) (proof *groth16bn254.Proof, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("gnark panicked: %v", p)
		}
	}()
	vk := new(groth16bn254.VerifyingKey)
	if n, err := vk.ReadFrom(bytes.NewReader(vkb)); err != nil || n != int64(len(vkb)) {
		return nil, fmt.Errorf("gnark: verifying key: %v (%d of %d bytes)", err, n, len(vkb))
	}
	proof = new(groth16bn254.Proof)
	if n, err := proof.ReadFrom(bytes.NewReader(pb)); err != nil || n != int64(len(pb)) {
		return nil, fmt.Errorf("gnark: proof: %v (%d of %d bytes)", err, n, len(pb))
	}
	return proof, groth16bn254.Verify(proof, vk, append(fr.Vector(nil), pub...))
}

// Case is one verification both verifiers run.
type Case struct {
	Name  string
	Proof []byte
	Pub   fr.Vector
}

// Cases derives, from an honest proof and its public inputs, the cases
// Agree runs: the honest one, each public input changed, one input too
// few and too many, G1 points of the proof swapped for one another (the
// commitments and the proof of knowledge too), and bytes flipped.
func Cases(proof []byte, pub fr.Vector) []Case {
	cs := []Case{{"honest", proof, pub}}
	for i := range pub {
		p := append(fr.Vector(nil), pub...)
		var one fr.Element
		one.SetOne()
		p[i].Add(&p[i], &one)
		cs = append(cs, Case{fmt.Sprintf("public input %d + 1", i), proof, p})
	}
	cs = append(cs, Case{"one input too few", proof, pub[:len(pub)-1]})
	var z fr.Element
	cs = append(cs, Case{"one input too many", proof, append(append(fr.Vector(nil), pub...), z)})
	// G1 offsets: Ar 0, Krs 96, commitments from 132, proof of knowledge last.
	g1 := []int{0, 96}
	for o := 132; o+32 <= len(proof); o += 32 {
		g1 = append(g1, o)
	}
	for _, a := range g1 {
		for _, b := range g1 {
			if a == b {
				continue
			}
			p := bytes.Clone(proof)
			copy(p[b:b+32], proof[a:a+32])
			cs = append(cs, Case{fmt.Sprintf("G1 at %d copied to %d", a, b), p, pub})
		}
	}
	for i := 0; i < len(proof); i += 7 {
		p := bytes.Clone(proof)
		p[i] ^= 0x01
		cs = append(cs, Case{fmt.Sprintf("byte %d flipped", i), p, pub})
	}
	return cs
}

// Agree runs every case through zkverify.Verify and gnark's verifier and
// fails t where they disagree. zkverify may refuse with ErrEncoding
// only what gnark cannot decode, or a proof without commitments whose
// proof of knowledge is not the point at infinity (gnark never reads it).
// It returns how many cases each accepted.
func Agree(t testing.TB, vk []byte, cases []Case) (accepted int) {
	t.Helper()
	for _, c := range cases {
		ours := zkverify.Verify(vk, c.Proof, c.Pub)
		gp, theirs := gnarkVerify(vk, c.Proof, c.Pub)
		switch {
		case ours == nil && theirs == nil:
			accepted++
		case errors.Is(ours, zkverify.ErrEncoding) && theirs == nil:
			if gp == nil || len(gp.Commitments) != 0 || gp.CommitmentPok.IsInfinity() {
				t.Errorf("%s: zkverify refuses the encoding (%v), gnark verifies it", c.Name, ours)
			}
		case (ours == nil) != (theirs == nil):
			t.Errorf("%s: zkverify: %v; gnark: %v", c.Name, ours, theirs)
		}
	}
	return accepted
}
