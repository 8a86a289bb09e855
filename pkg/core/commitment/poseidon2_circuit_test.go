package commitment

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/hash/poseidon2"
	"github.com/consensys/gnark/test"
)

// p2Circuit hashes its elements with gnark's in-circuit Poseidon2 and
// asserts the result equals Digest.
type p2Circuit struct {
	Elems  []frontend.Variable
	Digest frontend.Variable `gnark:",public"`
}

func (c *p2Circuit) Define(api frontend.API) error {
	h, err := poseidon2.New(api)
	if err != nil {
		return err
	}
	h.Write(c.Elems...)
	api.AssertIsEqual(h.Sum(), c.Digest)
	return nil
}

// TestPoseidon2MatchesCircuit checks that the native commitment equals the
// digest gnark's std/hash/poseidon2 computes in a circuit over the same
// element sequence, and that the circuit rejects another input's digest.
func TestPoseidon2MatchesCircuit(t *testing.T) {
	for _, payload := range [][]byte{nil, []byte("abc"), make([]byte, 31), []byte(abc448)} {
		elems, err := Poseidon2Elements(Poseidon2TagBytes, payload)
		if err != nil {
			t.Fatal(err)
		}
		want := SumPoseidon2(payload)
		assign := &p2Circuit{Elems: make([]frontend.Variable, len(elems)), Digest: want.Digest}
		for i := range elems {
			assign.Elems[i] = elems[i]
		}
		circuit := &p2Circuit{Elems: make([]frontend.Variable, len(elems))}
		if err := test.IsSolved(circuit, assign, ecc.BN254.ScalarField()); err != nil {
			t.Errorf("payload %q: circuit rejects the native digest %s: %v", payload, want, err)
		}
		other := SumPoseidon2(append([]byte{1}, payload...))
		bad := &p2Circuit{Elems: assign.Elems, Digest: other.Digest}
		if err := test.IsSolved(circuit, bad, ecc.BN254.ScalarField()); err == nil {
			t.Errorf("payload %q: circuit accepts another payload's digest", payload)
		}
	}
}
