package cli_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/testvectors"
)

// BenchmarkVerifyBinary10k runs the real svc-verify binary on a
// 10,000-record VPEC, end to end (process start, read, verify, report).
// Baselines in the same run: `jq empty` parsing the same file, and
// `svc-verify version` (process start alone). Target: under 150 ms.
func BenchmarkVerifyBinary10k(b *testing.B) {
	l, err := testvectors.LargeVPEC(b.TempDir(), 10000)
	if err != nil {
		b.Fatal(err)
	}
	timeIt := func(name string, args ...string) time.Duration {
		var total time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", name, err, out)
			}
			total += time.Since(start)
		}
		return total / time.Duration(b.N)
	}
	b.ResetTimer()
	ours := timeIt("svc-verify", "verify", l.VPECPath, "--trust-root", l.BundlePath, "--output", "json")
	b.StopTimer()
	b.ReportMetric(float64(ours.Milliseconds()), "ms/verify")
	start := timeIt("svc-verify", "version")
	b.ReportMetric(float64(start.Microseconds())/1000, "ms/startup")
	if _, err := exec.LookPath("jq"); err == nil {
		jq := timeIt("jq", "empty", l.VPECPath)
		b.ReportMetric(float64(jq.Microseconds())/1000, "ms/jq-parse")
		b.ReportMetric(float64(ours)/float64(jq), "x-jq")
	}
}
