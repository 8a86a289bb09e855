package cli

import (
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

func (a *app) adminKeyListCmd() *cobra.Command {
	var data dataOptions
	var org, output string
	cmd := &cobra.Command{
		Use:   "list [--org NAME]",
		Short: "List API keys: id, organisation, environment, created, revoked (never the secret)",
		Example: `  svc admin key list
  svc admin key list --org acme --output json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			st, _, err := data.openExisting(cmdContext(cmd))
			if err != nil {
				return err
			}
			defer st.Close()
			keys, err := server.ListAPIKeys(cmdContext(cmd), st, org)
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return &Error{Code: ExitUsage, Err: err, Hint: "'svc admin org create " + org + "' creates it"}
				}
				return &Error{Code: ExitFailure, Err: err}
			}
			views := make([]keyView, len(keys))
			for i, k := range keys {
				views[i] = viewKey(k)
			}
			if output == outputJSON {
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
		},
	}
	data.add(cmd)
	cmd.Flags().StringVar(&org, "org", "", "only the keys of this organisation")
	addOutputFlag(cmd, &output)
	return cmd
}

func (a *app) adminKeyRevokeCmd() *cobra.Command {
	var data dataOptions
	var output string
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
			if err := checkOutput(output); err != nil {
				return err
			}
			st, _, err := data.openExisting(cmdContext(cmd))
			if err != nil {
				return err
			}
			defer st.Close()
			k, err := server.RevokeAPIKey(cmdContext(cmd), st, args[0], time.Now())
			switch {
			case errors.Is(err, server.ErrInvalid):
				return &Error{Code: ExitUsage, Err: err}
			case errors.Is(err, store.ErrNotFound):
				return &Error{Code: ExitUsage, Err: err, Hint: "'svc admin key list' shows the key ids"}
			case err != nil:
				return &Error{Code: ExitFailure, Err: err}
			}
			if output == outputJSON {
				return a.writeJSON(viewKey(k))
			}
			fmt.Fprintf(a.streams.Out, "API key %s (%s, %s) revoked at %s: servers sharing this database refuse it within %s\n",
				k.ID, k.OrgID, k.Environment, vpec.FormatTime(k.RevokedAt), server.RevocationDelay)
			return nil
		},
	}
	data.add(cmd)
	addOutputFlag(cmd, &output)
	return cmd
}
