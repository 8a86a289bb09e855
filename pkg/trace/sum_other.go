//go:build !amd64

package trace

// sumBlocks is sumBlocksGo on architectures without an assembly version.
func sumBlocks(v []float32, acc *[8]float64) { sumBlocksGo(v, acc) }
