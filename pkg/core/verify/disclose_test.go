package verify_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

var kycManifest = vpec.Manifest{Name: "kyc", Version: "1", Stages: []vpec.ManifestStage{
	{StageName: "kyc_check", ProofCeiling: "execution", RegulatoryReferences: []string{}, Disclose: []string{"document_type", "jurisdiction"}},
}}

const kycInput = `{"document_type":"passport","jurisdiction":"FR","name":"Alice Example","passport_no":"X1234567"}`

// disclosingRecords returns an opaque, a transparent (text input, binary
// output) and a selective record, as the client builds them.
func disclosingRecords(t *testing.T) []vpec.Record {
	t.Helper()
	recs := records(3, vpec.Execution)
	recs[1].Visibility = vpec.Transparent
	in, out := []byte("a non-sensitive prompt: \"hello\"\n"), []byte{0, 0xff, 0x1b, '[', '2', 'J', 0x80}
	recs[1].CommitmentHash, recs[1].DisclosedInput = commitment.String(in), disclosure.EncodeBytes(in)
	recs[1].OutputCommitment, recs[1].DisclosedOutput = commitment.String(out), disclosure.EncodeBytes(out)
	selective(t, &recs[2], kycManifest, kycInput, nil)
	return recs
}

// selective makes r a selective record of kycManifest's stage over input,
// disclosing declared (the stage's list when nil).
func selective(t *testing.T, r *vpec.Record, m vpec.Manifest, input string, declared []string) *disclosure.Split {
	t.Helper()
	id, err := m.ID()
	if err != nil {
		t.Fatal(err)
	}
	if declared == nil {
		declared, _ = m.Declared("kyc_check")
	}
	s, err := disclosure.SplitInput([]byte(input), declared)
	if err != nil {
		t.Fatal(err)
	}
	r.Check, r.ManifestID, r.Visibility = "kyc_check", id, vpec.Selective
	r.CommitmentHash, r.FieldDigests, r.Disclosures, r.Manifest = s.Commitment, s.Digests, s.Disclosed, &m
	return s
}

func TestDisclosuresVerify(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, disclosingRecords(t), nil)
	rep, err := verify.Verify(doc, verify.Options{Trust: f.trust})
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	c := rep.Check(verify.CheckDisclosure)
	if c.Status != verify.Pass || !strings.HasPrefix(c.Message, "2 disclosed inputs match their commitments") {
		t.Fatalf("disclosures check: %+v", c)
	}
	if len(rep.Disclosed) != 2 {
		t.Fatalf("disclosed: %+v", rep.Disclosed)
	}
	tr, sel := rep.Disclosed[0], rep.Disclosed[1]
	if tr.InputText == nil || *tr.InputText != "a non-sensitive prompt: \"hello\"\n" || tr.OutputText != nil {
		t.Errorf("transparent: %+v", tr)
	}
	if b, _ := disclosure.DecodeBytes(*tr.Output); !bytes.Equal(b, []byte{0, 0xff, 0x1b, '[', '2', 'J', 0x80}) {
		t.Errorf("binary output does not round-trip: %q", b)
	}
	if len(sel.Fields) != 2 || sel.Fields["document_type"] != "passport" || sel.Fields["jurisdiction"] != "FR" || sel.Undisclosed != 2 {
		t.Errorf("selective: %+v", sel)
	}
	// Undeclared values are nowhere in the VPEC.
	for _, secret := range []string{"Alice", "X1234567", "passport_no"} {
		if bytes.Contains(doc, []byte(secret)) {
			t.Errorf("the VPEC holds %q", secret)
		}
	}
	js, _ := json.Marshal(rep)
	if !bytes.Contains(js, []byte(`"fields":{"document_type":"passport","jurisdiction":"FR"}`)) {
		t.Errorf("JSON report lacks the disclosed fields: %s", js)
	}
}

