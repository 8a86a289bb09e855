package cli

import (
	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/internal/present"
	"github.com/svc-gov/svc/pkg/client"
)

func (a *app) queueCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "queue", Short: "The durable queue of records made while the service was unreachable"}
	var sco, fco clientOptions
	status := &cobra.Command{
		Use:   "status",
		Short: "Print how many entries wait in the queue",
		Long: `Print how many entries wait in the queue of this base URL and API key (or
--queue-path), and which other queues hold entries: a run queued against
another base URL (or with another key) waits in a queue of its own, which
'svc queue flush' delivers only with that --base-url. Reading the status
creates and changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(sco.output); err != nil {
				return err
			}
			st, err := client.StatusOf(client.Options{APIKey: sco.apiKey, BaseURL: sco.baseURL, QueuePath: sco.queuePath})
			if err != nil {
				return &Error{Code: ExitUsage, Err: err, Hint: "check --base-url and --api-key (SVC_BASE_URL, SVC_API_KEY)"}
			}
			if sco.output == outputJSON {
				return a.writeJSON(st)
			}
			present.QueueStatus(a.streams.Out, st, a.name)
			return nil
		},
	}
	sco.add(status)
	var fso stateOptions
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
		RunE: func(cmd *cobra.Command, args []string) error {
			return fco.do(func(p *client.Pipeline) error {
				f := present.NewFlush(fso.file().Flush(cmdContext(cmd), p))
				if fco.output == outputJSON {
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
		},
	}
	fco.add(flush)
	fso.add(flush)
	cmd.AddCommand(status, flush)
	return cmd
}
