package trace

import "github.com/svc-gov/svc/pkg/ml/inference"

// SetParallelMin sets from how many traced elements the statistics are
// computed on several goroutines (TracerOptions.StatsWorkers), and returns
// a function restoring the previous setting.
func SetParallelMin(elements int) (restore func()) {
	m := parallelMin
	parallelMin = elements
	return func() { parallelMin = m }
}

// RunOutputs tokenizes input and runs the tracer's session without
// computing anything from its outputs: what tracing costs in ONNX Runtime
// alone (the overhead benchmark's attribution).
func (t *Tracer) RunOutputs(input []byte) error {
	return t.sess.All(t.m.inputs(t.m.Encode(input)), func([]inference.Output) error { return nil })
}

// HeldSets is the number of output sets the tracer's session holds now.
func (t *Tracer) HeldSets() int { return t.sess.HeldSets() }

// SetStartHook makes every goroutine Start launches call hook before it
// reads the held tensors, and returns a function restoring the previous
// setting.
func SetStartHook(hook func()) (restore func()) {
	h := startHook
	startHook = hook
	return func() { startHook = h }
}
