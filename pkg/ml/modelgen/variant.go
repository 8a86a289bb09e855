package modelgen

import "math"

// Variant substitutes weights of a generated model, to measure what a
// Bounded Inference audit catches: the graph (and so every trace's
// operators) stays the same, the numbers of one encoder layer (or all)
// change. Weights of the varied layers are stored as float32.
type Variant struct {
	// Layer is the encoder layer whose weights (matrices, biases,
	// LayerNorm parameters) change; -1 changes every layer's.
	Layer int
	// Quantize rounds each varied tensor to 8-bit symmetric per-tensor
	// levels (scale max|w|/127), as a quantised copy of the model would.
	Quantize bool
	// Epsilon multiplies each varied weight w by (1 + Epsilon·g), g a
	// standard normal draw (after Quantize).
	Epsilon float64
	// Seed seeds the draws of g.
	Seed int64
}

// varies reports whether the initializer being added belongs to a varied
// layer.
func (b *builder) varies() bool {
	v := b.variant
	return v != nil && b.layer >= 0 && (v.Layer < 0 || v.Layer == b.layer) && (v.Quantize || v.Epsilon != 0)
}

// vary applies the variant to the tensor f (in place) and returns it.
func (b *builder) vary(f []float32) []float32 {
	v := b.variant
	if v.Quantize {
		var mx float64
		for _, x := range f {
			mx = math.Max(mx, math.Abs(float64(x)))
		}
		if mx > 0 {
			s := mx / 127
			for i, x := range f {
				f[i] = float32(math.Round(float64(x)/s) * s)
			}
		}
	}
	if v.Epsilon != 0 {
		for i, x := range f {
			f[i] = float32(float64(x) * (1 + v.Epsilon*b.vrng.NormFloat64()))
		}
	}
	return f
}
