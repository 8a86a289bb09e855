package docs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/testvectors"
)

// pyTrustJob is a verify-batch job with the trust vectors' inputs.
type pyTrustJob struct {
	File             string   `json:"file"`
	TrustRoot        string   `json:"trust_root"`
	TrustRootUpdates []string `json:"trust_root_updates,omitempty"`
	Circuits         []string `json:"circuits,omitempty"`
	Receipt          string   `json:"receipt,omitempty"`
	RequireLog       bool     `json:"require_log,omitempty"`
	WitnessPolicy    string   `json:"witness_policy,omitempty"`
	LogCheckpoint    string   `json:"log_checkpoint,omitempty"`
	ConsistencyProof string   `json:"consistency_proof,omitempty"`
}

// TestSecondImplTrustVectors: the Python verifier, written from KEYS.md,
// TRANSPARENCY.md and FORMATS.md, gives every transparency log and trust
// root vector its verdict, exit code and failed checks, and refuses the
// root update by its code.
func TestSecondImplTrustVectors(t *testing.T) {
	dir := filepath.Join(vectorsDir, testvectors.TrustDir)
	m, err := testvectors.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string {
		if rel == "" {
			return ""
		}
		return filepath.Join(dir, rel)
	}
	var jobs []pyTrustJob
	for _, v := range m.Vectors {
		j := pyTrustJob{File: p(v.File), TrustRoot: p(v.TrustRoot), Receipt: p(v.Receipt), RequireLog: v.RequireLog,
			WitnessPolicy: p(v.WitnessPolicy), LogCheckpoint: p(v.LogCheckpoint), ConsistencyProof: p(v.ConsistencyProof)}
		for _, u := range v.TrustRootUpdates {
			j.TrustRootUpdates = append(j.TrustRootUpdates, p(u))
		}
		for _, c := range v.Circuits {
			j.Circuits = append(j.Circuits, p(c))
		}
		jobs = append(jobs, j)
	}
	out := runJSONLines(t, exec.Command(python3(t), secondImpl, "verify-batch"), jobs)
	var res []struct {
		pyResult
		Refusal string `json:"refusal"`
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct {
			pyResult
			Refusal string `json:"refusal"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("svcverify.py output %q: %v", sc.Text(), err)
		}
		res = append(res, r)
	}
	if len(res) != len(m.Vectors) {
		t.Fatalf("svcverify.py answered %d of %d jobs", len(res), len(m.Vectors))
	}
	for i, v := range m.Vectors {
		r := res[i]
		if v.TrustRootRefusal != "" {
			if r.Exit != v.Exit || r.Refusal != v.TrustRootRefusal {
				t.Errorf("%s: exit %d refusal %q (%s), want exit %d refusal %q", v.Name, r.Exit, r.Refusal, r.Verdict, v.Exit, v.TrustRootRefusal)
			}
			continue
		}
		failed := r.failed()
		if v.Valid && len(v.Circuits) > 0 {
			// The Python verifier has no Groth16: on a VPEC whose circuit
			// entries' signatures and key windows hold it stops unverified
			// at zk_proofs (as TestSecondImpl expects); a refused entry
			// key it names as every surface does (the vectors below).
			if r.Exit != 3 || r.Verdict != "UNVERIFIED — ZK PROOF NOT CHECKED" || !slices.Equal(failed, []string{"zk_proofs"}) {
				t.Errorf("%s: %q exit %d failed %v, want UNVERIFIED — ZK PROOF NOT CHECKED (exit 3, failed [zk_proofs])", v.Name, r.Verdict, r.Exit, failed)
			}
			continue
		}
		want := slices.Clone(v.Fails)
		slices.Sort(failed)
		slices.Sort(want)
		if r.Exit != v.Exit || r.Verdict != v.Verdict || !slices.Equal(failed, want) {
			var msgs []string
			for _, c := range r.Checks {
				if c.Status == "fail" {
					msgs = append(msgs, c.Name+": "+c.Message)
				}
			}
			t.Errorf("%s: %q exit %d failed %v, want %q exit %d failed %v\n%s", v.Name, r.Verdict, r.Exit, failed, v.Verdict, v.Exit, want, strings.Join(msgs, "\n"))
		}
	}
}
