package onnxmodel_test

import (
	"math"
	"testing"

	"github.com/svc-gov/svc/pkg/onnxmodel"
)

func TestFloat16(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff},
		{1e6, 0x7c00}, {float32(math.Inf(-1)), 0xfc00}, {5.960464477539063e-8, 0x0001}, {1e-9, 0x0000},
	}
	for _, c := range cases {
		if got := onnxmodel.Float16Bits(c.in); got != c.want {
			t.Errorf("Float16Bits(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	for _, f := range []float32{0.02, -0.0131, 1.5, 1000} {
		back := onnxmodel.Float16Value(onnxmodel.Float16Bits(f))
		if d := math.Abs(float64(back-f)) / math.Abs(float64(f)); d > 1e-3 {
			t.Errorf("round trip of %g gives %g", f, back)
		}
	}
}
