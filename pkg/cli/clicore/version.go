package clicore

import (
	"runtime"
	"runtime/debug"
)

// Set at link time by goreleaser: -X github.com/svc-gov/svc/pkg/cli/clicore.version=... etc.
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
