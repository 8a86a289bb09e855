package vpec_test

import (
	"math"
	"testing"

	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// TestQuantizeProbability: vpec's copy of the fixed-point score is
// conditions.QuantizeScore.
func TestQuantizeProbability(t *testing.T) {
	for _, p := range []float64{0, 0x1p-32, 0.3, 0.5, math.Nextafter(0.5, 0), math.Nextafter(1, 0), 1, math.NaN(), -1, 2, 1e-300} {
		a, aok := vpec.QuantizeProbability(p)
		b, err := conditions.QuantizeScore(p)
		if aok != (err == nil) || (aok && a != int64(b)) {
			t.Errorf("Q(%v): vpec %d %v, conditions %d %v", p, a, aok, b, err)
		}
	}
}
