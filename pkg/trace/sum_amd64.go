package trace

// sumBlocks sets acc to the four partial sums of v's elements and of their
// squares (s0..s3, q0..q3) over the whole blocks of four of v, in float64,
// exactly as sumBlocksGo does, with SSE2 (two lanes per instruction, the
// same additions in the same order: bit-identical results).
//
//go:noescape
func sumBlocks(v []float32, acc *[8]float64)
