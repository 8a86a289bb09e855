// Command largevpec writes a sealed VPEC of -n records and the trust bundle
// that verifies it (vpec.json and trust-bundle.pem in -dir), for
// scripts/bench-verify.sh. It is a benchmark fixture, not a product command.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/svc-gov/svc/internal/testvectors"
)

func main() {
	dir := flag.String("dir", ".", "directory to write vpec.json and trust-bundle.pem into")
	n := flag.Int("n", 10000, "number of records")
	flag.Parse()
	l, err := testvectors.LargeVPEC(*dir, *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "largevpec:", err)
		os.Exit(1)
	}
	fmt.Println(l.VPECPath)
	fmt.Println(l.BundlePath)
}
