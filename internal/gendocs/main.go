// Command gendocs regenerates the CLI reference (docs/cli, docs/man) and the
// shell completions (completions/) from the command trees:
//
//	go run ./internal/gendocs
package main

import (
	"fmt"
	"os"

	"github.com/svc-gov/svc/pkg/cli"
)

func main() {
	for _, d := range []string{"docs/cli", "docs/man", "completions"} {
		if err := os.RemoveAll(d); err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(1)
		}
	}
	if err := cli.GenerateDocs("docs", "completions"); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
