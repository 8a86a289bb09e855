package cli_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/internal/trustcorpus"
	"github.com/svc-gov/svc/pkg/core/verify"
)

// TestTrustCorpusThroughBinaries runs the transparency log and trust root
// cases the docs once left open (internal/trustcorpus) through both
// binaries: the exit code, and for a report the verdict, the failing
// checks and the failing transparency check's code.
func TestTrustCorpusThroughBinaries(t *testing.T) {
	dir := t.TempDir()
	cases, err := trustcorpus.Build(filepath.Join(vectorsDir, testvectors.TrustDir), dir)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, c := range cases {
		for _, bin := range []string{"svc", "svc-verify"} {
			t.Run(bin+"/"+c.Name, func(t *testing.T) {
				args := append([]string{"verify", filepath.Join(dir, c.File)}, c.TrustArgs(dir)...)
				args = append(args, "--output", "json")
				out, code := run(t, cache, bin, args...)
				if code != c.Exit {
					t.Fatalf("%s\nexit %d, want %d\n%s", c.Description, code, c.Exit, out)
				}
				if c.Verdict == "" {
					return // refused before verifying: no report
				}
				var r verify.Report
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("--output json is not JSON: %v\n%s", err, out)
				}
				var failed []string
				codes := map[string]string{}
				for _, ch := range r.Checks {
					if ch.Status == verify.Fail {
						failed = append(failed, string(ch.Name))
						codes[string(ch.Name)] = ch.Code
					}
				}
				want := slices.Clone(c.Fails)
				slices.Sort(want)
				slices.Sort(failed)
				if r.Verdict != c.Verdict || !slices.Equal(failed, want) {
					t.Fatalf("%s\nverdict %q failed %v, want %q failed %v\n%s", c.Description, r.Verdict, failed, c.Verdict, want, out)
				}
				if c.Code != "" && codes["transparency"] != c.Code {
					t.Errorf("transparency code %q, want %q", codes["transparency"], c.Code)
				}
			})
		}
	}
}
