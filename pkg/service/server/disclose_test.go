package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

var kycManifest = api.Manifest{Name: "kyc", Version: "1", Stages: []api.ManifestStage{
	{StageName: "kyc_check", ProofCeiling: "execution", Disclose: []string{"document_type", "jurisdiction"}},
}}

func makeSelective(t *testing.T, r *vpec.Record, input string, declared []string) {
	t.Helper()
	m := kycManifest.AsDocument()
	id, err := m.ID()
	if err != nil {
		t.Fatal(err)
	}
	s, err := disclosure.SplitInput([]byte(input), declared)
	if err != nil {
		t.Fatal(err)
	}
	r.Check, r.ManifestID, r.Visibility, r.Manifest = "kyc_check", id, vpec.Selective, &m
	r.CommitmentHash, r.FieldDigests, r.Disclosures = s.Commitment, s.Digests, s.Disclosed
}

// The service takes disclosures only where the record's visibility and
// manifest allow them and they match the commitments; anything else is
// 422 disclosure_invalid naming the member.
func TestRecordDisclosures(t *testing.T) {
	e := newEnv(t)
	in := []byte("plain text input")
	const kyc = `{"document_type":"passport","jurisdiction":"FR","name":"Alice"}`
	for _, tc := range []struct {
		name   string
		mutate func(r *vpec.Record)
		want   int
		field  string
	}{
		{"opaque with disclosed_input", func(r *vpec.Record) { r.DisclosedInput = disclosure.EncodeBytes(in) }, 422, "disclosed_input"},
		{"opaque with field_digests", func(r *vpec.Record) { r.FieldDigests = []string{commitment.String(in)} }, 422, "field_digests"},
		{"transparent", func(r *vpec.Record) {
			r.Visibility, r.CommitmentHash, r.DisclosedInput = vpec.Transparent, commitment.String(in), disclosure.EncodeBytes(in)
		}, 201, ""},
		{"transparent mismatch", func(r *vpec.Record) {
			r.Visibility, r.DisclosedInput = vpec.Transparent, disclosure.EncodeBytes(in)
		}, 422, "disclosed_input"},
		{"transparent with disclosures", func(r *vpec.Record) {
			makeSelective(t, r, kyc, []string{"document_type"})
			r.Visibility = vpec.Transparent
		}, 422, "field_digests"},
		{"selective", func(r *vpec.Record) { makeSelective(t, r, kyc, []string{"document_type", "jurisdiction"}) }, 201, ""},
		{"selective undeclared", func(r *vpec.Record) { makeSelective(t, r, kyc, []string{"name"}) }, 422, "disclosures[0].field"},
		{"selective tampered", func(r *vpec.Record) {
			makeSelective(t, r, kyc, []string{"document_type"})
			r.Disclosures[0].Value = "visa"
		}, 422, "disclosures[0]"},
		{"selective without manifest", func(r *vpec.Record) {
			makeSelective(t, r, kyc, []string{"document_type"})
			r.Manifest = nil
		}, 422, "manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, code, eb, data := e.recordOne(e.keyA, tc.mutate)
			if code != tc.want || (tc.want == 422 && (eb.Error.Code != api.CodeDisclosureInvalid || eb.Error.Field != tc.field)) {
				t.Fatalf("%d %s, want %d field %q", code, data, tc.want, tc.field)
			}
		})
	}
}

// A run with opaque, transparent and selective records closes into a VPEC
// that carries the disclosures and verifies VALID; the manifest with a
// disclose list registers under the id the records name.
func TestDisclosuresInVPEC(t *testing.T) {
	e := newEnv(t)
	var reg api.ManifestRegistration
	if code, body := e.do("POST", "/api/v1/manifests", e.keyA, kycManifest.WithEmptyLists(), &reg); code != 201 {
		t.Fatalf("register: %d %s", code, body)
	}
	m := kycManifest.AsDocument()
	if id, _ := m.ID(); id != reg.ManifestID {
		t.Fatalf("manifest id %s, service says %s", id, reg.ManifestID)
	}
	run := e.open(e.keyA)
	recs := chain(run.RunID, 3)
	in := []byte{0, 1, 2, 0xfe}
	recs[1].Visibility, recs[1].CommitmentHash, recs[1].DisclosedInput = vpec.Transparent, commitment.String(in), disclosure.EncodeBytes(in)
	makeSelective(t, &recs[2], `{"document_type":"passport","jurisdiction":"FR","name":"Alice"}`, []string{"document_type", "jurisdiction"})
	issue.Chain(vpec.Genesis(run.RunID), recs)
	for _, r := range recs {
		if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, r, nil); code != 201 {
			t.Fatalf("record %d: %d %s", r.Sequence, code, body)
		}
	}
	code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyA, nil, nil)
	if code != 201 && code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	rep := e.verify(doc)
	c := rep.Check(verify.CheckDisclosure)
	if !rep.Valid || c.Status != verify.Pass || !strings.HasPrefix(c.Message, "2 disclosed inputs") {
		t.Fatalf("%s: %+v", rep.Verdict, c)
	}
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if v.Records[1].DisclosedInput != "AAEC/g==" || len(v.Records[2].Disclosures) != 2 || strings.Contains(string(doc), "Alice") {
		t.Fatalf("records as issued: %+v", v.Records[1:])
	}
}

// A carried manifest keeps the limits of a registered one (the size of
// disclosures is tested in pkg/core/disclosure: this server's bodies are
// smaller).
func TestRecordDisclosureLimits(t *testing.T) {
	e := newEnv(t)
	_, code, eb, data := e.recordOne(e.keyA, func(r *vpec.Record) {
		makeSelective(t, r, `{"document_type":"passport"}`, []string{"document_type"})
		r.Manifest.Stages[0].RegulatoryReferences = []string{"a\u001b[2J"}
		r.ManifestID, _ = r.Manifest.ID()
	})
	if code != 422 || eb.Error.Code != api.CodeDisclosureInvalid || eb.Error.Field != "manifest.stages[0].regulatory_references[0]" {
		t.Fatalf("%d %s", code, data)
	}
}
