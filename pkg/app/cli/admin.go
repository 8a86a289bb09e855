package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

type adminOptions struct {
	data    dataOptions
	tier    string
	org     string
	sandbox bool
	live    bool
	output  string
}

func (a *app) adminCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Manage organisations and API keys of a service"}
	o := &adminOptions{}
	org := &cobra.Command{Use: "org", Short: "Manage organisations"}
	orgCreate := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create an organisation",
		Example: `  svc admin org create globex --tier enterprise`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			st, _, err := o.data.open(cmdContext(cmd), a.streams.Err)
			if err != nil {
				return err
			}
			defer st.Close()
			created, err := server.CreateOrg(cmdContext(cmd), st, args[0], o.tier, time.Now())
			if err != nil {
				if errors.Is(err, store.ErrExists) || errors.Is(err, server.ErrInvalid) {
					return &Error{Code: ExitUsage, Err: err}
				}
				return &Error{Code: ExitFailure, Err: err}
			}
			res := map[string]string{"org_id": created.ID, "name": created.Name, "tier": created.Tier}
			if o.output == outputJSON {
				return a.writeJSON(res)
			}
			fmt.Fprintf(a.streams.Out, "organisation %s created (id %s, tier %s)\n", created.Name, created.ID, created.Tier)
			return nil
		},
	}
	o.data.add(orgCreate)
	orgCreate.Flags().StringVar(&o.tier, "tier", server.TierStandard, "standard or enterprise (calibration turnaround 7d or 48h)")
	addOutputFlag(orgCreate, &o.output)
	org.AddCommand(orgCreate)

	key := &cobra.Command{Use: "key", Short: "Manage API keys"}
	keyCreate := &cobra.Command{
		Use:   "create --org NAME (--sandbox | --live)",
		Short: "Create an API key and print it (once: only its hash is stored)",
		Example: `  svc admin key create --org acme --sandbox
  SVC_API_KEY=$(svc admin key create --org acme --live --output json | jq -r .api_key)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if o.sandbox == o.live {
				return errorf(ExitUsage, "pass exactly one of --sandbox (pk_sb_, rate-limited) or --live (pk_live_)", "choose the key's environment")
			}
			if o.org == "" {
				return errorf(ExitUsage, "create one with 'svc admin org create NAME'", "--org is required")
			}
			env := vpec.Sandbox
			if o.live {
				env = vpec.Production
			}
			st, _, err := o.data.open(cmdContext(cmd), a.streams.Err)
			if err != nil {
				return err
			}
			defer st.Close()
			secret, k, err := server.CreateAPIKey(cmdContext(cmd), st, o.org, env, time.Now())
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return &Error{Code: ExitUsage, Err: err, Hint: "create it with 'svc admin org create " + o.org + "'"}
				}
				return &Error{Code: ExitFailure, Err: err}
			}
			if o.output == outputJSON {
				return a.writeJSON(map[string]string{"api_key": secret, "key_id": k.ID, "org_id": k.OrgID, "environment": k.Environment})
			}
			fmt.Fprintln(a.streams.Out, secret)
			fmt.Fprintf(a.streams.Err, "%s: API key %s for %s (%s); it is shown once, store it now\n", a.name, k.ID, o.org, k.Environment)
			return nil
		},
	}
	o.data.add(keyCreate)
	keyCreate.Flags().StringVar(&o.org, "org", "", "organisation name")
	keyCreate.Flags().BoolVar(&o.sandbox, "sandbox", false, "a sandbox key (pk_sb_): free, rate-limited")
	keyCreate.Flags().BoolVar(&o.live, "live", false, "a production key (pk_live_)")
	addOutputFlag(keyCreate, &o.output)
	key.AddCommand(keyCreate, a.adminKeyListCmd(), a.adminKeyRevokeCmd())
	cmd.AddCommand(org, key, a.adminCalibrationCmd())
	return cmd
}
