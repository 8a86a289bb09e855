package ceremony

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"

	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

// Sizes of gnark's compressed encodings.
const (
	g1Size     = curve.SizeOfG1AffineCompressed // 32
	g2Size     = curve.SizeOfG2AffineCompressed // 64
	proofSize  = g1Size + g2Size                // one mpcsetup.UpdateProof
	hashSize   = 32                             // a challenge: SHA-256 of the previous state
	phase1Head = 3 * proofSize                  // the τ, α, β update proofs open a phase-1 state
)

// serialize returns gnark's WriteTo bytes of v.
func serialize(v io.WriterTo) ([]byte, error) {
	var b bytes.Buffer
	if _, err := v.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("serialize: %w", err)
	}
	return b.Bytes(), nil
}

// stateErr is a state file problem.
func stateErr(name, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrStateFile, name, fmt.Sprintf(format, a...))
}

// phase1Initial returns the deterministic initial phase-1 state for a
// domain of 2^power: every secret one.
func phase1Initial(power int) ([]byte, *mpcsetup.Phase1, error) {
	p := mpcsetup.NewPhase1(uint64(1) << power)
	b, err := serialize(p)
	return b, p, err
}

// srsSize is the length of sealed phase-1 parameters for a domain of
// 2^power.
func srsSize(power int) uint64 {
	n := uint64(1) << power
	return 8 + g2Size + (2*n-2)*g1Size + (n-1)*g2Size + 2*n*g1Size
}

// phase1Size is the length of a phase-1 state for a domain of 2^power:
// the initial one, or a contribution (which carries its challenge).
func phase1Size(power int, initial bool) uint64 {
	size := phase1Head + srsSize(power) + 1
	if !initial {
		size += hashSize
	}
	return size
}

// readPhase1 decodes a phase-1 state for a domain of 2^power. It checks the
// domain size before gnark allocates anything, the exact size, every point
// (on the curve, in the subgroup: gnark's decoder), and that the bytes are
// the canonical (compressed) encoding, so one state has one hash. initial
// says whether the state is the initial one (no challenge) or a
// contribution (a 32-byte challenge).
func readPhase1(name string, data []byte, power int, initial bool) (*mpcsetup.Phase1, error) {
	n := uint64(1) << power
	want := phase1Size(power, initial)
	if uint64(len(data)) != want {
		return nil, stateErr(name, "%d bytes, want %d for a phase-1 state of domain 2^%d", len(data), want, power)
	}
	if got := binary.BigEndian.Uint64(data[phase1Head:]); got != n {
		return nil, stateErr(name, "domain size %d, want %d", got, n)
	}
	p := new(mpcsetup.Phase1)
	if _, err := p.ReadFrom(bytes.NewReader(data)); err != nil {
		return nil, stateErr(name, "not a phase-1 state: %v", err)
	}
	if err := canonicalCheck(name, p, data); err != nil {
		return nil, err
	}
	return p, nil
}

// readPhase2 decodes a phase-2 state shaped like shape (the initial state
// of the same circuit): the vector lengths are checked against shape's
// before gnark allocates anything, then the exact size, every point, and
// the canonical encoding. With a nil shape the lengths are taken from the
// file, each bounded by the bytes left.
func readPhase2(name string, data []byte, shape *mpcsetup.Phase2, initial bool) (*mpcsetup.Phase2, error) {
	if err := checkPhase2Layout(name, data, shape, initial); err != nil {
		return nil, err
	}
	p := new(mpcsetup.Phase2)
	if _, err := p.ReadFrom(bytes.NewReader(data)); err != nil {
		return nil, stateErr(name, "not a phase-2 state: %v", err)
	}
	if err := canonicalCheck(name, p, data); err != nil {
		return nil, err
	}
	return p, nil
}

