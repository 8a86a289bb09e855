package head

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// QuantVersion names the quantisation scheme of docs/PROOFS.md ("The head
// circuit"); it is recorded in every [Quantized].
const QuantVersion = "svc-mlp-int8/v1"

// ActMax is the largest int8 activation after ReLU and clamp; activations
// are in [0, ActMax]. Inputs are any int8, [-128, 127].
const ActMax = 127

// ErrQuantize reports a model that cannot be quantised exactly within the
// scheme's integer bounds (a bias beyond int32, an empty corpus, ...).
var ErrQuantize = errors.New("head: cannot quantise")

// QLayer is one quantised dense layer.
//
// acc[j] = B[j] + sum_i W[j*In+i]*a[i] exactly (int64). A hidden layer
// outputs clamp(floor((acc[j]*M[j] + 2^(Shift-1)) / 2^Shift), 0, 127); the
// last layer outputs acc as the logits.
type QLayer struct {
	In  int     `json:"in"`
	Out int     `json:"out"`
	W   []int8  `json:"w"`
	B   []int32 `json:"b"`
	// M and Shift are the fixed-point rescale of a hidden layer (nil and 0
	// for the last layer).
	M     []int64 `json:"m,omitempty"`
	Shift uint    `json:"shift,omitempty"`
	// WScale is the float value of one weight unit per output row (one
	// value, shared, for the last layer).
	WScale []float64 `json:"w_scale"`
	// OutScale is the float value of one output unit: of an activation for
	// a hidden layer, of a logit for the last.
	OutScale float64 `json:"out_scale"`
	// MaxAcc bounds |acc[j]| over every possible input; the circuit's range
	// checks are sized from it.
	MaxAcc int64 `json:"max_acc"`
}

// Quantized is an int8 MLP head: what the circuit computes, exactly.
type Quantized struct {
	Version string `json:"version"`
	// InputScale is the float value of one input unit: an embedding x is
	// fed as clamp(round(x/InputScale), -127, 127).
	InputScale float64  `json:"input_scale"`
	Layers     []QLayer `json:"layers"`
}

// Dims returns the layer widths: input, hidden..., classes.
func (q *Quantized) Dims() []int {
	d := []int{q.Layers[0].In}
	for _, l := range q.Layers {
		d = append(d, l.Out)
	}
	return d
}

// Report is the quantised model's agreement with the float model on a
// corpus.
type Report struct {
	// Samples is the corpus size.
	Samples int `json:"samples"`
	// ArgmaxAgreement is the share (0 to 1) of samples where both models
	// pick the same class.
	ArgmaxAgreement float64 `json:"argmax_agreement"`
	// MaxLogitError is the largest |float logit - quantised logit *
	// OutScale| over all samples and classes.
	MaxLogitError float64 `json:"max_logit_error"`
	// MaxLogit is the largest |float logit|, for scale.
	MaxLogit float64 `json:"max_logit"`
}

// RandomCorpus returns n deterministic standard-normal vectors of width
// dim (PCG seeded with seed, seed+1): a calibration corpus for heads with
// no real embeddings at hand.
func RandomCorpus(dim, n int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	out := make([][]float32, n)
	for k := range out {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		out[k] = v
	}
	return out
}

