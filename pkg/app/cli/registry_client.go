package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
)

// modelHash returns --model-hash, or the commitment of the --model file.
func modelHash(hash, file string) (string, error) {
	switch {
	case hash != "" && file != "":
		return "", errorf(ExitUsage, "give one of them", "both a model hash and --model given")
	case file != "":
		h, err := client.ModelFileHash(file)
		if err != nil {
			return "", &Error{Code: ExitUsage, Err: err}
		}
		return h, nil
	case hash == "":
		return "", errorf(ExitUsage, "pass the model's sha256:… hash or --model FILE", "no model given")
	}
	if _, err := commitment.ParseSHA256(hash); err != nil {
		return "", &Error{Code: ExitUsage, Err: err, Hint: "an onnx_model_hash is sha256: and 64 lowercase hex"}
	}
	return hash, nil
}

// registryClientCmds are the registry commands that ask a service.
func (a *app) registryClientCmds() []*cobra.Command {
	var co clientOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List the published model profiles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return co.do(func(p *client.Pipeline) error {
				profiles, err := p.Profiles(cmdContext(cmd))
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if co.output == outputJSON {
					return a.writeJSON(api.ProfileList{Profiles: profiles})
				}
				for _, pr := range profiles {
					fmt.Fprintf(a.streams.Out, "%s\t%s\t%s\t%s\n", pr.ProfileID, pr.ModelClass, strings.Join(pr.CalibratedGPUClasses, ","), pr.CalibrationDate)
				}
				return nil
			})
		},
	}
	co.add(list)

	var lco clientOptions
	var lmodel string
	lookup := &cobra.Command{
		Use:   "lookup (HASH | --model FILE)",
		Short: "Look a model up by its onnx_model_hash (exit 1 when no profile covers it)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := modelHash(firstArg(args), lmodel)
			if err != nil {
				return err
			}
			return lco.do(func(p *client.Pipeline) error {
				lk, err := p.Lookup(cmdContext(cmd), h)
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if lco.output == outputJSON {
					if err := a.writeJSON(lk); err != nil {
						return err
					}
				} else if lk.Found {
					fmt.Fprintf(a.streams.Out, "found: %s (%s, %s)\n", lk.ProfileID, lk.ModelClass, lk.Architecture)
				} else {
					fmt.Fprintf(a.streams.Out, "not found: no profile covers %s (request one with 'svc calibrate request')\n", h)
				}
				if !lk.Found {
					return exitError{ExitInvalid}
				}
				return nil
			})
		},
	}
	lco.add(lookup)
	lookup.Flags().StringVar(&lmodel, "model", "", "ONNX model file (or directory with model.onnx) to hash")

	var gco clientOptions
	get := &cobra.Command{
		Use:   "get HASH",
		Short: "Print the full signed profile covering a model",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := modelHash(args[0], "")
			if err != nil {
				return err
			}
			return gco.do(func(p *client.Pipeline) error {
				doc, err := p.ProfileDocument(cmdContext(cmd), h)
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				var v any
				json.Unmarshal(doc, &v)
				return a.writeJSON(v)
			})
		},
	}
	gco.add(get)
	return []*cobra.Command{list, lookup, get}
}

func firstArg(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}
