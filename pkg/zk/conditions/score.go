package conditions

import (
	"errors"
	"fmt"
	"math"
)

// ErrScore reports a probability that cannot be quantised: NaN, infinite,
// below 0 or above 1.
var ErrScore = errors.New("conditions: score is not a probability in [0, 1]")

// MaxValue is the largest committed value or bound, 2^32 - 1.
const MaxValue = 1<<ValueBits - 1

// QuantizeScore maps a probability p in [0, 1] to the unsigned integer a
// threshold circuit commits (docs/PROOFS.md, "Quantised scores"):
//
//	Q(p) = min(floor(p · 2^32), 2^32 − 1)
//
// p · 2^32 is exact in float64 (a power-of-two scaling), so Q is exact and
// the same in every IEEE-754 implementation. NaN, ±Inf and values outside
// [0, 1] give ErrScore (no proof is made for them).
func QuantizeScore(p float64) (uint32, error) {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return 0, fmt.Errorf("%w: %v", ErrScore, p)
	}
	q := math.Floor(math.Ldexp(p, ValueBits))
	if q > MaxValue {
		q = MaxValue
	}
	return uint32(q), nil
}

// ScoreBelow is the Bounded Inference verdict on quantised values: true
// (pass) exactly when Q(score) < Q(threshold), which is what a
// below_threshold_check proof states. It implies score < threshold (so it
// never passes a score the float comparison fails); it differs from the
// float comparison only for scores in [Q(threshold)/2^32, threshold), an
// interval narrower than 2^-32, empty when the threshold is a multiple of
// 2^-32 (0.5, 0.25, ...) other than 1. Errors are QuantizeScore's.
func ScoreBelow(score, threshold float64) (bool, error) {
	s, err := QuantizeScore(score)
	if err != nil {
		return false, err
	}
	t, err := QuantizeScore(threshold)
	if err != nil {
		return false, fmt.Errorf("threshold: %w", err)
	}
	return s < t, nil
}
