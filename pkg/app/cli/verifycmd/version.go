package verifycmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
)

// Version is the version command.
func Version(a *clicore.App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := clicore.CheckOutput(output); err != nil {
				return err
			}
			v := clicore.BuildVersion()
			if output == clicore.OutputJSON {
				return a.WriteJSON(v)
			}
			fmt.Fprintln(a.Streams.Out, v.Line(a.Name))
			return nil
		},
	}
	clicore.AddOutputFlag(cmd, &output)
	return cmd
}