// TestDisclosureFailures: each way a disclosure can be wrong fails the
// disclosures check with its code, naming the record, even in a VPEC the
// issuer signed as it is.
func TestDisclosureFailures(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name, code, want string
		edit             func(t *testing.T, recs []vpec.Record)
	}{
		{"tampered transparent input", "DISCLOSURE MISMATCH", "record 2", func(t *testing.T, r []vpec.Record) {
			r[1].DisclosedInput = disclosure.EncodeBytes([]byte("another prompt"))
		}},
		{"tampered transparent output", "DISCLOSURE MISMATCH", "disclosed_output", func(t *testing.T, r []vpec.Record) {
			r[1].DisclosedOutput = ""
		}},
		{"tampered selective value", "DISCLOSURE MISMATCH", "record 3", func(t *testing.T, r []vpec.Record) {
			r[2].Disclosures[0].Value = "visa"
		}},
		{"swapped field names", "DISCLOSURE MISMATCH", "disclosures[0]", func(t *testing.T, r []vpec.Record) {
			r[2].Disclosures[0].Field, r[2].Disclosures[1].Field = r[2].Disclosures[1].Field, r[2].Disclosures[0].Field
		}},
		{"dropped digest", "DISCLOSURE MISMATCH", "field_digests", func(t *testing.T, r []vpec.Record) {
			r[2].FieldDigests = r[2].FieldDigests[1:]
		}},
		{"undeclared field", "UNDECLARED FIELD", `"name" is not declared`, func(t *testing.T, r []vpec.Record) {
			selective(t, &r[2], kycManifest, kycInput, []string{"document_type", "name"})
		}},
		{"manifest edited to declare more", "DISCLOSURE MISMATCH", "manifest", func(t *testing.T, r []vpec.Record) {
			m := kycManifest
			m.Stages = []vpec.ManifestStage{m.Stages[0]}
			m.Stages[0].Disclose = []string{"document_type", "name"}
			id := r[2].ManifestID
			selective(t, &r[2], m, kycInput, nil)
			r[2].ManifestID = id
		}},
		{"selective without manifest", "DISCLOSURE MALFORMED", "manifest", func(t *testing.T, r []vpec.Record) {
			r[2].Manifest = nil
		}},
		{"disclosure in an opaque record", "DISCLOSURE NOT ALLOWED", "record 1", func(t *testing.T, r []vpec.Record) {
			r[0].DisclosedInput = disclosure.EncodeBytes([]byte("0"))
		}},
		{"selective members in a transparent record", "DISCLOSURE NOT ALLOWED", "field_digests", func(t *testing.T, r []vpec.Record) {
			r[1].FieldDigests = r[2].FieldDigests
		}},
		{"reused salt across records", "SALT REUSED", "also used in record 1", func(t *testing.T, r []vpec.Record) {
			// Record 1 uses record 3's salt for another value.
			selective(t, &r[0], kycManifest, `{"document_type":"visa"}`, nil)
			salt := r[2].Disclosures[0].Salt
			dg, _ := disclosure.DigestOf(salt, "document_type", []byte(`"visa"`))
			r[0].Disclosures[0].Salt = salt
			r[0].FieldDigests = []string{dg}
			r[0].CommitmentHash = disclosure.Commitment(r[0].FieldDigests)
		}},
		{"replayed selective record", "SALT REUSED", "is also in record", func(t *testing.T, r []vpec.Record) {
			selective(t, &r[0], kycManifest, kycInput, nil)
			r[0].FieldDigests, r[0].Disclosures, r[0].CommitmentHash = r[2].FieldDigests, r[2].Disclosures, r[2].CommitmentHash
		}},
		{"malformed salt", "DISCLOSURE MALFORMED", "salt", func(t *testing.T, r []vpec.Record) {
			r[2].Disclosures[0].Salt = "c2hvcnQ"
		}},
		{"transparent base64 with a line break", "DISCLOSURE MALFORMED", "disclosed_input", func(t *testing.T, r []vpec.Record) {
			r[1].DisclosedInput = r[1].DisclosedInput[:8] + "\n" + r[1].DisclosedInput[8:]
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs := disclosingRecords(t)
			tc.edit(t, recs)
			doc := f.issue(t, recs, nil)
			rep, err := verify.Verify(doc, verify.Options{Trust: f.trust})
			if !errors.Is(err, verify.ErrInvalid) {
				t.Fatalf("err = %v, want INVALID", err)
			}
			c := rep.Check(verify.CheckDisclosure)
			if c.Status != verify.Fail || c.Code != tc.code || !strings.Contains(c.Message, tc.want) {
				t.Fatalf("disclosures check = %+v, want %s naming %q", c, tc.code, tc.want)
			}
			if rep.Disclosed != nil {
				t.Errorf("a failed check reports disclosed values: %+v", rep.Disclosed)
			}
			if s := rep.Check(verify.CheckSignature); s.Status != verify.Pass {
				t.Errorf("signature: %+v", s)
			}
		})
	}
}

