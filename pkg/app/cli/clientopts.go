package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/client"
)

// clientOptions is the flag group of every command that talks to a service.
type clientOptions struct {
	baseURL   string
	apiKey    string
	queuePath string
	timeout   time.Duration
	output    string
}

func (o *clientOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.baseURL, "base-url", "", "service address (env SVC_BASE_URL; default http://127.0.0.1:8080)")
	cmd.Flags().StringVar(&o.apiKey, "api-key", "", "API key, pk_sb_... or pk_live_... (env SVC_API_KEY)")
	cmd.Flags().StringVar(&o.queuePath, "queue-path", "", "durable queue file for records made while the service is unreachable (env SVC_QUEUE_PATH)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", client.DefaultTimeout, "longest a call may take before the record is queued instead")
	addOutputFlag(cmd, &o.output)
}

// validate checks the group's flags alone (--output).
func (o *clientOptions) validate() error { return checkOutput(o.output) }

func (o *clientOptions) pipeline(workflowID string, policy []string) (*client.Pipeline, error) {
	if err := checkOutput(o.output); err != nil {
		return nil, err
	}
	p, err := client.NewPipeline(client.Options{APIKey: o.apiKey, BaseURL: o.baseURL, QueuePath: o.queuePath,
		Timeout: o.timeout, WorkflowID: workflowID, Policy: policy})
	if err != nil {
		hint := ""
		switch {
		case errors.Is(err, client.ErrNoAPIKey), errors.Is(err, client.ErrInvalidAPIKey):
			hint = "pass --api-key or set SVC_API_KEY (an operator creates one with 'svc admin key create')"
		case errors.Is(err, client.ErrQueueLocked):
			hint = "another svc process is using the queue; wait for it or pass another --queue-path"
		}
		return nil, &Error{Code: ExitUsage, Err: err, Hint: hint}
	}
	return p, nil
}

// forRun is pipeline for the workflow of a run restored from a state file.
func (o *clientOptions) forRun(workflowID string) (*client.Pipeline, error) {
	return o.pipeline(workflowID, nil)
}

// do runs fn with a pipeline that needs no workflow identity and
// releases it after.
func (o *clientOptions) do(fn func(p *client.Pipeline) error) error {
	p, err := o.pipeline("", nil)
	if err != nil {
		return err
	}
	defer p.Close()
	return fn(p)
}

// stateOptions locates the run state file.
type stateOptions struct{ path string }

func (o *stateOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.path, "state", statefile.DefaultPath, "file holding the open run between commands (env SVC_STATE)")
}

func (o *stateOptions) file() statefile.File { return statefile.File{Path: o.path} }

// runError is the command error for err of a run kept in a state file;
// sealedHint is the hint when the run is already closed.
func (o *stateOptions) runError(err error, sealedHint string) error {
	var ce *Error
	var other *statefile.OtherServiceError
	switch {
	case errors.As(err, &ce):
		return err
	case errors.As(err, &other):
		return &Error{Code: ExitUsage, Err: err, Hint: fmt.Sprintf("continue it on the service it was opened on: --base-url %s (or SVC_BASE_URL=%s); to start over on %s, remove %s and run 'svc run open'",
			other.OpenedOn, other.OpenedOn, other.BaseURL, o.path)}
	case errors.Is(err, client.ErrNotFound):
		return &Error{Code: ExitUsage, Err: err, Hint: "the service does not know this run: was it opened on another service (check --base-url or SVC_BASE_URL) or with another organisation's API key? Continue it there, or remove " + o.path + " and run 'svc run open'"}
	case errors.Is(err, statefile.ErrNoOpenRun):
		return &Error{Code: ExitUsage, Err: err, Hint: "open one first with 'svc run open' (or pass --state)"}
	case errors.Is(err, statefile.ErrBadState):
		return &Error{Code: ExitUsage, Err: err, Hint: "remove the file and open a new run"}
	case errors.Is(err, statefile.ErrRunStillOpen):
		return &Error{Code: ExitUsage, Err: err, Hint: "close it with 'svc close', or remove " + o.path}
	case errors.Is(err, client.ErrRunSealed):
		return &Error{Code: ExitUsage, Err: err, Hint: sealedHint}
	case errors.Is(err, statefile.ErrStateLock):
		return &Error{Code: ExitFailure, Err: err, Hint: "check the directory of --state is writable"}
	case errors.Is(err, fs.ErrExist):
		return &Error{Code: ExitUsage, Err: err, Hint: "choose another --out or pass --force"}
	}
	return &Error{Code: ExitFailure, Err: err}
}

// clientRunE is the RunE of a command that talks to the service: check
// (nil for none) reads and checks the arguments, then the client options
// are validated, and o goes to runF when it is set (a test's seam) or
// else to run.
func clientRunE[O any](o O, co *clientOptions, check func(args []string) error, runF func(O) error, run func(context.Context, O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if check != nil {
			if err := check(args); err != nil {
				return err
			}
		}
		if err := co.validate(); err != nil {
			return err
		}
		if runF != nil {
			return runF(o)
		}
		return run(cmdContext(cmd), o)
	}
}
