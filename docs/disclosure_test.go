package docs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestVerifyByHandDisclosures: step 14 of the recipe accepts what the
// disclosures check of svc-verify accepts and fails what it fails, on
// VPECs signed as they are (only the disclosures are wrong).
func TestVerifyByHandDisclosures(t *testing.T) {
	requireTools(t)
	dir := t.TempDir()
	pub, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := signing.NewSigner(priv)
	tsa, err := timestamp.InitAuthority(filepath.Join(dir, "tsa"), timestamp.AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	trust := signing.NewBundle()
	trust.AddKey(pub)
	trust.AddRoot(tsa.Root())
	bundlePath := filepath.Join(dir, "bundle.pem")
	if err := os.WriteFile(bundlePath, trust.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	m := vpec.Manifest{Name: "kyc", Version: "1", Stages: []vpec.ManifestStage{
		{StageName: "kyc_check", ProofCeiling: "execution", RegulatoryReferences: []string{}, Disclose: []string{"document_type", "score"}}}}
	mid, _ := m.ID()
	build := func(edit func([]vpec.Record)) []vpec.Record {
		recs := make([]vpec.Record, 3)
		for i := range recs {
			in := []byte{byte(i), 0xff}
			recs[i] = vpec.Record{RecordID: names.NewID("rec_"), Sequence: int64(i + 1), Check: "kyc_check", ManifestID: mid,
				CheckResult: vpec.ResultPass, ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256",
				CommitmentHash: commitment.String(in), Visibility: vpec.Opaque, RecordedAt: vpec.FormatTime(time.Now())}
		}
		in, out := []byte("public\n"), []byte{0, 0x1b}
		recs[1].Visibility, recs[1].DisclosedInput = vpec.Transparent, disclosure.EncodeBytes(in)
		recs[1].CommitmentHash, recs[1].OutputCommitment, recs[1].DisclosedOutput = commitment.String(in), commitment.String(out), disclosure.EncodeBytes(out)
		s, err := disclosure.SplitInput([]byte(`{"document_type":"passport","score":0.25,"name":"Alice","nested":{"a":[1,"é",null]}}`), m.Stages[0].Disclose)
		if err != nil {
			t.Fatal(err)
		}
		mc := m
		recs[2].Visibility, recs[2].Manifest = vpec.Selective, &mc
		recs[2].CommitmentHash, recs[2].FieldDigests, recs[2].Disclosures = s.Commitment, s.Digests, s.Disclosed
		if edit != nil {
			edit(recs)
		}
		return recs
	}
	issue := func(recs []vpec.Record) string {
		v := &vpec.VPEC{VPECID: names.NewID("vpec_"), RunID: names.NewID("run_"), WorkflowID: "wf", OrgID: "org_1",
			Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", Records: recs, Gaps: []vpec.Gap{}, IssuedAt: vpec.FormatTime(time.Now())}
		if _, err := issue.Chain(vpec.Genesis(v.RunID), v.Records); err != nil {
			t.Fatal(err)
		}
		jcs, err := issue.RecordsJCS(v.Records)
		if err != nil {
			t.Fatal(err)
		}
		issue.Finish(v, jcs)
		if err := issue.Seal(context.Background(), v, signer, tsa); err != nil {
			t.Fatal(err)
		}
		doc, err := document.MarshalIndent(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, v.VPECID+".json")
		if err := os.WriteFile(p, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := issue(build(nil))
	if rep, err := verify.Verify(mustRead(t, p), verify.Options{Trust: trust}); err != nil {
		t.Fatalf("svc-verify: %v %+v", err, rep.FirstFailure())
	}
	out, code := runScript(t, p, bundlePath)
	if code != 0 || !strings.Contains(out, "ok    disclosures: 2 disclosed inputs match their commitments") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, tc := range []struct {
		name, want string
		edit       func([]vpec.Record)
	}{
		{"tampered input", "DISCLOSURE MISMATCH", func(r []vpec.Record) { r[1].DisclosedInput = disclosure.EncodeBytes([]byte("other")) }},
		{"tampered value", "DISCLOSURE MISMATCH", func(r []vpec.Record) { r[2].Disclosures[1].Value = 0.5 }},
		{"undeclared", "UNDECLARED FIELD", func(r []vpec.Record) {
			r[2].Manifest.Stages = []vpec.ManifestStage{{StageName: "kyc_check", ProofCeiling: "execution", RegulatoryReferences: []string{}, Disclose: []string{"score"}}}
			r[2].ManifestID, _ = r[2].Manifest.ID()
		}},
		{"opaque", "DISCLOSURE NOT ALLOWED", func(r []vpec.Record) { r[0].DisclosedInput = "AAA=" }},
		{"salt reused", "SALT REUSED", func(r []vpec.Record) {
			// Another record discloses a field with the same salt, its
			// digests and commitment recomputed (signed as it is).
			d := r[2].Disclosures[1]
			d.Salt = r[2].Disclosures[0].Salt
			v, _ := canonical.Marshal(d.Value)
			dg, _ := disclosure.DigestOf(d.Salt, d.Field, v)
			r[0].Visibility, r[0].Manifest, r[0].Disclosures, r[0].FieldDigests = vpec.Selective, r[2].Manifest, []disclosure.Disclosure{d}, []string{dg}
			r[0].CommitmentHash = disclosure.Commitment(r[0].FieldDigests)
		}},
		{"short salt", "DISCLOSURE MALFORMED", func(r []vpec.Record) { r[2].Disclosures[0].Salt = "AAECAwQFBgcICQoLDA0OD" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := issue(build(tc.edit))
			rep, _ := verify.Verify(mustRead(t, p), verify.Options{Trust: trust})
			out, code := runScript(t, p, bundlePath)
			if code != 1 || !strings.Contains(out, "FAIL  disclosures: ") || rep.Valid {
				t.Fatalf("by hand exit %d, svc-verify %s:\n%s", code, rep.Verdict, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("by hand does not say %s:\n%s", tc.want, out)
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
