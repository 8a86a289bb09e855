package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/cli/internal/present"
)

func (a *app) closeCmd() *cobra.Command {
	var (
		co    clientOptions
		so    stateOptions
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "close [--out vpec.json]",
		Short: "Close the open run and write its VPEC",
		Long: `Close the run opened by 'svc run open': the service seals it and issues the
signed, timestamped VPEC, written to --out (default vpec.json). If the
service is unreachable, an unsigned offline VPEC (schema
svc.vpec.unsigned-offline/v1, with a system_unavailable gap) is written
instead and the close is queued; 'svc queue flush' later writes the signed
VPEC over it (or fetch it with 'svc vpec get RUN_ID --out FILE').`,
		Example: `  svc close --out vpec.json && svc verify vpec.json --trust-root trust-bundle.pem`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := os.Stat(out); err == nil && !force {
				return errorf(ExitUsage, "choose another --out or pass --force", "%s already exists", out)
			}
			sr, err := so.file().Continue(co.forRun)
			if err != nil {
				return so.runError(err, "")
			}
			defer sr.Release()
			res, err := sr.CloseTo(cmdContext(cmd), out, force)
			if err != nil {
				return so.runError(err, "the run was already closed")
			}
			if co.output == outputJSON {
				return a.writeJSON(present.ClosedJSON(res, out))
			}
			if res.Offline {
				fmt.Fprintf(a.streams.Err, "%s: warning: the service is unreachable: %s holds an unsigned local VPEC with a system_unavailable gap; the close is queued: 'svc queue flush --state %s' writes the signed VPEC over it (or: svc vpec get %s --out %s)\n", a.name, out, so.path, res.VPEC.RunID, out)
			}
			present.Closed(a.streams.Out, &res.VPEC, out)
			return nil
		},
	}
	co.add(cmd)
	so.add(cmd)
	cmd.Flags().StringVar(&out, "out", "vpec.json", "file to write the VPEC to")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}
