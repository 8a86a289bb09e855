package clicore

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: one version string, from ldflags when set, else from the
// module's VCS information: a binary built by `go build` in a checkout is
// "devel-<revision>[-dirty]", never a bare "devel" beside a page that
// names the commit.
func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-11-25T02:44:18Z"}, {Key: "vcs.modified", Value: modified}}}
	}
	rev := "f91db798bbc7e2b4a7f8c8b06f7b6e0a1b2c3d4e"
	pseudo := vcs(rev, "false")
	pseudo.Main.Version = "v0.0.0-20261125024418-f91db798bbc7"
	for _, tc := range []struct {
		name                     string
		ldVersion, ldCommit      string
		info                     *debug.BuildInfo
		version, commit, vcsDate string
	}{
		{"ldflags win", "v1.2.0", "abc123", vcs(rev, "true"), "v1.2.0", "abc123", "2026-11-25T02:44:18Z"},
		{"ldflags version, commit from VCS", "f91db79-dirty", "", vcs(rev, "true"), "f91db79-dirty", rev, "2026-11-25T02:44:18Z"},
		{"module version", "", "", pseudo, "v0.0.0-20261125024418-f91db798bbc7", rev, "2026-11-25T02:44:18Z"},
		{"VCS only", "", "", vcs(rev, "false"), "devel-f91db798bbc7", rev, "2026-11-25T02:44:18Z"},
		{"VCS only, modified", "", "", vcs(rev, "true"), "devel-f91db798bbc7-dirty", rev + "-dirty", "2026-11-25T02:44:18Z"},
		{"nothing recorded", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel", "", ""},
		{"no build info", "", "", nil, "devel", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := versionOf(tc.ldVersion, tc.ldCommit, "", tc.info)
			if v.Version != tc.version || v.Commit != tc.commit || v.Date != tc.vcsDate {
				t.Fatalf("versionOf = %+v, want version %q commit %q date %q", v, tc.version, tc.commit, tc.vcsDate)
			}
		})
	}
}

// TestVersionLine: --version and version print this one line; parts not
// known are left out, never "unknown".
func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		v    VersionInfo
		want string
	}{
		{VersionInfo{Version: "v1.2.0", Commit: "abc", Date: "2026-11-25", GoVersion: "go1.26.8", Platform: "linux/amd64"}, "svc v1.2.0 (commit abc, 2026-11-25) go1.26.8 linux/amd64"},
		{VersionInfo{Version: "devel", GoVersion: "go1.26.8", Platform: "linux/amd64"}, "svc devel go1.26.8 linux/amd64"},
	} {
		if got := tc.v.Line("svc"); got != tc.want {
			t.Errorf("Line = %q, want %q", got, tc.want)
		}
	}
}
