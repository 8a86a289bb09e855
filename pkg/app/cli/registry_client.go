package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
)

// checkModelRef checks a model named by hash or file (the flags alone):
// exactly one of them, and a hash in its one form.
func checkModelRef(hash, file string) error {
	switch {
	case hash != "" && file != "":
		return errorf(ExitUsage, "give one of them", "both a model hash and --model given")
	case file == "" && hash == "":
		return errorf(ExitUsage, "pass the model's sha256:… hash or --model FILE", "no model given")
	case hash != "":
		if _, err := commitment.ParseSHA256(hash); err != nil {
			return &Error{Code: ExitUsage, Err: err, Hint: "an onnx_model_hash is sha256: and 64 lowercase hex"}
		}
	}
	return nil
}

// modelHash returns the model hash, or the commitment of the model file
// (after checkModelRef).
func modelHash(hash, file string) (string, error) {
	if err := checkModelRef(hash, file); err != nil {
		return "", err
	}
	if file == "" {
		return hash, nil
	}
	h, err := client.ModelFileHash(file)
	if err != nil {
		return "", &Error{Code: ExitUsage, Err: err}
	}
	return h, nil
}

// registryClientCmds are the registry commands that ask a service.
func (a *app) registryClientCmds() []*cobra.Command {
	return []*cobra.Command{newCmdRegistryList(a, nil), newCmdRegistryLookup(a, nil), newCmdRegistryGet(a, nil)}
}

// registryListOptions are the flags of svc registry list.
type registryListOptions struct{ co clientOptions }

// newCmdRegistryList builds svc registry list; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdRegistryList(a *app, runF func(*registryListOptions) error) *cobra.Command {
	o := &registryListOptions{}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the published model profiles",
		Args:  cobra.NoArgs,
		RunE:  clientRunE(o, &o.co, nil, runF, a.runRegistryList),
	}
	o.co.add(list)
	return list
}

// runRegistryList prints the published profiles (Pipeline.Profiles).
func (a *app) runRegistryList(ctx context.Context, o *registryListOptions) error {
	return o.co.do(func(p *client.Pipeline) error {
		profiles, err := p.Profiles(ctx)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if o.co.output == outputJSON {
			return a.writeJSON(api.ProfileList{Profiles: profiles})
		}
		for _, pr := range profiles {
			fmt.Fprintf(a.streams.Out, "%s\t%s\t%s\t%s\n", pr.ProfileID, pr.ModelClass, strings.Join(pr.CalibratedGPUClasses, ","), pr.CalibrationDate)
		}
		return nil
	})
}

// registryLookupOptions are the flags and argument of svc registry lookup.
type registryLookupOptions struct {
	co    clientOptions
	hash  string // the argument
	model string
}

// newCmdRegistryLookup builds svc registry lookup; runF, when not nil,
// gets the parsed options instead of the run (a test's seam).
func newCmdRegistryLookup(a *app, runF func(*registryLookupOptions) error) *cobra.Command {
	o := &registryLookupOptions{}
	lookup := &cobra.Command{
		Use:   "lookup (HASH | --model FILE)",
		Short: "Look a model up by its onnx_model_hash (exit 1 when no profile covers it)",
		Args:  cobra.MaximumNArgs(1),
		RunE: clientRunE(o, &o.co, func(args []string) error {
			o.hash = firstArg(args)
			return checkModelRef(o.hash, o.model)
		}, runF, a.runRegistryLookup),
	}
	o.co.add(lookup)
	lookup.Flags().StringVar(&o.model, "model", "", "ONNX model file (or directory with model.onnx) to hash")
	return lookup
}

// runRegistryLookup looks the model up (Pipeline.Lookup): exit 1 when no
// profile covers it.
func (a *app) runRegistryLookup(ctx context.Context, o *registryLookupOptions) error {
	h, err := modelHash(o.hash, o.model)
	if err != nil {
		return err
	}
	return o.co.do(func(p *client.Pipeline) error {
		lk, err := p.Lookup(ctx, h)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if o.co.output == outputJSON {
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
}

// registryGetOptions are the flags and argument of svc registry get.
type registryGetOptions struct {
	co   clientOptions
	hash string
}

// newCmdRegistryGet builds svc registry get; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdRegistryGet(a *app, runF func(*registryGetOptions) error) *cobra.Command {
	o := &registryGetOptions{}
	get := &cobra.Command{
		Use:   "get HASH",
		Short: "Print the full signed profile covering a model",
		Args:  cobra.ExactArgs(1),
		RunE: clientRunE(o, &o.co, func(args []string) error {
			o.hash = args[0]
			return checkModelRef(o.hash, "")
		}, runF, a.runRegistryGet),
	}
	o.co.add(get)
	return get
}

// runRegistryGet prints the signed profile covering the model
// (Pipeline.ProfileDocument).
func (a *app) runRegistryGet(ctx context.Context, o *registryGetOptions) error {
	return o.co.do(func(p *client.Pipeline) error {
		doc, err := p.ProfileDocument(ctx, o.hash)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		var v any
		json.Unmarshal(doc, &v)
		return a.writeJSON(v)
	})
}

func firstArg(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}
