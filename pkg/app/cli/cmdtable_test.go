package cli_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli"
)

// TestReadmeCommandTable: README.md's command table is the one the command
// trees generate (go run ./internal/gendocs), so a new command cannot be
// left out of it (vpec get, record-proof, registry publish-circuit,
// get-circuit and admin calibration status were).
func TestReadmeCommandTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(docsRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := cli.GenerateReadme(readme)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(readme) {
		t.Fatal("README.md's command table is stale: run go run ./internal/gendocs")
	}
	table := cli.CommandTable()
	for _, root := range []*cobra.Command{cli.NewVerifyCommand(quietStreams()), cli.NewSvcCommand(quietStreams())} {
		var walk func(c *cobra.Command)
		walk = func(c *cobra.Command) {
			for _, k := range c.Commands() {
				if !k.IsAvailableCommand() || k.Name() == "help" || k.Name() == "completion" {
					continue
				}
				if k.Runnable() && !strings.Contains(table, "`"+k.CommandPath()) && !strings.Contains(table, "`"+strings.TrimPrefix(k.CommandPath(), root.Name()+" ")+"`") {
					t.Errorf("the command table does not list %s", k.CommandPath())
				}
				walk(k)
			}
		}
		walk(root)
	}
	if _, err := cli.GenerateReadme([]byte("no markers")); !errors.Is(err, cli.ErrNoTableMarkers) {
		t.Errorf("GenerateReadme without markers: %v", err)
	}
}
