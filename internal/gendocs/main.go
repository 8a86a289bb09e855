// Command gendocs regenerates the CLI reference (docs/cli, docs/man), the
// shell completions (completions/) and README.md's command table from the
// command trees:
//
//	go run ./internal/gendocs
package main

import (
	"fmt"
	"os"

	"github.com/svc-gov/svc/pkg/app/cli"
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
	readme, err := os.ReadFile("README.md")
	if err == nil {
		readme, err = cli.GenerateReadme(readme)
	}
	if err == nil {
		err = os.WriteFile("README.md", readme, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs: README.md:", err)
		os.Exit(1)
	}
}
