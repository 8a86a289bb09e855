package cli

import (
	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
)

// VersionInfo describes the build.
type VersionInfo = clicore.VersionInfo

// BuildVersion returns the version set by ldflags
// (-X github.com/svc-gov/svc/pkg/app/cli/clicore.version=...), else what the Go
// toolchain recorded in the binary (module version and VCS revision).
func BuildVersion() VersionInfo { return clicore.BuildVersion() }

func (a *app) versionCmd() *cobra.Command { return verifycmd.Version(a.core) }
