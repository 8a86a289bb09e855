package docs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/internal/trustcorpus"
)

// TestSecondImplTrustCorpus: the Python verifier, written from the docs,
// gives every case of the trust corpus it can read (internal/trustcorpus:
// files only, no flag combination) the exit code, verdict and failing
// checks svc-verify gives (TestTrustCorpusThroughBinaries, pkg/app/cli).
func TestSecondImplTrustCorpus(t *testing.T) {
	dir := t.TempDir()
	all, err := trustcorpus.Build(filepath.Join(vectorsDir, testvectors.TrustDir), dir)
	if err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string {
		if rel == "" {
			return ""
		}
		return filepath.Join(dir, rel)
	}
	var cases []trustcorpus.Case
	var jobs []pyTrustJob
	for _, c := range all {
		if !c.Python {
			continue
		}
		cases = append(cases, c)
		jobs = append(jobs, pyTrustJob{File: p(c.File), TrustRoot: p(c.TrustRoot), Receipt: p(c.Receipt), RequireLog: c.RequireLog,
			WitnessPolicy: p(c.WitnessPolicy), LogCheckpoint: p(c.LogCheckpoint), ConsistencyProof: p(c.ConsistencyProof)})
	}
	if len(cases) < 30 {
		t.Fatalf("%d corpus cases for the second implementation; expected the full set", len(cases))
	}
	out := runJSONLines(t, exec.Command(python3(t), secondImpl, "verify-batch"), jobs)
	var res []pyResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r pyResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("svcverify.py output %q: %v", sc.Text(), err)
		}
		res = append(res, r)
	}
	if len(res) != len(cases) {
		t.Fatalf("svcverify.py answered %d of %d jobs", len(res), len(cases))
	}
	for i, c := range cases {
		r := res[i]
		if r.Exit != c.Exit {
			t.Errorf("%s (%s): exit %d (%s), want %d", c.Name, c.Description, r.Exit, r.Verdict, c.Exit)
			continue
		}
		if c.Verdict == "" {
			continue // refused before verifying
		}
		failed := r.failed()
		want := slices.Clone(c.Fails)
		slices.Sort(failed)
		slices.Sort(want)
		if r.Verdict != c.Verdict || !slices.Equal(failed, want) {
			t.Errorf("%s (%s): %q failed %v, want %q failed %v", c.Name, c.Description, r.Verdict, failed, c.Verdict, want)
		}
	}
}
