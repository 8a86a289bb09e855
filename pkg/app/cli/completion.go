package cli

import (
	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
	"github.com/svc-gov/svc/pkg/service/server"
)

// enumValues are the values shell completion offers for flags that take
// one of a fixed set, by flag name (the same name means the same set in
// every command).
func enumValues() map[string][]string {
	strs := func(vs ...string) []string { return vs }
	m := map[string][]string{
		"output":     strs(outputText, outputJSON),
		"mode":       trace.Modes(),
		"gpu-class":  profile.GPUClasses(),
		"style":      strs(modelgen.StyleBERT, modelgen.StyleTorch),
		"log-format": strs("text", "json"),
		"tier":       strs(server.TierStandard, server.TierEnterprise),
	}
	for _, r := range vpec.CheckResults() {
		m["result"] = append(m["result"], string(r))
	}
	for _, v := range vpec.Visibilities() {
		m["visibility"] = append(m["visibility"], string(v))
	}
	return m
}

// addEnumCompletions registers the enumValues completions on every command
// of the tree that has such a flag.
func addEnumCompletions(c *cobra.Command) { clicore.AddEnumCompletions(c, enumValues()) }
