package webverify_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/app/webverify"
	"github.com/svc-gov/svc/pkg/core/verify"
)

const trustVectorsDir = "../../../testdata/vectors/" + testvectors.TrustDir

// pageTrustVector reports whether the page can run a trust vector: it
// takes a trust root (JSON or PEM), trust root updates, circuit entries, a
// receipt, a witness policy file and "require a log receipt"; a newer
// checkpoint and its consistency proof are svc-verify's.
func pageTrustVector(v testvectors.Vector) bool {
	return v.LogCheckpoint == ""
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
			in := webverify.Input{VPEC: read(v.File), Trust: read(v.TrustRoot), Receipt: read(v.Receipt), RequireLog: v.RequireLog, WitnessPolicy: read(v.WitnessPolicy)}
			for _, c := range v.Circuits {
				in.Circuits = append(in.Circuits, read(c))
			}
			for _, u := range v.TrustRootUpdates {
				in.TrustRootUpdates = append(in.TrustRootUpdates, read(u))
			}
			res := webverify.Verify(in)
			if v.TrustRootRefusal != "" {
				if res.Report != nil || res.ExitCode != v.Exit || !strings.Contains(res.Error, "("+v.TrustRootRefusal+")") {
					t.Fatalf("exit %d error %q report %v, want exit %d naming (%s) and no report", res.ExitCode, res.Error, res.Report != nil, v.Exit, v.TrustRootRefusal)
				}
				return
			}
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
	if ran < len(m.Vectors)-3 {
		t.Errorf("the page ran %d of %d trust vectors; expected every one but the newer-checkpoint ones", ran, len(m.Vectors))
	}
}
