//go:build !amd64

package trace

// hasAVX2 is false off amd64.
var hasAVX2 = false

// sumBlocks is sumBlocksGo on architectures without an assembly version.
func sumBlocks(v []float32, acc *[8]float64) { sumBlocksGo(v, acc) }

// sumBlocks2 is sumBlocks(a, accA) and sumBlocks(b, accB).
func sumBlocks2(a, b []float32, accA, accB *[8]float64) {
	sumBlocksGo(a, accA)
	sumBlocksGo(b, accB)
}
