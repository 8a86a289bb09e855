package webverify_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/app/webverify"
	"github.com/svc-gov/svc/pkg/core/verify"
)

const trustVectorsDir = "../../../testdata/vectors/" + testvectors.TrustDir

// pageTrustVector reports whether the page can run a trust vector: it
// takes a trust root (JSON or PEM), circuit entries, a receipt and
// "require a log receipt";
// a witness policy file, a newer checkpoint and trust root updates are
// svc-verify's (the page verifies against the newest root the user has).
func pageTrustVector(v testvectors.Vector) bool {
	return v.WitnessPolicy == "" && v.LogCheckpoint == "" && len(v.TrustRootUpdates) == 0
}

// TestTrustVectors: the page gives every trust vector it can take the
// verdict, exit code and failing checks of the manifest (a trust root
// JSON, a receipt file, the require-log box).
func TestTrustVectors(t *testing.T) {
	m, err := testvectors.Load(trustVectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) webverify.File {
		if rel == "" {
			return webverify.File{}
		}
		b, err := os.ReadFile(filepath.Join(trustVectorsDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return webverify.File{Name: filepath.Base(rel), Data: b}
	}
	ran := 0
	for _, v := range m.Vectors {
		if !pageTrustVector(v) {
			continue
		}
		ran++
		t.Run(v.Name, func(t *testing.T) {
			in := webverify.Input{VPEC: read(v.File), Trust: read(v.TrustRoot), Receipt: read(v.Receipt), RequireLog: v.RequireLog}
			for _, c := range v.Circuits {
				in.Circuits = append(in.Circuits, read(c))
			}
			res := webverify.Verify(in)
			if res.Report == nil || res.ExitCode != v.Exit || res.Report.Verdict != v.Verdict {
				t.Fatalf("exit %d report %+v error %q, want exit %d %q", res.ExitCode, res.Report, res.Error, v.Exit, v.Verdict)
			}
			var failed []string
			for _, c := range res.Report.Checks {
				if c.Status == verify.Fail {
					failed = append(failed, string(c.Name))
				}
			}
			want := slices.Clone(v.Fails)
			slices.Sort(want)
			slices.Sort(failed)
			if !slices.Equal(failed, want) {
				t.Errorf("failed %v, want %v", failed, want)
			}
		})
	}
	if ran < 12 {
		t.Errorf("the page ran %d trust vectors; expected every one but the newer-checkpoint, policy-file and update ones", ran)
	}
}
