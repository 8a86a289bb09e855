package trace

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// statsReference is Stats written out in Go with the summation order its
// documentation fixes, without sumBlocks.
func statsReference(values []float32) (mean, rms float64) {
	if len(values) == 0 {
		return 0, 0
	}
	var s0, s1, s2, s3, q0, q1, q2, q3 float64
	i := 0
	for ; i+4 <= len(values); i += 4 {
		a, b, c, d := float64(values[i]), float64(values[i+1]), float64(values[i+2]), float64(values[i+3])
		s0, s1, s2, s3 = s0+a, s1+b, s2+c, s3+d
		q0, q1, q2, q3 = q0+float64(a*a), q1+float64(b*b), q2+float64(c*c), q3+float64(d*d)
	}
	for ; i < len(values); i++ {
		f := float64(values[i])
		s0 += f
		q0 += float64(f * f)
	}
	n := float64(len(values))
	return ((s0 + s1) + (s2 + s3)) / n, math.Sqrt(((q0 + q1) + (q2 + q3)) / n)
}

// sameBits reports whether a and b are the same float64, any NaN equal to
// any NaN (payloads are not part of the definition).
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

func checkStats(t *testing.T, v []float32) {
	t.Helper()
	m, r := Stats(v)
	wm, wr := statsReference(v)
	if !sameBits(m, wm) || !sameBits(r, wr) {
		t.Fatalf("Stats(%d values) = %v, %v; reference %v, %v (bits %x %x vs %x %x)", len(v), m, r, wm, wr,
			math.Float64bits(m), math.Float64bits(r), math.Float64bits(wm), math.Float64bits(wr))
	}
	var acc, want [8]float64
	blocks := v[:len(v)&^3]
	sumBlocks(blocks, &acc)
	sumBlocksGo(blocks, &want)
	for i := range acc {
		if !sameBits(acc[i], want[i]) {
			t.Fatalf("sumBlocks(%d values)[%d] = %v, sumBlocksGo %v", len(v), i, acc[i], want[i])
		}
	}
}

// checkPair checks statsPair(a, b), with and without AVX2 where the
// machine has it, against the reference of each.
func checkPair(t *testing.T, a, b []float32) {
	t.Helper()
	defer func(h bool) { hasAVX2 = h }(hasAVX2)
	for _, avx2 := range []bool{hasAVX2, false} {
		hasAVX2 = avx2
		ma, ra, mb, rb := statsPair(a, b)
		wma, wra := statsReference(a)
		wmb, wrb := statsReference(b)
		if !sameBits(ma, wma) || !sameBits(ra, wra) || !sameBits(mb, wmb) || !sameBits(rb, wrb) {
			t.Fatalf("statsPair(%d, %d values), AVX2 %v = %v %v %v %v; reference %v %v %v %v", len(a), len(b), avx2, ma, ra, mb, rb, wma, wra, wmb, wrb)
		}
	}
}

// TestStatsBitIdentical: Stats (sumBlocks, in assembly on amd64) gives the
// same bits as the Go reference of its documented order, on lengths with
// every tail, values of mixed magnitude and sign whose sums round
// differently in another order, and special values.
func TestStatsBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var vectors [][]float32
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 128 * 256, 128*256 + 3} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4)))
		}
		checkStats(t, v)
		vectors = append(vectors, v)
		// A window that does not start at a 16-byte boundary.
		if n > 1 {
			checkStats(t, v[1:])
			vectors = append(vectors, v[1:])
		}
	}
	for _, a := range vectors {
		for _, b := range vectors {
			checkPair(t, a, b)
		}
	}
	specials := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3.4e38, 1e-38}
	for i := range specials {
		for j := range specials {
			checkStats(t, []float32{specials[i], 1, specials[j], -1, 2, specials[i]})
			checkPair(t, []float32{specials[i], 1, 2, 3, specials[j]}, []float32{specials[j], -1, specials[i], 4, 5, 6, 7, 8})
		}
	}
}

// FuzzStats: for any float32 data, Stats equals its Go reference bit for
// bit.
func FuzzStats(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64})
	f.Fuzz(func(t *testing.T, data []byte) {
		v := make([]float32, len(data)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		checkStats(t, v)
		if len(v) > 0 {
			k := int(data[0]) % (len(v) + 1)
			checkPair(t, v[:k], v[k:])
		}
	})
}