// checkPhase2Layout walks the length prefixes of a serialized phase-2
// state (gnark's layout: uint16 commitment count, [δ]₁, PKK, Z, [δ]₂, each
// σ-commitment basis, each [σ]₂, the δ and σ update proofs, the challenge)
// and compares them with shape's.
func checkPhase2Layout(name string, data []byte, shape *mpcsetup.Phase2, initial bool) error {
	off := 0
	need := func(n int) error {
		if n < 0 || len(data)-off < n {
			return stateErr(name, "truncated at byte %d", off)
		}
		return nil
	}
	vec := func(what string, want int) error {
		if err := need(4); err != nil {
			return err
		}
		got := binary.BigEndian.Uint32(data[off:])
		if want < 0 { // no shape: bounded by the file
			if uint64(got) > uint64(len(data)-off)/g1Size {
				return stateErr(name, "%s claims %d points, more than the file holds", what, got)
			}
			want = int(got)
		}
		if uint64(got) != uint64(want) {
			return stateErr(name, "%s has %d points, want %d", what, got, want)
		}
		off += 4
		if err := need(want * g1Size); err != nil {
			return err
		}
		off += want * g1Size
		return nil
	}
	if err := need(2); err != nil {
		return err
	}
	nb := int(binary.BigEndian.Uint16(data))
	length := func(func(*mpcsetup.Phase2) int) int { return -1 }
	if shape != nil {
		if want := len(shape.Parameters.G2.Sigma); nb != want {
			return stateErr(name, "%d commitments, want %d", nb, want)
		}
		length = func(f func(*mpcsetup.Phase2) int) int { return f(shape) }
	} else if nb > len(data)/g2Size {
		return stateErr(name, "claims %d commitments, more than the file holds", nb)
	}
	off += 2 + g1Size
	if err := vec("PKK", length(func(p *mpcsetup.Phase2) int { return len(p.Parameters.G1.PKK) })); err != nil {
		return err
	}
	if err := vec("Z", length(func(p *mpcsetup.Phase2) int { return len(p.Parameters.G1.Z) })); err != nil {
		return err
	}
	off += g2Size
	for i := range nb {
		if err := vec(fmt.Sprintf("SigmaCKK[%d]", i), length(func(p *mpcsetup.Phase2) int { return len(p.Parameters.G1.SigmaCKK[i]) })); err != nil {
			return err
		}
	}
	off += nb*g2Size + (1+nb)*proofSize
	challenge := 0
	if !initial {
		challenge = hashSize
	}
	if want := off + 1 + challenge; len(data) != want {
		return stateErr(name, "%d bytes, want %d", len(data), want)
	}
	if need(1) != nil { // unreachable after the size check; keeps the index safe
		return stateErr(name, "truncated")
	}
	if int(data[off]) != challenge {
		return stateErr(name, "challenge of %d bytes, want %d", data[off], challenge)
	}
	return nil
}

// canonicalCheck refuses a state whose bytes are not what gnark writes for
// the decoded value (e.g. uncompressed points): one state, one hash.
func canonicalCheck(name string, v io.WriterTo, data []byte) error {
	again, err := serialize(v)
	if err != nil {
		return err
	}
	if !bytes.Equal(again, data) {
		return stateErr(name, "not in canonical (compressed) form")
	}
	return nil
}

// readSRS decodes sealed phase-1 parameters for a domain of 2^power, with
// the same checks as readPhase1.
func readSRS(name string, data []byte, power int) (*mpcsetup.SrsCommons, error) {
	n := uint64(1) << power
	want := srsSize(power)
	if uint64(len(data)) != want {
		return nil, stateErr(name, "%d bytes, want %d for sealed parameters of domain 2^%d", len(data), want, power)
	}
	if got := binary.BigEndian.Uint64(data); got != n {
		return nil, stateErr(name, "domain size %d, want %d", got, n)
	}
	c := new(mpcsetup.SrsCommons)
	if _, err := c.ReadFrom(bytes.NewReader(data)); err != nil {
		return nil, stateErr(name, "not sealed phase-1 parameters: %v", err)
	}
	if err := canonicalCheck(name, c, data); err != nil {
		return nil, err
	}
	return c, nil
}

// truncateSRS returns the parameters for the smaller domain 2^power: the
// first powers of the same τ. Phase 1 is run once for the largest domain;
// each circuit's phase 2 uses the prefix its size needs.
func truncateSRS(c *mpcsetup.SrsCommons, power int) *mpcsetup.SrsCommons {
	n := 1 << power
	var t mpcsetup.SrsCommons
	t.G1.Tau = c.G1.Tau[:2*n-1]
	t.G1.AlphaTau = c.G1.AlphaTau[:n]
	t.G1.BetaTau = c.G1.BetaTau[:n]
	t.G2.Tau = c.G2.Tau[:n]
	t.G2.Beta = c.G2.Beta
	return &t
}

// phase1ContributionHash is the hash of a phase-1 contribution's update
// proofs: the first 288 bytes of its state ([x]₁ and the proof of
// knowledge in G2 for τ, α and β).
func phase1ContributionHash(state []byte) string {
	return transcript.HashBytes(state[:phase1Head])
}

// phase2ContributionHash is the hash of a phase-2 contribution's update
// proofs: δ's, then each σᵢ's, in gnark's encoding (96 bytes each).
func phase2ContributionHash(p *mpcsetup.Phase2) (string, error) {
	var b bytes.Buffer
	if _, err := p.Delta.WriteTo(&b); err != nil {
		return "", err
	}
	for i := range p.Sigmas {
		if _, err := p.Sigmas[i].WriteTo(&b); err != nil {
			return "", err
		}
	}
	return transcript.HashBytes(b.Bytes()), nil
}
