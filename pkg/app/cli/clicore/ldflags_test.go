package clicore

import (
	"os"
	"regexp"
	"testing"
)

// The release build sets the version with -X on this package's variables:
// a -X naming any other package (pkg/app/cli before the verifier had its own
// command package) is silently ignored by the linker, and the released
// binaries would print "devel".
func TestReleaseLdflagsNameThisPackage(t *testing.T) {
	data, err := os.ReadFile("../../../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{"version": true, "commit": true, "date": true}
	seen := map[string]int{}
	for _, m := range regexp.MustCompile(`-X\s+(\S+)\.(\w+)=`).FindAllStringSubmatch(string(data), -1) {
		if m[1] != "github.com/svc-gov/svc/pkg/app/cli/clicore" || !vars[m[2]] {
			t.Errorf("-X %s.%s: BuildVersion reads github.com/svc-gov/svc/pkg/app/cli/clicore.{version,commit,date}", m[1], m[2])
		}
		seen[m[2]]++
	}
	if len(seen) != len(vars) {
		t.Errorf("-X sets %v, want version, commit and date", seen)
	}
}
