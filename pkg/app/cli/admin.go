package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

func (a *app) adminCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Manage organisations, API keys and backups of a service"}
	org := &cobra.Command{Use: "org", Short: "Manage organisations"}
	org.AddCommand(newCmdOrgCreate(a, nil))
	key := &cobra.Command{Use: "key", Short: "Manage API keys"}
	key.AddCommand(newCmdKeyCreate(a, nil), newCmdKeyList(a, nil), newCmdKeyRevoke(a, nil))
	cmd.AddCommand(org, key, a.adminCalibrationCmd(), newCmdAdminBackup(a, nil), newCmdAdminRestore(a, nil))
	return cmd
}

// orgCreateOptions are the flags and argument of svc admin org create.
type orgCreateOptions struct {
	name   string
	data   dataOptions
	tier   string
	output string
}

// newCmdOrgCreate builds svc admin org create; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdOrgCreate(a *app, runF func(*orgCreateOptions) error) *cobra.Command {
	o := &orgCreateOptions{}
	orgCreate := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create an organisation",
		Example: `  svc admin org create globex --tier enterprise`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runOrgCreate(cmdContext(cmd), o)
		},
	}
	o.data.add(orgCreate)
	orgCreate.Flags().StringVar(&o.tier, "tier", server.TierStandard, "standard or enterprise (calibration turnaround 7d or 48h)")
	addOutputFlag(orgCreate, &o.output)
	return orgCreate
}

// runOrgCreate creates the organisation (server.CreateOrg).
func (a *app) runOrgCreate(ctx context.Context, o *orgCreateOptions) error {
	st, _, err := o.data.open(ctx, a.streams.Err)
	if err != nil {
		return err
	}
	defer st.Close()
	created, err := server.CreateOrg(ctx, st, o.name, o.tier, time.Now())
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
}

// keyCreateOptions are the flags of svc admin key create.
type keyCreateOptions struct {
	data          dataOptions
	org           string
	sandbox, live bool
	output        string
}

// validate checks the flags alone: one environment, an organisation.
func (o *keyCreateOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.sandbox == o.live {
		return errorf(ExitUsage, "pass exactly one of --sandbox (pk_sb_, rate-limited) or --live (pk_live_)", "choose the key's environment")
	}
	if o.org == "" {
		return errorf(ExitUsage, "create one with 'svc admin org create NAME'", "--org is required")
	}
	return nil
}

// newCmdKeyCreate builds svc admin key create; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdKeyCreate(a *app, runF func(*keyCreateOptions) error) *cobra.Command {
	o := &keyCreateOptions{}
	keyCreate := &cobra.Command{
		Use:   "create --org NAME (--sandbox | --live)",
		Short: "Create an API key and print it (once: only its hash is stored)",
		Example: `  svc admin key create --org acme --sandbox
  SVC_API_KEY=$(svc admin key create --org acme --live --output json | jq -r .api_key)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runKeyCreate(cmdContext(cmd), o)
		},
	}
	o.data.add(keyCreate)
	keyCreate.Flags().StringVar(&o.org, "org", "", "organisation name")
	keyCreate.Flags().BoolVar(&o.sandbox, "sandbox", false, "a sandbox key (pk_sb_): free, rate-limited")
	keyCreate.Flags().BoolVar(&o.live, "live", false, "a production key (pk_live_)")
	addOutputFlag(keyCreate, &o.output)
	return keyCreate
}

// runKeyCreate creates the API key (server.CreateAPIKey) and prints it.
func (a *app) runKeyCreate(ctx context.Context, o *keyCreateOptions) error {
	env := vpec.Sandbox
	if o.live {
		env = vpec.Production
	}
	st, _, err := o.data.open(ctx, a.streams.Err)
	if err != nil {
		return err
	}
	defer st.Close()
	secret, k, err := server.CreateAPIKey(ctx, st, o.org, env, time.Now())
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
}
