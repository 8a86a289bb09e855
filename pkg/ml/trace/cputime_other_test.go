//go:build !unix

package trace_test

import "time"

// cpuTime is 0 where getrusage is not available: the benchmark's CPU
// figures are then meaningless (NaN).
func cpuTime() time.Duration { return 0 }
