package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set at link time by goreleaser: -X github.com/svc-gov/svc/pkg/cli.version=... etc.
var (
	version = ""
	commit  = ""
	date    = ""
)

// VersionInfo describes the build.
type VersionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// BuildVersion returns the version set by ldflags, else what the Go
// toolchain recorded in the binary (module version and VCS revision).
func BuildVersion() VersionInfo {
	v := VersionInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && v.Commit == "":
				v.Commit = s.Value
			case s.Key == "vcs.time" && v.Date == "":
				v.Date = s.Value
			case s.Key == "vcs.modified" && s.Value == "true" && v.Commit != "" && version == "":
				v.Commit += "-dirty"
			}
		}
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	return v
}

func (a *app) versionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			v := BuildVersion()
			if output == outputJSON {
				return a.writeJSON(v)
			}
			fmt.Fprintf(a.streams.Out, "%s %s", a.name, v.Version)
			if v.Commit != "" {
				fmt.Fprintf(a.streams.Out, " (%s", v.Commit)
				if v.Date != "" {
					fmt.Fprintf(a.streams.Out, ", %s", v.Date)
				}
				fmt.Fprint(a.streams.Out, ")")
			}
			fmt.Fprintf(a.streams.Out, " %s %s\n", v.GoVersion, v.Platform)
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}