// Quantize quantises m with scales calibrated on corpus (docs/PROOFS.md,
// "The head circuit"):
//
//   - input scale s0 = max|x| over the corpus / 127;
//   - hidden layer weights per output row: s_w[j] = max_i |W[j,i]| / 127,
//     W_q = round(W/s_w); last layer one scale for the whole matrix, so the
//     logits of all classes share a unit and argmax over integers is
//     argmax over floats;
//   - biases b_q[j] = round(b[j] / (s_in * s_w[j])) in int32 (s_in the
//     scale of the layer's input);
//   - hidden output scale s_out = max ReLU output of the float model over
//     the corpus / 127; rescale multiplier M[j] = round(s_in*s_w[j]/s_out *
//     2^Shift), Shift the largest in [0, 62] with every M[j] < 2^31 and
//     MaxAcc*M[j] + 2^Shift < 2^62.
//
// round is half away from zero; a zero scale (all-zero row, dead layer) is
// taken as 1. It returns the agreement of the quantised model with m on
// the corpus.
func Quantize(m *Model, corpus [][]float32) (*Quantized, Report, error) {
	if err := m.check(); err != nil {
		return nil, Report{}, err
	}
	if len(corpus) == 0 {
		return nil, Report{}, fmt.Errorf("%w: empty calibration corpus", ErrQuantize)
	}
	in := m.Layers[0].In
	// Float activations per layer input, for calibration.
	maxIn := 0.0
	for k, x := range corpus {
		if len(x) != in {
			return nil, Report{}, fmt.Errorf("%w: corpus vector %d has %d values, the model takes %d", ErrQuantize, k, len(x), in)
		}
		for _, v := range x {
			maxIn = math.Max(maxIn, math.Abs(float64(v)))
		}
	}
	maxAct := make([]float64, len(m.Layers)) // max ReLU output of each hidden layer
	for _, x := range corpus {
		a := make([]float64, in)
		for i, v := range x {
			a[i] = float64(v)
		}
		for li, l := range m.Layers[:len(m.Layers)-1] {
			y := make([]float64, l.Out)
			for j := range y {
				s := float64(l.B[j])
				for i, w := range l.W[j*l.In : (j+1)*l.In] {
					s += float64(w) * a[i]
				}
				y[j] = math.Max(s, 0)
				maxAct[li] = math.Max(maxAct[li], y[j])
			}
			a = y
		}
	}
	q := &Quantized{Version: QuantVersion, InputScale: scale(maxIn)}
	sIn := q.InputScale
	inMax := int64(128) // |input| bound: int8 inputs, then activations <= 127
	for li, l := range m.Layers {
		last := li == len(m.Layers)-1
		ql := QLayer{In: l.In, Out: l.Out, W: make([]int8, len(l.W)), B: make([]int32, l.Out), WScale: make([]float64, l.Out)}
		if last {
			mx := 0.0
			for _, w := range l.W {
				mx = math.Max(mx, math.Abs(float64(w)))
			}
			for j := range ql.WScale {
				ql.WScale[j] = scale(mx)
			}
		} else {
			for j := 0; j < l.Out; j++ {
				mx := 0.0
				for _, w := range l.W[j*l.In : (j+1)*l.In] {
					mx = math.Max(mx, math.Abs(float64(w)))
				}
				ql.WScale[j] = scale(mx)
			}
		}
		for j := 0; j < l.Out; j++ {
			sum := int64(0)
			for i := 0; i < l.In; i++ {
				w := int8(clampInt(roundHalfAway(float64(l.W[j*l.In+i])/ql.WScale[j]), -127, 127))
				ql.W[j*l.In+i] = w
				sum += abs64(int64(w))
			}
			b := roundHalfAway(float64(l.B[j]) / (sIn * ql.WScale[j]))
			if b > math.MaxInt32 || b < math.MinInt32 {
				return nil, Report{}, fmt.Errorf("%w: layer %d bias %d is %g weight units, beyond int32", ErrQuantize, li, j, b)
			}
			ql.B[j] = int32(b)
			ql.MaxAcc = max(ql.MaxAcc, abs64(int64(ql.B[j]))+inMax*sum)
		}
		if last {
			ql.OutScale = sIn * ql.WScale[0]
		} else {
			ql.OutScale = scale(maxAct[li])
			mult := make([]float64, l.Out)
			mmax := 0.0
			for j := range mult {
				mult[j] = sIn * ql.WScale[j] / ql.OutScale
				mmax = math.Max(mmax, mult[j])
			}
			shift := -1
			for k := 62; k >= 0; k-- {
				mk := roundHalfAway(mmax * math.Ldexp(1, k))
				if mk < 1<<mulBits && float64(ql.MaxAcc)*mk+math.Ldexp(1, k) < math.Ldexp(1, 62) {
					shift = k
					break
				}
			}
			if shift < 0 {
				return nil, Report{}, fmt.Errorf("%w: layer %d rescale multiplier %g does not fit", ErrQuantize, li, mmax)
			}
			ql.Shift = uint(shift)
			ql.M = make([]int64, l.Out)
			for j := range mult {
				ql.M[j] = int64(roundHalfAway(mult[j] * math.Ldexp(1, shift)))
			}
			sIn = ql.OutScale
			inMax = ActMax
		}
		q.Layers = append(q.Layers, ql)
	}
	if err := q.Check(); err != nil {
		return nil, Report{}, err
	}
	rep, err := Compare(m, q, corpus)
	return q, rep, err
}

