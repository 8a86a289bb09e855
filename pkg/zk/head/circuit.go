package head

import (
	"errors"
	"fmt"
	"math/big"
	"math/bits"

	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/hash/poseidon2"
	"github.com/consensys/gnark/std/rangecheck"

	"github.com/svc-gov/svc/pkg/core/commitment"
)

// Circuit proves one run of a quantised head (docs/PROOFS.md, "The head
// circuit"). Public inputs, in this order: the Poseidon2 commitment of the
// int8 input (tag svc/poseidon2/int8/v1, docs/FORMATS.md), the class, the
// logits. Private: the input's payload bytes (value + 128). The weights,
// biases and rescale multipliers are circuit constants.
type Circuit struct {
	// Commitment is the input commitment's digest as a field element.
	Commitment frontend.Variable `gnark:",public"`
	// Class is the argmax of Logits, the smallest index on ties.
	Class frontend.Variable `gnark:",public"`
	// Logits are the last layer's exact integer accumulators (a negative
	// logit is the field element r - |logit|).
	Logits []frontend.Variable `gnark:",public"`
	// Input holds the payload bytes x[i] + 128 of the int8 input.
	Input []frontend.Variable

	q *Quantized
}

// NewCircuit returns the circuit of q with its slices sized, for
// compiling.
func NewCircuit(q *Quantized) *Circuit {
	d := q.Dims()
	return &Circuit{Logits: make([]frontend.Variable, d[len(d)-1]), Input: make([]frontend.Variable, d[0]), q: q}
}

func init() {
	solver.RegisterHint(rescaleHint)
}

// hintFn is the rescale hint Define uses; tests swap in a cheating prover's
// hint (gnark's test engine calls it directly) to check the constraints
// reject it.
var hintFn solver.Hint = rescaleHint

// rescaleHint computes, for t = acc*M + 2^(k-1) (a signed value as a field
// element) and k: q = floor(t / 2^k), r = t - q*2^k, low = [q < 0],
// high = [q > 127].
func rescaleHint(field *big.Int, in, out []*big.Int) error {
	if len(in) != 2 || len(out) != 4 {
		return errors.New("head: rescale hint wants 2 inputs and 4 outputs")
	}
	t := new(big.Int).Set(in[0])
	half := new(big.Int).Rsh(field, 1)
	if t.Cmp(half) > 0 {
		t.Sub(t, field)
	}
	k := uint(in[1].Uint64())
	q := new(big.Int).Rsh(t, k) // floor for negative values too
	r := new(big.Int).Sub(t, new(big.Int).Lsh(q, k))
	out[0].Mod(q, field)
	out[1].Set(r)
	out[2].SetUint64(0)
	out[3].SetUint64(0)
	if q.Sign() < 0 {
		out[2].SetUint64(1)
	} else if q.Cmp(big.NewInt(ActMax)) > 0 {
		out[3].SetUint64(1)
	}
	return nil
}

// bitlen is the number of bits of x >= 0 (at least 1).
func bitlen(x uint64) int {
	return max(1, bits.Len64(x))
}

