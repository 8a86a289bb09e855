package commitment

import (
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"golang.org/x/crypto/sha3"
)

// The width-2 Poseidon2 permutation over BN254's scalar field with
// gnark-crypto's default parameters (6 full rounds, 50 partial rounds,
// S-box x^5): gnark-crypto v0.21's ecc/bn254/fr/poseidon2
// NewDefaultPermutation, written out here for width 2 only. That package
// parses the round constants of every width from 4 to 16 (2,907 hex
// strings) when a program starts, whether or not it hashes, which was
// most of svc-verify's start-up (docs/BENCHMARKS.md, "Issue 26"); the
// width-2 constants are derived here on first use instead.
// TestPoseidon2PermutationMatchesGnark checks both give the same
// permutation.

const (
	p2FullRounds    = 6
	p2PartialRounds = 50
)

// p2RoundKeys are gnark-crypto's round keys for seed
// "Poseidon2-BN254[t=2,rF=6,rP=50,d=5]": a Keccak-256 chain from the hash
// of the seed, each 32-byte output reduced mod r; two keys per full
// round, one per partial round.
var p2RoundKeys = sync.OnceValue(func() [][]fr.Element {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte("Poseidon2-BN254[t=2,rF=6,rP=50,d=5]"))
	rnd := h.Sum(nil)
	h.Reset()
	h.Write(rnd)
	next := func() (e fr.Element) {
		rnd = h.Sum(nil)
		e.SetBytes(rnd)
		h.Reset()
		h.Write(rnd)
		return e
	}
	keys := make([][]fr.Element, p2FullRounds+p2PartialRounds)
	for i := range keys {
		n := 1
		if i < p2FullRounds/2 || i >= p2FullRounds/2+p2PartialRounds {
			n = 2
		}
		keys[i] = make([]fr.Element, n)
		for j := range keys[i] {
			keys[i][j] = next()
		}
	}
	return keys
})

// sbox5 sets x to x^5.
func sbox5(x *fr.Element) {
	var t fr.Element
	t.Square(x).Square(&t)
	x.Mul(x, &t)
}

// external multiplies s by circ(2, 1) = [[2,1],[1,2]].
func external(s *[2]fr.Element) {
	var t fr.Element
	t.Add(&s[0], &s[1])
	s[0].Add(&s[0], &t)
	s[1].Add(&s[1], &t)
}

// poseidon2Permute applies the permutation to s in place.
func poseidon2Permute(s *[2]fr.Element) {
	keys := p2RoundKeys()
	external(s)
	rf := p2FullRounds / 2
	full := func(k []fr.Element) {
		s[0].Add(&s[0], &k[0])
		s[1].Add(&s[1], &k[1])
		sbox5(&s[0])
		sbox5(&s[1])
		external(s)
	}
	for i := 0; i < rf; i++ {
		full(keys[i])
	}
	for i := rf; i < rf+p2PartialRounds; i++ {
		// internal matrix [[2,1],[1,3]]
		s[0].Add(&s[0], &keys[i][0])
		sbox5(&s[0])
		var sum fr.Element
		sum.Add(&s[0], &s[1])
		s[0].Add(&s[0], &sum)
		s[1].Double(&s[1]).Add(&s[1], &sum)
	}
	for i := rf + p2PartialRounds; i < p2FullRounds+p2PartialRounds; i++ {
		full(keys[i])
	}
}

// poseidon2Compress is gnark-crypto's Permutation.Compress on elements:
// P(l, r)[1] + r.
func poseidon2Compress(l, r *fr.Element) fr.Element {
	x := [2]fr.Element{*l, *r}
	poseidon2Permute(&x)
	var out fr.Element
	out.Add(&x[1], r)
	return out
}
