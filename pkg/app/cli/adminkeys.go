package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// keyView is an API key as 'svc admin key list --output json' prints it:
// never the secret, which is not stored.
type keyView struct {
	KeyID       string `json:"key_id"`
	OrgID       string `json:"org_id"`
	Environment string `json:"environment"`
	CreatedAt   string `json:"created_at"`
	Revoked     bool   `json:"revoked"`
	RevokedAt   string `json:"revoked_at,omitempty"`
}

func viewKey(k store.APIKey) keyView {
	v := keyView{KeyID: k.ID, OrgID: k.OrgID, Environment: k.Environment, CreatedAt: vpec.FormatTime(k.CreatedAt)}
	if !k.RevokedAt.IsZero() {
		v.Revoked, v.RevokedAt = true, vpec.FormatTime(k.RevokedAt)
	}
	return v
}

// keyListOptions are the flags of svc admin key list.
type keyListOptions struct {
	data        dataOptions
	org, output string
}

// newCmdKeyList builds svc admin key list; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdKeyList(a *app, runF func(*keyListOptions) error) *cobra.Command {
	o := &keyListOptions{}
	cmd := &cobra.Command{
		Use:   "list [--org NAME]",
		Short: "List API keys: id, organisation, environment, created, revoked (never the secret)",
		Example: `  svc admin key list
  svc admin key list --org acme --output json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runKeyList(cmdContext(cmd), o)
		},
	}
	o.data.add(cmd)
	cmd.Flags().StringVar(&o.org, "org", "", "only the keys of this organisation")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runKeyList prints the API keys (server.ListAPIKeys).
func (a *app) runKeyList(ctx context.Context, o *keyListOptions) error {
	st, _, err := o.data.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	keys, err := server.ListAPIKeys(ctx, st, o.org)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Code: ExitUsage, Err: err, Hint: "'svc admin org create " + o.org + "' creates it"}
		}
		return &Error{Code: ExitFailure, Err: err}
	}
	views := make([]keyView, len(keys))
	for i, k := range keys {
		views[i] = viewKey(k)
	}
	if o.output == outputJSON {
		return a.writeJSON(views)
	}
	if len(views) == 0 {
		fmt.Fprintln(a.streams.Err, a.name+": no API keys; create one with 'svc admin key create --org NAME --sandbox'")
		return nil
	}
	tw := tabwriter.NewWriter(a.streams.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tORG\tENVIRONMENT\tCREATED\tREVOKED")
	for _, v := range views {
		revoked := "-"
		if v.Revoked {
			revoked = v.RevokedAt
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.KeyID, v.OrgID, v.Environment, v.CreatedAt, revoked)
	}
	return tw.Flush()
}

// keyRevokeOptions are the flags and argument of svc admin key revoke.
type keyRevokeOptions struct {
	keyID  string
	data   dataOptions
	output string
}

// newCmdKeyRevoke builds svc admin key revoke; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdKeyRevoke(a *app, runF func(*keyRevokeOptions) error) *cobra.Command {
	o := &keyRevokeOptions{}
	cmd := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke an API key: every server sharing the database refuses it within a second",
		Long: `Revoke an API key by its id (as 'svc admin key list' shows it, e.g.
pk_live_9c1e4b7a2f30). Every server using the same database refuses the key
within a second, answering 401 with a message saying it was revoked.
Revocation is permanent; revoking a revoked key changes nothing. Runs the
key opened stay as they are: their VPECs, issued or to be issued with
another key of the organisation, still name the key that opened them.`,
		Example: `  svc admin key revoke pk_live_9c1e4b7a2f30`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.keyID = args[0]
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runKeyRevoke(cmdContext(cmd), o)
		},
	}
	o.data.add(cmd)
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runKeyRevoke revokes the key (server.RevokeAPIKey).
func (a *app) runKeyRevoke(ctx context.Context, o *keyRevokeOptions) error {
	st, _, err := o.data.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	k, err := server.RevokeAPIKey(ctx, st, o.keyID, time.Now())
	switch {
	case errors.Is(err, server.ErrInvalid):
		return &Error{Code: ExitUsage, Err: err}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: ExitUsage, Err: err, Hint: "'svc admin key list' shows the key ids"}
	case err != nil:
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.output == outputJSON {
		return a.writeJSON(viewKey(k))
	}
	fmt.Fprintf(a.streams.Out, "API key %s (%s, %s) revoked at %s: servers sharing this database refuse it within %s\n",
		k.ID, k.OrgID, k.Environment, vpec.FormatTime(k.RevokedAt), server.RevocationDelay)
	return nil
}
