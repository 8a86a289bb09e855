// Package verifycmd holds the verifier's commands (verify, verify-profile,
// hash, version): the whole of svc-verify, and the same commands in svc.
// It links no network, database or service code; cmd/svc-verify's
// dependency test guards that.
package verifycmd

import (
	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
)

// Main runs the svc-verify command with args (without the program name)
// and returns the process exit code.
func Main(args []string, s *clicore.Streams) int {
	return clicore.Run(NewCommand(s), args, s, "svc-verify")
}

// NewCommand builds the svc-verify command tree: the offline,
// network-free verifier.
func NewCommand(s *clicore.Streams) *cobra.Command {
	root, a := clicore.NewRoot("svc-verify", "Offline verifier for VPECs, model profiles and commitment hashes",
		`svc-verify checks VPECs and model drift profiles offline against a trust
bundle, and confirms commitment hashes. It never uses the network.`, s, &clicore.FileConfig{})
	root.AddCommand(Verify(a, nil), VerifyProfile(a), VerifyCircuit(a), Hash(a), Version(a))
	clicore.AddEnumCompletions(root, EnumValues())
	return root
}

// EnumValues are the values shell completion offers for the verifier's
// flags that take one of a fixed set, by flag name.
func EnumValues() map[string][]string {
	return map[string][]string{"output": {clicore.OutputText, clicore.OutputJSON}}
}