// Compare runs both models on every corpus vector and reports their
// agreement, with m's pure-Go float evaluation as the reference.
func Compare(m *Model, q *Quantized, corpus [][]float32) (Report, error) {
	ref := make([][]float64, len(corpus))
	for k, x := range corpus {
		f, err := m.Eval(x)
		if err != nil {
			return Report{}, err
		}
		ref[k] = f
	}
	return CompareLogits(q, corpus, ref)
}

// CompareLogits reports the agreement of q with reference float logits
// ref[k] of corpus[k] (from ONNX Runtime, or [Model.Eval]).
func CompareLogits(q *Quantized, corpus [][]float32, ref [][]float64) (Report, error) {
	if len(ref) != len(corpus) {
		return Report{}, fmt.Errorf("head: %d reference outputs for %d corpus vectors", len(ref), len(corpus))
	}
	rep := Report{Samples: len(corpus)}
	agree := 0
	unit := q.Layers[len(q.Layers)-1].OutScale
	for k, x := range corpus {
		f := ref[k]
		logits, class, err := q.Run(q.QuantizeInput(x))
		if err != nil {
			return Report{}, err
		}
		if len(f) != len(logits) {
			return Report{}, fmt.Errorf("head: reference output %d has %d values, the head %d", k, len(f), len(logits))
		}
		if class == Argmax64(f) {
			agree++
		}
		for j := range f {
			rep.MaxLogit = math.Max(rep.MaxLogit, math.Abs(f[j]))
			rep.MaxLogitError = math.Max(rep.MaxLogitError, math.Abs(f[j]-float64(logits[j])*unit))
		}
	}
	if len(corpus) > 0 {
		rep.ArgmaxAgreement = float64(agree) / float64(len(corpus))
	}
	return rep, nil
}

// QuantizeInput maps a float embedding to the int8 input:
// clamp(round(x/InputScale), -127, 127), round half away from zero; a NaN
// value gives 0, ±Inf gives ±127.
func (q *Quantized) QuantizeInput(x []float32) []int8 {
	out := make([]int8, len(x))
	for i, v := range x {
		out[i] = int8(clampInt(roundHalfAway(float64(v)/q.InputScale), -127, 127))
	}
	return out
}

// Run computes the quantised head exactly as the circuit does: the logits
// (the last layer's accumulators) and the class (the argmax, smallest
// index on ties).
func (q *Quantized) Run(x []int8) (logits []int64, class int, err error) {
	if len(x) != q.Layers[0].In {
		return nil, 0, fmt.Errorf("head: input has %d values, the head takes %d", len(x), q.Layers[0].In)
	}
	a := make([]int64, len(x))
	for i, v := range x {
		a[i] = int64(v)
	}
	for li, l := range q.Layers {
		y := make([]int64, l.Out)
		for j := range y {
			acc := int64(l.B[j])
			for i, w := range l.W[j*l.In : (j+1)*l.In] {
				acc += int64(w) * a[i]
			}
			if li == len(q.Layers)-1 {
				y[j] = acc
				continue
			}
			y[j] = min(max(rescale(acc, l.M[j], l.Shift), 0), ActMax)
		}
		a = y
	}
	return a, Argmax(a), nil
}

// rescale is floor((acc*m + 2^(shift-1)) / 2^shift) (round half up);
// for shift 0 it is acc*m.
func rescale(acc, m int64, shift uint) int64 {
	t := acc * m
	if shift > 0 {
		t += 1 << (shift - 1)
	}
	return t >> shift // arithmetic shift: floor division
}

// Argmax returns the index of the largest value, the smallest index on
// ties (-1 for an empty slice).
func Argmax(v []int64) int {
	best := -1
	for i, x := range v {
		if best < 0 || x > v[best] {
			best = i
		}
	}
	return best
}

