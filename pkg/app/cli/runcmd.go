package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/client"
)

func (a *app) runCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "run", Short: "Open a run for the records of a shell script"}
	cmd.AddCommand(newCmdRunOpen(a, nil))
	return cmd
}

// runOpenOptions are the flags of svc run open.
type runOpenOptions struct {
	co       clientOptions
	so       stateOptions
	workflow string
	policy   []string
	pack     string
}

// newCmdRunOpen builds svc run open; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdRunOpen(a *app, runF func(*runOpenOptions) error) *cobra.Command {
	o := &runOpenOptions{}
	open := &cobra.Command{
		Use:   "open",
		Short: "Open a run and keep it in a state file for 'svc record' and 'svc close'",
		Long: `Open a run and keep its id and chain position in a state file (default
.svc-run.json) so that later 'svc record' and 'svc close' commands of the
same script continue it. If the service is unreachable the run opens
locally and everything is queued: the script is never blocked.`,
		Example: `  MANIFEST=$(svc manifest register pii-check.yaml)
  svc run open --workflow-id claims-intake --policy hipaa
  svc record --check pii_detection --manifest-id "$MANIFEST" --result pass --input-file note.txt
  svc close --out vpec.json`,
		Args: cobra.NoArgs,
		RunE: clientRunE(o, &o.co, nil, runF, a.runRunOpen),
	}
	o.co.add(open)
	o.so.add(open)
	open.Flags().StringVar(&o.workflow, "workflow-id", "", "workflow identity (default \"default\"; env SVC_WORKFLOW_ID)")
	open.Flags().StringArrayVar(&o.policy, "policy", nil, "policy bundle the run is bound to (repeatable)")
	open.Flags().StringVar(&o.pack, "policy-pack", "", "policy pack id")
	return open
}

// runRunOpen opens a run and saves it to the state file.
func (a *app) runRunOpen(ctx context.Context, o *runOpenOptions) error {
	sr, err := o.so.file().Open(ctx, func() (*client.Pipeline, error) { return o.co.pipeline(o.workflow, o.policy) }, o.pack)
	if err != nil {
		return o.so.runError(err, "")
	}
	defer sr.Release()
	run, p := sr.Run, sr.Pipeline
	pending, _ := p.PendingQueueCount()
	if o.co.output == outputJSON {
		return a.writeJSON(map[string]any{"run_id": run.ID(), "workflow_id": run.WorkflowID(), "environment": run.Environment(), "queued": pending > 0, "state": o.so.path})
	}
	fmt.Fprintln(a.streams.Out, run.ID())
	if pending > 0 {
		fmt.Fprintf(a.streams.Err, "%s: warning: the service is unreachable; the run and its records are queued in %s\n", a.name, p.QueuePath())
	}
	return nil
}
