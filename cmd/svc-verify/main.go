// Command svc-verify is the offline verifier for VPECs, model profiles and
// commitment hashes. It never uses the network, and links no network,
// database or service code (deps_test.go guards that).
package main

import (
	"os"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
)

func main() { os.Exit(verifycmd.Main(os.Args[1:], clicore.SystemStreams())) }
