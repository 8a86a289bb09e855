package trace

// SetStatsParallelism sets how many goroutines compute a trace's
// statistics (0: GOMAXPROCS) and from how many elements they are used,
// and returns a function restoring the previous settings.
func SetStatsParallelism(workers, minElements int) (restore func()) {
	w, m := statsWorkers, parallelMin
	statsWorkers, parallelMin = workers, minElements
	return func() { statsWorkers, parallelMin = w, m }
}
