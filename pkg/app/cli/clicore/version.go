package clicore

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time by `make build` and goreleaser (one VERSION for the
// binaries and the offline verifier page they embed):
// -X github.com/svc-gov/svc/pkg/app/cli/clicore.version=... etc.
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

// BuildVersion is the one version of this binary, which every place that
// states one uses (svc --version, svc version, the dashboard footer, the
// server's /healthz, the offline verifier page genverify builds by
// default): the version set by ldflags; else what the Go toolchain
// recorded from the module and its VCS (a tagged or pseudo-version, or
// "devel-<revision>[-dirty]"); else "devel".
func BuildVersion() VersionInfo {
	info, _ := debug.ReadBuildInfo()
	v := versionOf(version, commit, date, info)
	v.GoVersion, v.Platform = runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH
	return v
}

// versionOf is BuildVersion's rule, given the ldflags values and the build
// information (nil when the binary has none).
func versionOf(ldVersion, ldCommit, ldDate string, info *debug.BuildInfo) VersionInfo {
	v := VersionInfo{Version: ldVersion, Commit: ldCommit, Date: ldDate}
	if info == nil {
		if v.Version == "" {
			v.Version = "devel"
		}
		return v
	}
	var rev, at string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if v.Commit == "" && rev != "" {
		v.Commit = rev
		if dirty && ldVersion == "" {
			v.Commit += "-dirty"
		}
	}
	if v.Date == "" {
		v.Date = at
	}
	switch {
	case v.Version != "":
	case info.Main.Version != "" && info.Main.Version != "(devel)":
		v.Version = info.Main.Version
	case rev != "":
		v.Version = "devel-" + rev[:min(12, len(rev))]
		if dirty {
			v.Version += "-dirty"
		}
	default:
		v.Version = "devel"
	}
	return v
}

// Line is the version line both `NAME --version` and `NAME version`
// print: name, version, then the commit and date when known, the Go
// version and the platform.
func (v VersionInfo) Line(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", name, v.Version)
	var in []string
	if v.Commit != "" {
		in = append(in, "commit "+v.Commit)
	}
	if v.Date != "" {
		in = append(in, v.Date)
	}
	if len(in) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(in, ", "))
	}
	fmt.Fprintf(&b, " %s %s", v.GoVersion, v.Platform)
	return b.String()
}
