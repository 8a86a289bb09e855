// Command svc-verify is the offline verifier for VPECs, model profiles and
// commitment hashes. It never uses the network, and links no network,
// database or service code (deps_test.go guards that).
package main

import (
	"os"
	"runtime/debug"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
)

// gcMemoryLimit is the heap size at which svc-verify starts collecting
// garbage when neither GOGC nor GOMEMLIMIT is set. A verification is one
// short batch job: collecting while the heap grows from 4 MiB to the
// ~40 MiB a 10,000-record VPEC needs costs a quarter of its CPU
// (docs/BENCHMARKS.md, "svc-verify, the shipped binary") and frees
// nothing the job still needs. Larger documents still collect, at this
// limit, as a soft bound.
const gcMemoryLimit = 512 << 20

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(gcMemoryLimit)
	}
	os.Exit(verifycmd.Main(os.Args[1:], clicore.SystemStreams()))
}
