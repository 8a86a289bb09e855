// Command svc-verify is the offline verifier for VPECs, model profiles and
// commitment hashes. It never uses the network.
package main

import (
	"os"

	"github.com/svc-gov/svc/pkg/cli"
)

func main() { os.Exit(cli.VerifyMain(os.Args[1:], cli.SystemStreams())) }
