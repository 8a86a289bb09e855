package trace

// SetParallelMin sets from how many traced elements the statistics are
// computed on several goroutines (TracerOptions.StatsWorkers), and returns
// a function restoring the previous setting.
func SetParallelMin(elements int) (restore func()) {
	m := parallelMin
	parallelMin = elements
	return func() { parallelMin = m }
}
