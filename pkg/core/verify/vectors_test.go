package verify_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/zk"
)

const vectorsDir = "../../../testdata/vectors"

func loadVectors(t *testing.T) (*testvectors.Manifest, *signing.Bundle) {
	t.Helper()
	m, err := testvectors.Load(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	trust, err := signing.LoadBundle(filepath.Join(vectorsDir, m.TrustBundle))
	if err != nil {
		t.Fatal(err)
	}
	return m, trust
}

// TestVectors runs the whole corpus through the library: the verdict, and
// exactly the set of checks that must fail.
func TestVectors(t *testing.T) {
	m, trust := loadVectors(t)
	if len(m.Vectors) < 30 {
		t.Fatalf("corpus has %d vectors; expected the full corpus", len(m.Vectors))
	}
	for _, v := range m.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join(vectorsDir, v.File))
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind == "profile" {
				_, err := profile.Verify(doc, trust)
				if (err == nil) != v.Valid {
					t.Fatalf("profile.Verify error = %v, want valid=%v", err, v.Valid)
				}
				return
			}
			set := profile.NewSet()
			for _, p := range v.Profiles {
				if _, err := set.AddFile(filepath.Join(vectorsDir, p)); err != nil {
					t.Fatal(err)
				}
			}
			circuits := zk.NewSet()
			for _, c := range v.Circuits {
				if err := circuits.AddExplicit(filepath.Join(vectorsDir, c)); err != nil {
					t.Fatal(err)
				}
			}
			r := verifyDoc(t, doc, verify.Options{Trust: trust, Profiles: set, Proofs: &zk.Verifier{Trust: trust, Circuits: circuits}})
			if r.Valid != v.Valid || r.Verdict != v.Verdict {
				t.Errorf("verdict %q (valid=%v), want %q (valid=%v)", r.Verdict, r.Valid, v.Verdict, v.Valid)
			}
			var failed []string
			for _, c := range r.Checks {
				if c.Status == verify.Fail {
					failed = append(failed, string(c.Name))
				}
			}
			want := slices.Clone(v.Fails)
			slices.Sort(want)
			slices.Sort(failed)
			if !slices.Equal(failed, want) {
				t.Errorf("failed checks %v, want %v", failed, want)
				for _, c := range r.Checks {
					t.Logf("  %s %s: %s", c.Status, c.Name, c.Message)
				}
			}
			if len(r.Checks) != len(verify.Checks()) {
				t.Errorf("report has %d checks, want every one of the %d named checks", len(r.Checks), len(verify.Checks()))
			}
		})
	}
}
