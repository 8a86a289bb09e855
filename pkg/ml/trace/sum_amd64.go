package trace

import "golang.org/x/sys/cpu"

// sumBlocks adds the elements of v (a whole number of blocks of four) and
// their squares to the partial sums in acc (s0..s3, q0..q3), in float64,
// exactly as sumBlocksGo does, with SSE2 (two lanes per instruction, the
// same additions in the same order: bit-identical results).
//
//go:noescape
func sumBlocks(v []float32, acc *[8]float64)

// sumBlocks2AVX2 is sumBlocks(a, accA) and sumBlocks(b, accB) in one loop
// with AVX2; a and b have the same length.
//
//go:noescape
func sumBlocks2AVX2(a, b []float32, accA, accB *[8]float64)

// hasAVX2 selects sumBlocks2AVX2 (tests turn it off to compare).
var hasAVX2 = cpu.X86.HasAVX2

// sumBlocks2 is sumBlocks(a, accA) and sumBlocks(b, accB); a and b have
// the same length.
func sumBlocks2(a, b []float32, accA, accB *[8]float64) {
	if hasAVX2 {
		sumBlocks2AVX2(a, b, accA, accB)
		return
	}
	sumBlocks(a, accA)
	sumBlocks(b, accB)
}