// Define builds the constraints.
func (c *Circuit) Define(api frontend.API) error {
	q := c.q
	if q == nil {
		return errors.New("head: circuit has no model; use NewCircuit")
	}
	d := q.Dims()
	if len(c.Input) != d[0] || len(c.Logits) != d[len(d)-1] {
		return fmt.Errorf("head: circuit sized %d->%d, the model is %v", len(c.Input), len(c.Logits), d)
	}
	rc := rangecheck.New(api)

	// Input: payload bytes in [0, 256), hashed as the int8-vector
	// commitment: tag, 31-byte chunks (big-endian, last zero-padded), length.
	for _, b := range c.Input {
		rc.Check(b, 8)
	}
	h, err := poseidon2.New(api)
	if err != nil {
		return err
	}
	tag, err := commitment.TagElement(commitment.Poseidon2TagInt8)
	if err != nil {
		return err
	}
	h.Write(tag.BigInt(new(big.Int)))
	for start := 0; start < len(c.Input); start += commitment.Poseidon2ChunkBytes {
		var terms []frontend.Variable
		for p := 0; p < commitment.Poseidon2ChunkBytes; p++ {
			if start+p >= len(c.Input) {
				break
			}
			coef := new(big.Int).Lsh(big.NewInt(1), uint(8*(commitment.Poseidon2ChunkBytes-1-p)))
			terms = append(terms, api.Mul(c.Input[start+p], coef))
		}
		h.Write(sum(api, terms))
	}
	h.Write(len(c.Input))
	api.AssertIsEqual(h.Sum(), c.Commitment)

	// Layers. a[i] is the layer input as a linear expression.
	a := make([]frontend.Variable, len(c.Input))
	for i, b := range c.Input {
		a[i] = api.Sub(b, commitment.Int8Offset)
	}
	for li, l := range q.Layers {
		last := li == len(q.Layers)-1
		y := make([]frontend.Variable, l.Out)
		var qBits int
		if !last {
			mmax := uint64(0)
			for _, m := range l.M {
				mmax = max(mmax, uint64(m))
			}
			// |q| <= (MaxAcc*Mmax + 2^(k-1)) / 2^k + 1 < 2^62.
			qmax := (uint64(l.MaxAcc)*mmax+(uint64(1)<<l.Shift))>>l.Shift + 1
			qBits = max(bitlen(qmax+1), 8)
		}
		for j := 0; j < l.Out; j++ {
			terms := []frontend.Variable{int64(l.B[j])}
			for i, w := range l.W[j*l.In : (j+1)*l.In] {
				if w != 0 {
					terms = append(terms, api.Mul(a[i], int64(w)))
				}
			}
			acc := sum(api, terms)
			if last {
				api.AssertIsEqual(c.Logits[j], acc)
				y[j] = c.Logits[j]
				continue
			}
			half := int64(0)
			if l.Shift > 0 {
				half = 1 << (l.Shift - 1)
			}
			t := api.Add(api.Mul(acc, l.M[j]), half)
			o, err := api.Compiler().NewHint(hintFn, 4, t, l.Shift)
			if err != nil {
				return err
			}
			qv, r, low, high := o[0], o[1], o[2], o[3]
			// t = q*2^k + r, 0 <= r < 2^k: q = floor(t / 2^k).
			api.AssertIsEqual(t, api.Add(api.Mul(qv, new(big.Int).Lsh(big.NewInt(1), l.Shift)), r))
			if l.Shift > 0 {
				rc.Check(r, int(l.Shift))
			} else {
				api.AssertIsEqual(r, 0)
			}
			// clamp(q, 0, 127) with exclusive flags: low => q < 0, out = 0;
			// high => q > 127, out = 127; neither => out = q in [0, 127].
			// One range check of z covers all three cases:
			//   low:     z = -q - 1               in [0, 2^qBits)  <=> q in [-2^qBits, -1]
			//   high:    z = q - 128              in [0, 2^qBits)  <=> q in [128, 2^qBits + 127]
			//   neither: z = q * 2^(qBits-7)      in [0, 2^qBits)  <=> q in [0, 127]
			// with lq = low*q, hq = high*q and mid*q = q - lq - hq.
			api.AssertIsBoolean(low)
			api.AssertIsBoolean(high)
			api.AssertIsBoolean(api.Add(low, high))
			lq := api.Mul(low, qv)
			hq := api.Mul(high, qv)
			midq := api.Sub(qv, lq, hq)
			out := api.Add(midq, api.Mul(high, ActMax))
			z := api.Add(api.Sub(hq, lq, low, api.Mul(high, ActMax+1)), api.Mul(midq, new(big.Int).Lsh(big.NewInt(1), uint(qBits-7))))
			rc.Check(z, qBits)
			y[j] = out
		}
		a = y
	}

	// Argmax: Class selects one logit L; L > logit[j] for j < Class and
	// L >= logit[j] for j > Class (ties go to the smallest index).
	n := len(c.Logits)
	sel := make([]frontend.Variable, n)
	for j := range sel {
		sel[j] = api.IsZero(api.Sub(c.Class, j))
	}
	api.AssertIsEqual(sum(api, sel), 1)
	var picked []frontend.Variable
	for j := range sel {
		picked = append(picked, api.Mul(sel[j], c.Logits[j]))
	}
	L := sum(api, picked)
	lastL := q.Layers[len(q.Layers)-1]
	diffBits := bitlen(2*uint64(lastL.MaxAcc) + 1)
	for j := 0; j < n; j++ {
		var after []frontend.Variable // sel[i] for i > j: 1 when j < Class
		for i := j + 1; i < n; i++ {
			after = append(after, sel[i])
		}
		diff := api.Sub(L, c.Logits[j])
		if len(after) > 0 {
			diff = api.Sub(diff, sum(api, after))
		}
		rc.Check(diff, diffBits)
	}
	return nil
}

// sum adds terms (at least one) as one linear expression.
func sum(api frontend.API, terms []frontend.Variable) frontend.Variable {
	switch len(terms) {
	case 0:
		return 0
	case 1:
		return api.Add(terms[0], 0)
	case 2:
		return api.Add(terms[0], terms[1])
	}
	return api.Add(terms[0], terms[1], terms[2:]...)
}
