// Command svc is the governance proof toolkit: offline verification,
// commitment hashing, keys and the built-in timestamp authority.
package main

import (
	"os"

	"github.com/svc-gov/svc/pkg/app/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.SystemStreams())) }
