// Command genvectors regenerates svc's test vectors:
//
//	go run ./internal/testvectors/genvectors testdata/vectors
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
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genvectors DIR")
		os.Exit(2)
	}
	if err := testvectors.Generate(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "genvectors:", err)
		os.Exit(1)
	}
}
