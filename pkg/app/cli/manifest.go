package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/client"
)

func (a *app) manifestCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "manifest", Short: "Register check manifests"}
	var co clientOptions
	reg := &cobra.Command{
		Use:   "register FILE",
		Short: "Register a check manifest (JSON or YAML) and print its content-addressed id",
		Example: `  svc manifest register pii-check.yaml
  MANIFEST=$(svc manifest register pii-check.yaml)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := a.readInput(args[0], "manifest")
			if err != nil {
				return err
			}
			m, err := client.ParseManifest(data)
			if err != nil {
				return &Error{Code: ExitUsage, Err: fmt.Errorf("%s: %w", args[0], err), Hint: "a manifest has name, version and stages (stage_name, proof_ceiling, regulatory_references)"}
			}
			return co.do(func(p *client.Pipeline) error {
				reg, err := p.RegisterCheck(cmdContext(cmd), m)
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if co.output == outputJSON {
					return a.writeJSON(reg)
				}
				fmt.Fprintln(a.streams.Out, reg.ManifestID)
				return nil
			})
		},
	}
	co.add(reg)
	cmd.AddCommand(reg)
	return cmd
}
