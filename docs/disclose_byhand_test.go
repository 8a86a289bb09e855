package docs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestVerifyByHandAgreesOnDisclosures: the by-hand recipe (a second
// implementation of docs/FORMATS.md "Disclosures") and pkg/core/verify give the
// same verdict on signed VPECs whose one record discloses in every way the
// format allows or forbids. Found: the recipe took a field disclosed twice,
// a field_digests entry that is not a digest, a carried manifest with two
// stages of one name, and disclose lists breaking their rules, all of which
// pkg/core/verify fails.
func TestVerifyByHandAgreesOnDisclosures(t *testing.T) {
	requireTools(t)
	dir := t.TempDir()
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	bundleFile := filepath.Join(dir, "trust-bundle.pem")
	if err := os.WriteFile(bundleFile, mat.Trust.Marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	const runID = "run_00000000-0000-4000-8000-00000000000d"
	base := func() vpec.Record {
		return vpec.Record{RecordID: names.NewID("rec_"), Sequence: 1, Check: "kyc_check", ManifestID: "m", CheckResult: vpec.ResultPass,
			ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256", Visibility: vpec.Opaque, RecordedAt: vpec.FormatTime(time.Now())}
	}
	manifest := func(stages ...vpec.ManifestStage) *vpec.Manifest {
		return &vpec.Manifest{Name: "kyc", Version: "1", Stages: stages}
	}
	stage := func(name string, disclose ...string) vpec.ManifestStage {
		return vpec.ManifestStage{StageName: name, ProofCeiling: "execution", RegulatoryReferences: []string{}, Disclose: disclose}
	}
	// selective builds a selective record over input with m, disclosing
	// declared, then lets edit change it (the manifest id follows m).
	selective := func(input string, m *vpec.Manifest, declared []string, edit func(r *vpec.Record, s *disclosure.Split)) vpec.Record {
		r := base()
		s, err := disclosure.SplitInput([]byte(input), declared)
		if err != nil {
			t.Fatal(err)
		}
		r.Visibility, r.Manifest = vpec.Selective, m
		r.CommitmentHash, r.FieldDigests, r.Disclosures = s.Commitment, s.Digests, s.Disclosed
		if edit != nil {
			edit(&r, s)
		}
		r.ManifestID, _ = r.Manifest.ID()
		return r
	}
	kyc := manifest(stage("kyc_check", "document_type", "jurisdiction"))
	const input = `{"document_type":"passport","jurisdiction":"FR","holder":{"name":"A"}}`
	for _, tc := range []struct {
		name  string
		rec   vpec.Record
		valid bool
	}{
		{"selective", selective(input, kyc, []string{"document_type", "jurisdiction"}, nil), true},
		{"selective null value", selective(`{"document_type":null}`, kyc, []string{"document_type"}, nil), true},
		{"transparent", func() vpec.Record {
			r := base()
			r.Visibility, r.CommitmentHash, r.DisclosedInput = vpec.Transparent, commitment.String([]byte("hi")), disclosure.EncodeBytes([]byte("hi"))
			return r
		}(), true},
		{"field disclosed twice", selective(input, kyc, []string{"jurisdiction"}, func(r *vpec.Record, _ *disclosure.Split) {
			// A second digest under the same name, with another value:
			// both in field_digests, both disclosed.
			other := disclosure.Disclosure{Salt: strings.Repeat("B", 21) + "A", Field: "jurisdiction", Value: "US"}
			dg, _ := other.Digest()
			r.FieldDigests = sortedWith(r.FieldDigests, dg)
			r.CommitmentHash = disclosure.Commitment(r.FieldDigests)
			r.Disclosures = append(r.Disclosures, other)
		}), false},
		{"field_digests entry not a digest", selective(input, kyc, []string{"jurisdiction"}, func(r *vpec.Record, _ *disclosure.Split) {
			r.FieldDigests = sortedWith(r.FieldDigests, "sha256:not-a-digest")
			r.CommitmentHash = disclosure.Commitment(r.FieldDigests)
		}), false},
		{"manifest with two stages of one name", selective(input, manifest(stage("kyc_check", "jurisdiction"), stage("kyc_check")), []string{"jurisdiction"}, nil), false},
		{"disclose list naming a field twice", selective(input, manifest(stage("kyc_check", "jurisdiction", "jurisdiction")), []string{"jurisdiction"}, nil), false},
		{"disclose list with an empty name", selective(input, manifest(stage("kyc_check", "jurisdiction", "")), []string{"jurisdiction"}, nil), false},
		{"disclose list with a control character", selective(input, manifest(stage("kyc_check", "jurisdiction", "a\u001bb")), []string{"jurisdiction"}, nil), false},
		{"undeclared field", selective(input, manifest(stage("kyc_check", "document_type")), []string{"holder"}, func(r *vpec.Record, s *disclosure.Split) {
			for _, d := range s.All {
				if d.Field == "holder" {
					r.Disclosures = []disclosure.Disclosure{d}
				}
			}
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc, err := testvectors.SealRecords(runID, []vpec.Record{tc.rec}, mat.Signer, mat.TSA)
			if err != nil {
				t.Fatal(err)
			}
			rep, _ := verify.Verify(doc, verify.Options{Trust: mat.Trust})
			if rep == nil || rep.Valid != tc.valid {
				t.Fatalf("pkg/core/verify: %v, want valid=%v", rep.Verdict, tc.valid)
			}
			f := filepath.Join(t.TempDir(), "vpec.json")
			if err := os.WriteFile(f, doc, 0o600); err != nil {
				t.Fatal(err)
			}
			out, code := runScript(t, f, bundleFile)
			if (code == 0) != tc.valid {
				t.Fatalf("by hand: exit %d, pkg/core/verify says %s\n%s", code, rep.Verdict, out)
			}
			if !tc.valid && code != 1 {
				t.Errorf("by hand: exit %d, want 1 (INVALID)\n%s", code, out)
			}
		})
	}
}

// sortedWith returns digests with d added, sorted.
func sortedWith(digests []string, d string) []string {
	out := append(append([]string{}, digests...), d)
	for i := len(out) - 1; i > 0 && out[i] < out[i-1]; i-- {
		out[i], out[i-1] = out[i-1], out[i]
	}
	return out
}
