package commitment

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/poseidon2"
)

// TestPoseidon2PermutationMatchesGnark: the width-2 permutation and
// compression written out in poseidon2perm.go are gnark-crypto's default
// Poseidon2 permutation and Merkle–Damgård hasher, on edge and random
// states.
func TestPoseidon2PermutationMatchesGnark(t *testing.T) {
	perm := poseidon2.NewDefaultPermutation()
	rng := rand.New(rand.NewPCG(1, 2))
	var minus1 fr.Element
	minus1.SetInt64(-1)
	states := [][2]fr.Element{{}, {fr.One(), {}}, {{}, fr.One()}, {minus1, minus1}}
	for range 200 {
		var s [2]fr.Element
		for j := range s {
			s[j].SetUint64(rng.Uint64())
			var x fr.Element
			x.SetUint64(rng.Uint64())
			s[j].Mul(&s[j], &x).Mul(&s[j], &x).Mul(&s[j], &x)
		}
		states = append(states, s)
	}
	for i, s := range states {
		want := s
		if err := perm.Permutation(want[:]); err != nil {
			t.Fatal(err)
		}
		got := s
		poseidon2Permute(&got)
		if got != want {
			t.Fatalf("state %d: permutation %v, gnark-crypto %v", i, got, want)
		}
		l, r := s[0].Bytes(), s[1].Bytes()
		wc, err := perm.Compress(l[:], r[:])
		if err != nil {
			t.Fatal(err)
		}
		gc := poseidon2Compress(&s[0], &s[1])
		if gb := gc.Bytes(); string(gb[:]) != string(wc) {
			t.Fatalf("state %d: compress %x, gnark-crypto %x", i, gb, wc)
		}
	}
	elems := make([]fr.Element, 40)
	md := poseidon2.NewMerkleDamgardHasher()
	for i := range elems {
		elems[i].SetUint64(rng.Uint64())
		b := elems[i].Bytes()
		md.Write(b[:])
	}
	if got := HashPoseidon2Elements(elems); string(got[:]) != string(md.Sum(nil)) {
		t.Fatalf("HashPoseidon2Elements %x, gnark-crypto's hasher %x", got, md.Sum(nil))
	}
}
