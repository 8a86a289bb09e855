package verifycmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/cli/clicore"
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
			w := a.Streams.Out
			fmt.Fprintf(w, "%s %s", a.Name, v.Version)
			if v.Commit != "" {
				fmt.Fprintf(w, " (%s", v.Commit)
				if v.Date != "" {
					fmt.Fprintf(w, ", %s", v.Date)
				}
				fmt.Fprint(w, ")")
			}
			fmt.Fprintf(w, " %s %s\n", v.GoVersion, v.Platform)
			return nil
		},
	}
	clicore.AddOutputFlag(cmd, &output)
	return cmd
}
