// Command genverify builds the offline verifier page (verify.html): go run
// ./internal/webbuild/genverify [-o path] [-version v]. Run from the module
// root (make web does).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/svc-gov/svc/internal/webbuild"
	"github.com/svc-gov/svc/pkg/app/cli/clicore"
)

func main() {
	out := flag.String("o", webbuild.DefaultOut, "page to write")
	version := flag.String("version", clicore.BuildVersion().Version, "version stated in the page (default: this build's version, as svc states its own)")
	flag.Parse()
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "genverify:", err)
		os.Exit(1)
	}
	info, err := webbuild.Build(context.Background(), webbuild.Options{ModuleDir: dir, Out: *out, Version: *version})
	if err != nil {
		fmt.Fprintln(os.Stderr, "genverify:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: version %s, WebAssembly %d bytes sha256:%s, page %d bytes\n", *out, info.Version, info.WasmSize, info.WasmSHA256, info.PageSize)
}
