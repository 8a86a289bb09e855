// Command genvectors regenerates svc's test vectors:
//
//	go run ./internal/testvectors/genvectors testdata/vectors
//	go run ./internal/testvectors/genvectors -trust-only testdata/vectors
//
// Key material under keys/ is kept when present; documents are rewritten.
package main

import (
	"fmt"
	"os"

	"github.com/consensys/gnark/logger"

	"github.com/svc-gov/svc/internal/testvectors"
)

func main() {
	logger.Disable() // gnark logs a debug line per compile, setup and proof
	gen := testvectors.Generate
	args := os.Args[1:]
	if len(args) == 2 && args[0] == "-trust-only" {
		// Only testdata/vectors/trust: the transparency log and trust
		// root vectors, leaving the rest of the corpus as it is.
		gen, args = testvectors.GenerateTrust, args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: genvectors [-trust-only] DIR")
		os.Exit(2)
	}
	if err := gen(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "genvectors:", err)
		os.Exit(1)
	}
}
