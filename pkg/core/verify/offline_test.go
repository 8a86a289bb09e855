package verify_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func offlineVector(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, "vpec", "invalid", "unsigned-offline.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// An unsigned offline VPEC is reported as what it is, whatever else it
// holds, and never VALID; a v1 VPEC without signature stays a schema error.
func TestUnsignedOfflineVerdict(t *testing.T) {
	_, trust := loadVectors(t)
	doc := offlineVector(t)
	const run = "run_00000000-0000-4000-8000-00000000c1ea"
	tests := []struct {
		name, from, to string
		verdict        string
		details        bool
	}{
		{"as written", "", "", verify.CodeUnsignedOffline + ": fetch the signed one with svc vpec get " + run, false},
		{"org unknown (opened offline)", `"org_id": "org_acme-health"`, `"org_id": ""`, verify.CodeUnsignedOffline + ": fetch the signed one with svc vpec get " + run, false},
		{"with a signature", `"signature": ""`, `"signature": "Ed25519:AAAA"`, verify.CodeUnsignedOffline + ": fetch the signed one with svc vpec get " + run, true},
		{"bad run id", run, `x\u001b[2J`, verify.CodeUnsignedOffline + ": fetch the signed one with svc vpec get RUN_ID", true},
		// Not even the members of a VPEC: the schema value is not read.
		{"unknown member", `"gaps": [`, `"x": 1, "gaps": [`, "INVALID — SCHEMA ERROR", true},
		{"null gaps", `"gaps": [`, `"gaps": null, "x": [`, "INVALID — SCHEMA ERROR", true},
		{"v1 schema, unsigned", vpec.OfflineSchema, vpec.Schema, "INVALID — SCHEMA ERROR", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := doc
			if tc.from != "" {
				d = bytes.Replace(doc, []byte(tc.from), []byte(tc.to), -1)
			}
			r := verifyDoc(t, d, verify.Options{Trust: trust})
			if r.Valid || r.Verdict != tc.verdict {
				t.Fatalf("verdict %q (valid %v), want %q", r.Verdict, r.Valid, tc.verdict)
			}
			if got := len(r.Check(verify.CheckSchema).Details) > 0; got != tc.details {
				t.Errorf("schema details %v, want some: %v", r.Check(verify.CheckSchema).Details, tc.details)
			}
			if len(r.Checks) != len(verify.Checks()) || r.MissingTrust() {
				t.Errorf("%d checks, missing trust %v", len(r.Checks), r.MissingTrust())
			}
			// A passing extra check (the replay audit) keeps the verdict.
			audit := func([]byte) (verify.Check, bool, error) {
				return verify.Check{Name: verify.CheckAudit, Status: verify.Pass}, true, nil
			}
			r = verifyDoc(t, d, verify.Options{Trust: trust, Extra: []verify.ExtraCheck{audit}})
			if r.Valid || r.Verdict != tc.verdict {
				t.Fatalf("with an extra check: verdict %q (valid %v)", r.Verdict, r.Valid)
			}
		})
	}
}

// FuzzVerifyOffline mutates the unsigned offline VPEC: never VALID, and
// an offline verdict always names the fetch command.
func FuzzVerifyOffline(f *testing.F) {
	doc := offlineVector(f)
	f.Add(doc)
	for _, edit := range [][2]string{
		{`"gaps": [`, `"gaps": null, "y": [`},
		{`"records": [`, `"records": null, "z": [`},
		{`"sequence": 1,`, `"sequence": 1, "details": {"x": null, "a": [null, {"b": null}]},`},
		{`"signing_key_id": ""`, `"signing_key_id": null`},
		{`"run_id": "run_`, `"run_id": "\u202erun_`},
		{`"timestamp_rfc3161": ""`, `"timestamp_rfc3161": "MIIB"`},
	} {
		f.Add(bytes.Replace(doc, []byte(edit[0]), []byte(edit[1]), 1))
	}
	for _, d := range fuzzedge.Documents(doc, 500) { // every integer at the documented maxima and int64 edges
		f.Add(d)
	}
	f.Add([]byte(`{"schema":"` + vpec.OfflineSchema + `"}`))
	f.Add([]byte(`{"schema":"` + vpec.OfflineSchema + `","run_id":null,"records":[null]}`))
	trust, err := signing.LoadBundle(filepath.Join(vectorsDir, "keys", "trust-bundle.pem"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		r := verifyDoc(t, d, verify.Options{Trust: trust})
		if len(r.Checks) != len(verify.Checks()) {
			t.Fatalf("%d checks reported", len(r.Checks))
		}
		if r.Check(verify.CheckSchema).Code == verify.CodeUnsignedOffline {
			if r.Valid || !strings.HasPrefix(r.Verdict, verify.CodeUnsignedOffline+": fetch the signed one with svc vpec get ") {
				t.Fatalf("offline verdict %q valid %v", r.Verdict, r.Valid)
			}
		}
		if r.Valid && r.Check(verify.CheckSignature).Status != verify.Pass {
			t.Fatal("VALID without a signature")
		}
	})
}
