package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/client"
)

func (a *app) manifestCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "manifest", Short: "Register check manifests"}
	cmd.AddCommand(newCmdManifestRegister(a, nil))
	return cmd
}

// manifestRegisterOptions are the flags and argument of svc manifest
// register.
type manifestRegisterOptions struct {
	co   clientOptions
	file string
}

// newCmdManifestRegister builds svc manifest register; runF, when not nil,
// gets the parsed options instead of the run (a test's seam).
func newCmdManifestRegister(a *app, runF func(*manifestRegisterOptions) error) *cobra.Command {
	o := &manifestRegisterOptions{}
	reg := &cobra.Command{
		Use:   "register FILE",
		Short: "Register a check manifest (JSON or YAML) and print its content-addressed id",
		Example: `  svc manifest register pii-check.yaml
  MANIFEST=$(svc manifest register pii-check.yaml)`,
		Args: cobra.ExactArgs(1),
		RunE: clientRunE(o, &o.co, func(args []string) error {
			o.file = args[0]
			return nil
		}, runF, a.runManifestRegister),
	}
	o.co.add(reg)
	return reg
}

// runManifestRegister parses the manifest and registers it
// (Pipeline.RegisterCheck).
func (a *app) runManifestRegister(ctx context.Context, o *manifestRegisterOptions) error {
	data, err := a.readInput(o.file, "manifest")
	if err != nil {
		return err
	}
	m, err := client.ParseManifest(data)
	if err != nil {
		return &Error{Code: ExitUsage, Err: fmt.Errorf("%s: %w", o.file, err), Hint: "a manifest has name, version and stages (stage_name, proof_ceiling, regulatory_references)"}
	}
	return o.co.do(func(p *client.Pipeline) error {
		reg, err := p.RegisterCheck(ctx, m)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if o.co.output == outputJSON {
			return a.writeJSON(reg)
		}
		fmt.Fprintln(a.streams.Out, reg.ManifestID)
		return nil
	})
}
