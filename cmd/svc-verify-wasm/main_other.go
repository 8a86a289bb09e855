//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// Built for anything but WebAssembly, the command says how to build it.
func main() {
	fmt.Fprintln(os.Stderr, "svc-verify-wasm: build it with GOOS=js GOARCH=wasm (make web builds verify.html around it)")
	os.Exit(2)
}
