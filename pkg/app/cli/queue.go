package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/internal/present"
	"github.com/svc-gov/svc/pkg/client"
)

func (a *app) queueCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "queue", Short: "The durable queue of records made while the service was unreachable"}
	cmd.AddCommand(newCmdQueueStatus(a, nil), newCmdQueueFlush(a, nil))
	return cmd
}

// queueStatusOptions are the flags of svc queue status.
type queueStatusOptions struct{ co clientOptions }

// newCmdQueueStatus builds svc queue status; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdQueueStatus(a *app, runF func(*queueStatusOptions) error) *cobra.Command {
	o := &queueStatusOptions{}
	status := &cobra.Command{
		Use:   "status",
		Short: "Print how many entries wait in the queue",
		Long: `Print how many entries wait in the queue of this base URL and API key (or
--queue-path), and which other queues hold entries: a run queued against
another base URL (or with another key) waits in a queue of its own, which
'svc queue flush' delivers only with that --base-url. Reading the status
creates and changes nothing.`,
		Args: cobra.NoArgs,
		RunE: clientRunE(o, &o.co, nil, runF, func(_ context.Context, o *queueStatusOptions) error { return a.runQueueStatus(o) }),
	}
	o.co.add(status)
	return status
}

// runQueueStatus prints the queue's status (client.StatusOf).
func (a *app) runQueueStatus(o *queueStatusOptions) error {
	st, err := client.StatusOf(client.Options{APIKey: o.co.apiKey, BaseURL: o.co.baseURL, QueuePath: o.co.queuePath})
	if err != nil {
		return &Error{Code: ExitUsage, Err: err, Hint: "check --base-url and --api-key (SVC_BASE_URL, SVC_API_KEY)"}
	}
	if o.co.output == outputJSON {
		return a.writeJSON(st)
	}
	present.QueueStatus(a.streams.Out, st, a.name)
	return nil
}

// queueFlushOptions are the flags of svc queue flush.
type queueFlushOptions struct {
	co clientOptions
	so stateOptions
}

// newCmdQueueFlush builds svc queue flush; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdQueueFlush(a *app, runF func(*queueFlushOptions) error) *cobra.Command {
	o := &queueFlushOptions{}
	flush := &cobra.Command{
		Use:   "flush",
		Short: "Deliver the queued entries in order (exit 1 if some remain)",
		Long: `Deliver the queued entries in order (exit 1 if some remain), and print
the VPEC id of each run whose close was delivered. For a close made offline
with 'svc close --state S --out F', the signed VPEC is written over F, the
unsigned offline VPEC it left, if F still holds exactly what 'svc close'
wrote (a changed file is left alone, with a warning).`,
		Example: `  svc queue flush && svc verify vpec.json --trust-root trust-bundle.pem`,
		Args:    cobra.NoArgs,
		RunE:    clientRunE(o, &o.co, nil, runF, a.runQueueFlush),
	}
	o.co.add(flush)
	o.so.add(flush)
	return flush
}

// runQueueFlush delivers the queue and replaces the state file's unsigned
// copies (statefile.File.Flush).
func (a *app) runQueueFlush(ctx context.Context, o *queueFlushOptions) error {
	return o.co.do(func(p *client.Pipeline) error {
		f := present.NewFlush(o.so.file().Flush(ctx, p))
		if o.co.output == outputJSON {
			if err := a.writeJSON(f.JSON()); err != nil {
				return err
			}
		} else {
			f.Print(a.streams.Out, a.streams.Err, a.name)
		}
		if f.Err != nil {
			return &Error{Code: ExitInvalid, Err: f.Err, Hint: "the service may still be unreachable; the entries stay queued"}
		}
		return nil
	})
}