// Argmax64 is [Argmax] over floats.
func Argmax64(v []float64) int {
	best := -1
	for i, x := range v {
		if best < 0 || x > v[best] {
			best = i
		}
	}
	return best
}

// Check validates a Quantized read from elsewhere: shapes, bounds that
// keep every intermediate below 2^62 (so the circuit's field arithmetic
// never wraps), and MaxAcc recomputed from the weights.
func (q *Quantized) Check() error {
	if q.Version != QuantVersion {
		return fmt.Errorf("%w: version %q (want %q)", ErrQuantize, q.Version, QuantVersion)
	}
	if len(q.Layers) == 0 || len(q.Layers) > MaxLayers {
		return fmt.Errorf("%w: %d layers", ErrQuantize, len(q.Layers))
	}
	if !(q.InputScale > 0) || math.IsInf(q.InputScale, 0) {
		return fmt.Errorf("%w: input scale %g", ErrQuantize, q.InputScale)
	}
	params := 0
	inMax := int64(128)
	for li, l := range q.Layers {
		last := li == len(q.Layers)-1
		if l.In < 1 || l.Out < 1 || l.In > MaxWidth || l.Out > MaxWidth || len(l.W) != l.In*l.Out || len(l.B) != l.Out ||
			(li > 0 && q.Layers[li-1].Out != l.In) || (last && l.Out < 2) {
			return fmt.Errorf("%w: layer %d shape", ErrQuantize, li)
		}
		params += len(l.W) + len(l.B)
		var bound int64
		for j := 0; j < l.Out; j++ {
			s := int64(0)
			for _, w := range l.W[j*l.In : (j+1)*l.In] {
				if w == -128 {
					return fmt.Errorf("%w: layer %d weight -128 (weights are in [-127, 127])", ErrQuantize, li)
				}
				s += abs64(int64(w))
			}
			bound = max(bound, abs64(int64(l.B[j]))+inMax*s)
		}
		if bound != l.MaxAcc {
			return fmt.Errorf("%w: layer %d max_acc %d, the weights give %d", ErrQuantize, li, l.MaxAcc, bound)
		}
		if last {
			if l.M != nil || l.Shift != 0 {
				return fmt.Errorf("%w: the last layer has a rescale", ErrQuantize)
			}
			continue
		}
		if len(l.M) != l.Out || l.Shift > 62 {
			return fmt.Errorf("%w: layer %d rescale", ErrQuantize, li)
		}
		for _, m := range l.M {
			if m < 0 || m >= 1<<31 {
				return fmt.Errorf("%w: layer %d multiplier %d outside [0, 2^31)", ErrQuantize, li, m)
			}
			hi, lo := bits.Mul64(uint64(l.MaxAcc), uint64(m))
			if hi != 0 || lo+(1<<l.Shift) >= 1<<62 || lo >= 1<<62 {
				return fmt.Errorf("%w: layer %d max_acc*m reaches 2^62", ErrQuantize, li)
			}
		}
		inMax = ActMax
	}
	if params > MaxParams {
		return fmt.Errorf("%w: %d parameters (at most %d)", ErrQuantize, params, MaxParams)
	}
	return nil
}

func scale(maxAbs float64) float64 {
	if maxAbs == 0 || math.IsNaN(maxAbs) || math.IsInf(maxAbs, 0) {
		return 1
	}
	return maxAbs / 127
}

func roundHalfAway(x float64) float64 { return math.Round(x) }

// clampInt clamps x to [lo, hi]; NaN gives 0.
func clampInt(x, lo, hi float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return math.Max(lo, math.Min(hi, x))
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// mulBits bounds the rescale multipliers Quantize picks: M[j] < 2^mulBits.
// 16 bits keep the rescale's relative error under 2^-16, far below int8
// rounding (2^-8), while keeping Shift (and so the circuit's remainder
// range checks) short.
const mulBits = 16

// ParseQuantized decodes a [Quantized] from its JSON (as json.Marshal
// writes it): unknown fields, trailing data and anything [Quantized.Check]
// refuses are errors wrapping [ErrQuantize].
func ParseQuantized(b []byte) (*Quantized, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var q Quantized
	if err := dec.Decode(&q); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrQuantize, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrQuantize)
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	return &q, nil
}
