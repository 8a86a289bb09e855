package head

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/test"

	"github.com/svc-gov/svc/pkg/core/commitment"
)

// TestCheatingHintRejected plays a prover who lies in the rescale hint
// while keeping every activation (and so the logits) unchanged, so that
// one constraint alone stands in the way:
//   - a saturated neuron: q moved by one, the remainder by 2^k the other
//     way (the remainder's range check);
//   - q = 0 claimed as "low" (out stays 0) and q = 127 claimed as "high"
//     (out stays 127): the clamp's range check of z.
//
// The honest hint through the same wrapper solves (control).
func TestCheatingHintRejected(t *testing.T) {
	_, q, corpus := loadHead(t, []int{64, 16, 8, 3}, 7)
	tried := map[string]int{}
	for k := range 40 {
		cheatOn(t, q, corpus[k], tried)
	}
	for _, mode := range []string{"high: q+1", "low: q-1", "q=0 as low", "q=127 as high"} {
		if tried[mode] == 0 {
			t.Errorf("%s: no neuron to cheat on in the corpus", mode)
		}
	}
}

func cheatOn(t *testing.T, q *Quantized, xf []float32, tried map[string]int) {
	// Scale the input up so hidden neurons saturate both ways.
	x := q.QuantizeInput(xf)
	for i := range x {
		x[i] = int8(max(-128, min(127, 4*int(x[i]))))
	}
	logits, class, _ := q.Run(x)
	assign := func() *Circuit {
		c := NewCircuit(q)
		c.q = nil
		c.Commitment = commitment.SumPoseidon2Int8(x).Digest
		c.Class = class
		for i := range logits {
			c.Logits[i] = logits[i]
		}
		for i, v := range commitment.Int8Payload(x) {
			c.Input[i] = int(v)
		}
		return c
	}
	field := ecc.BN254.ScalarField()
	defer func() { hintFn = rescaleHint }()
	for _, mode := range []string{"honest", "high: q+1", "low: q-1", "q=0 as low", "q=127 as high"} {
		cheated := 0
		hintFn = func(f *big.Int, in, out []*big.Int) error {
			if err := rescaleHint(f, in, out); err != nil {
				return err
			}
			k := uint(in[1].Uint64())
			step := new(big.Int).Lsh(big.NewInt(1), k)
			switch {
			case mode == "high: q+1" && out[3].Sign() == 1:
				out[0].Add(out[0], big.NewInt(1))
				out[1].Sub(out[1], step).Mod(out[1], f)
				cheated++
			case mode == "low: q-1" && out[2].Sign() == 1:
				out[0].Sub(out[0], big.NewInt(1)).Mod(out[0], f)
				out[1].Add(out[1], step)
				cheated++
			case mode == "q=0 as low" && out[0].Sign() == 0:
				out[2].SetUint64(1)
				cheated++
			case mode == "q=127 as high" && out[0].Cmp(big.NewInt(ActMax)) == 0:
				out[3].SetUint64(1)
				cheated++
			}
			return nil
		}
		err := test.IsSolved(NewCircuit(q), assign(), field)
		if mode == "honest" {
			if err != nil {
				t.Fatalf("honest hint rejected: %v", err)
			}
			continue
		}
		if cheated == 0 {
			continue
		}
		tried[mode]++
		if err == nil {
			t.Errorf("%s: a cheating hint (%d neurons) was accepted", mode, cheated)
		}
	}
}