// TestDisclosureTamperedAfterSealing: a disclosed value edited in the
// issued document fails the signature and the disclosure check.
func TestDisclosureTamperedAfterSealing(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, disclosingRecords(t), nil)
	bad := bytes.Replace(doc, []byte(`"passport"`), []byte(`"visa"`), 1)
	rep, err := verify.Verify(bad, verify.Options{Trust: f.trust})
	if !errors.Is(err, verify.ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
	if rep.Check(verify.CheckDisclosure).Code != "DISCLOSURE MISMATCH" || rep.Check(verify.CheckSignature).Status != verify.Fail {
		t.Fatalf("%+v", rep.Checks)
	}
	// A number spelt another way is a schema error (one form per document).
	num := vpec.Manifest{Name: "n", Version: "1", Stages: []vpec.ManifestStage{{StageName: "kyc_check", ProofCeiling: "execution", RegulatoryReferences: []string{}, Disclose: []string{"score"}}}}
	recs := disclosingRecords(t)
	selective(t, &recs[2], num, `{"score":0.5}`, nil)
	doc = f.issue(t, recs, nil)
	if !bytes.Contains(doc, []byte(`"value": 0.5`)) {
		t.Fatalf("no score in %s", doc)
	}
	rep, _ = verify.Verify(bytes.Replace(doc, []byte(`"value": 0.5`), []byte(`"value": 0.50`), 1), verify.Options{Trust: f.trust})
	if c := rep.Check(verify.CheckSchema); c.Status != verify.Fail || !strings.Contains(c.Message, "canonical form 0.5") {
		t.Fatalf("schema: %+v", c)
	}
}

// BenchmarkVerifyDisclosures compares verifying 1,000 opaque records (the
// baseline) with 1,000 transparent records (1 KiB input each) and 1,000
// selective records (4 fields, 2 disclosed, each carrying its manifest).
func BenchmarkVerifyDisclosures(b *testing.B) {
	f := newFixture(b)
	const n = 1000
	public := bytes.Repeat([]byte("public text "), 86)[:1024]
	for _, mode := range []vpec.Visibility{vpec.Opaque, vpec.Transparent, vpec.Selective} {
		recs := records(n, vpec.Execution)
		for i := range recs {
			switch mode {
			case vpec.Transparent:
				recs[i].Visibility, recs[i].CommitmentHash, recs[i].DisclosedInput = mode, commitment.String(public), disclosure.EncodeBytes(public)
			case vpec.Selective:
				m := kycManifest
				id, _ := m.ID()
				s, err := disclosure.SplitInput([]byte(kycInput), m.Stages[0].Disclose)
				if err != nil {
					b.Fatal(err)
				}
				recs[i].Check, recs[i].ManifestID, recs[i].Visibility, recs[i].Manifest = "kyc_check", id, mode, &m
				recs[i].CommitmentHash, recs[i].FieldDigests, recs[i].Disclosures = s.Commitment, s.Digests, s.Disclosed
			}
		}
		doc := f.issue(b, recs, nil)
		b.Run(string(mode), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := verify.Verify(doc, verify.Options{Trust: f.trust}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
		})
	}
}
