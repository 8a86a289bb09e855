package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/service/server/setup"
)

// healthcheckOptions are the flags of svc healthcheck.
type healthcheckOptions struct {
	url     string
	timeout time.Duration
}

// validate checks the flags alone.
func (o *healthcheckOptions) validate() error {
	if o.timeout <= 0 {
		return errorf(ExitUsage, "give a positive duration, e.g. --timeout 5s", "--timeout must be positive, is %s", o.timeout)
	}
	return nil
}

// newCmdHealthcheck builds svc healthcheck; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdHealthcheck(a *app, runF func(*healthcheckOptions) error) *cobra.Command {
	o := &healthcheckOptions{}
	cmd := &cobra.Command{
		Use:   "healthcheck [--url URL]",
		Short: "Probe a service's /healthz (a container's HEALTHCHECK): exit 0 healthy, 1 not",
		Long: `Ask a running service whether it is healthy: GET --url (default
` + setup.DefaultProbeURL + `) must answer 200 with status "ok" (or, for
/readyz, "ready") within --timeout. Exit 0 when it does, 1 when it does
not (the exit codes a container HEALTHCHECK expects), saying why on
stderr. The container image runs it, since it has no shell and no curl.`,
		Example: `  svc healthcheck --url http://127.0.0.1:8080/healthz
  svc healthcheck --url http://127.0.0.1:8080/readyz --timeout 3s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runHealthcheck(cmdContext(cmd), o)
		},
	}
	cmd.Flags().StringVar(&o.url, "url", setup.DefaultProbeURL, "the health endpoint to ask (/healthz, or /readyz)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}

// runHealthcheck asks the service (setup.Probe).
func (a *app) runHealthcheck(ctx context.Context, o *healthcheckOptions) error {
	h, err := setup.Probe(ctx, o.url, o.timeout)
	if errors.Is(err, setup.ErrUnhealthy) {
		return &Error{Code: ExitInvalid, Err: err}
	}
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	version := ""
	if h.Version != "" {
		version = " (svc " + h.Version + ")"
	}
	fmt.Fprintf(a.streams.Out, "%s: %s%s\n", strings.TrimSuffix(o.url, "/"), h.Status, version)
	return nil
}
