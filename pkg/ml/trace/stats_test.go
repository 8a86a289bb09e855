package trace

import (
	"math"
	"testing"
)

func TestStats(t *testing.T) {
	tests := []struct {
		name      string
		in        []float32
		mean, rms float64
	}{
		{"empty", nil, 0, 0},
		{"one", []float32{-2}, -2, 2},
		{"three (tail only)", []float32{1, 2, 3}, 2, math.Sqrt(14.0 / 3)},
		{"five (one block and a tail)", []float32{1, -1, 1, -1, 5}, 1, math.Sqrt(29.0 / 5)},
		{"eight", []float32{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 0.5, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mean, rms := Stats(tc.in)
			if math.Abs(mean-tc.mean) > 1e-12 || math.Abs(rms-tc.rms) > 1e-12 {
				t.Fatalf("Stats = %v, %v; want %v, %v", mean, rms, tc.mean, tc.rms)
			}
		})
	}
}

// BenchmarkStats: the statistics of one 128 x 256 activation.
func BenchmarkStats(b *testing.B) {
	v := make([]float32, 128*256)
	for i := range v {
		v[i] = float32(i%97) * 0.01
	}
	b.SetBytes(int64(len(v) * 4))
	for i := 0; i < b.N; i++ {
		Stats(v)
	}
}

// BenchmarkStatsReference: BenchmarkStats' activation through the pure-Go
// reference of the same summation order (the baseline of the SSE2 sums).
func BenchmarkStatsReference(b *testing.B) {
	v := make([]float32, 128*256)
	for i := range v {
		v[i] = float32(i%97) * 0.01
	}
	b.SetBytes(int64(len(v) * 4))
	for i := 0; i < b.N; i++ {
		statsReference(v)
	}
}

// BenchmarkStatsPair: the statistics of two 128 x 256 activations in one
// loop (statsPair: AVX2 where the machine has it), to compare with two
// BenchmarkStats.
func BenchmarkStatsPair(b *testing.B) {
	v := make([]float32, 2*128*256)
	for i := range v {
		v[i] = float32(i%97) * 0.01
	}
	b.SetBytes(int64(len(v) * 4))
	for i := 0; i < b.N; i++ {
		statsPair(v[:len(v)/2], v[len(v)/2:])
	}
}
