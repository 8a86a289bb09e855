package verify_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/verify"
)

// FuzzVerify feeds arbitrary documents to the verifier: it must never
// panic, must always report every named check, and must never call a document
// VALID unless its signature and timestamp checks passed.
func FuzzVerify(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(vectorsDir, "vpec", "*", "*.json"))
	var base []byte
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
			if strings.HasSuffix(p, "witnessed.json") {
				base = b
			}
		}
	}
	// The short seeds below stop at the shape check (a record has at least
	// 11 members): the same shapes inside a real VPEC reach every check.
	for _, edit := range [][2]string{
		{`"sequence": 1,`, `"sequence": 1, "details": {"x": null, "a": [null, {"b": null}]},`},
		{`"sequence": 1,`, `"sequence": 1, "details": null,`},
		{`"sequence": 1,`, `"sequence": 1, "output_commitment": "",`},
		{`"check": "`, "\"check\": \"\u001b[2J\u202e"},
		{`"gaps": [],`, `"gaps": [{"gap_id": "g", "gap_type": "sequence_missing", "severity": "High", "check": null, "sequence": 3, "sequence_end": 2, "timestamp": "1970-01-01T00:00:00Z"}],`},
		{`"gaps": [],`, `"gaps": [{"gap_id": "g", "gap_type": "empty_run", "severity": "High", "check": null, "sequence": null, "timestamp": "2099-01-01T00:00:00Z"}],`},
		{`"signature": "`, `"signature": "\r\n`},
		{`"proof_level": "witnessed"`, `"proof_level": "mathematical"`},
		// Disclosure members (docs/FORMATS.md, Disclosures).
		{`"sequence": 1,`, `"sequence": 1, "disclosed_input": "aGk=", "disclosed_output": "AAEC/g==",`},
		{`"visibility": "opaque"`, `"visibility": "selective", "field_digests": ["sha256:045cfea9d0c60b7ce4de0bd4676938cf25d791460b7fa6f79259d748c94cf708"], "disclosures": [{"salt": "AAECAwQFBgcICQoLDA0ODw", "field": "document_type", "value": "passport"}], "manifest": {"name": "kyc", "version": "1", "stages": [{"stage_name": "kyc_check", "proof_ceiling": "execution", "regulatory_references": [], "disclose": ["document_type"]}]}`},
		{`"visibility": "opaque"`, `"visibility": "transparent", "disclosures": [{"salt": "", "field": "", "value": [[[0.50]]]}]`},
	} {
		if base != nil {
			f.Add(bytes.Replace(base, []byte(edit[0]), []byte(edit[1]), 1))
		}
	}
	// Every integer of the witnessed and Bounded Inference vectors at and
	// around every documented maximum and the int64 overflow edges (a
	// review's min_duration_seconds of 9,223,372,037 or 2^40 once passed
	// as a 35 s review's minimum).
	for _, p := range []string{"witnessed.json", "bounded-inference.json"} {
		if b, err := os.ReadFile(filepath.Join(vectorsDir, "vpec", "valid", p)); err == nil {
			for _, d := range fuzzedge.Documents(b, 2000) {
				f.Add(d)
			}
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"records":[{"review":{}}]}`))
	// The shapes of issue 10: null at every depth of details, ranges,
	// empty runs, control characters, empty and binary input.
	f.Add([]byte(`{"records":[{"details":{"x":null,"a":[null,{"b":null}]}}]}`))
	f.Add([]byte(`{"records":[],"gaps":[{"gap_id":"g","gap_type":"empty_run","severity":"High","check":null,"sequence":null,"timestamp":"1970-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"gaps":[{"gap_type":"sequence_missing","sequence":3,"sequence_end":2}]}`))
	f.Add([]byte(`{"gaps":[{"gap_type":"chain_break","sequence":1,"sequence_end":null}]}`))
	f.Add([]byte("{\"records\":[{\"check\":\"a\u001b[2J\u202e\"}]}"))
	f.Add([]byte(`{"records":[{"disclosures":[{"value":[[[]]]}],"manifest":{"stages":[{"disclose":[""]}]}}]}`))
	f.Add([]byte(""))
	f.Add([]byte("\x00\x01\xff"))
	trust, err := signing.LoadBundle(filepath.Join(vectorsDir, "keys", "trust-bundle.pem"))
	if err != nil {
		f.Fatal(err)
	}
	set := profile.NewSet()
	if _, err := set.AddFile(filepath.Join(vectorsDir, "profile", "pii-detection-v1.0.0.json")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		r := verifyDoc(t, doc, verify.Options{Trust: trust, Profiles: set})
		if len(r.Checks) != len(verify.Checks()) {
			t.Fatalf("%d checks reported", len(r.Checks))
		}
		if r.Valid && (r.Check(verify.CheckSignature).Status != verify.Pass || r.Check(verify.CheckTimestamp).Status != verify.Pass || r.Check(verify.CheckChain).Status == verify.Fail) {
			t.Fatalf("VALID without signature, timestamp and chain checks passing: %+v", r.Checks)
		}
		if r.Valid && (r.Check(verify.CheckTime).Status != verify.Pass || r.Check(verify.CheckEvidence).Status != verify.Pass) {
			t.Fatalf("VALID without the time and evidence checks passing: %+v", r.Checks)
		}
		if r.Valid && r.Records == 0 && r.IsClean {
			t.Fatalf("an empty run reported VALID and clean")
		}
		if r.Check(verify.CheckReviews).Status == verify.Pass {
			reviewsLastedTheirMinimum(t, doc)
		}
	})
}

// reviewsLastedTheirMinimum fails unless every review of doc lasted at
// least its min_duration_seconds, computed apart from the verifier: the
// genTimes of its tokens in big-integer nanoseconds.
func reviewsLastedTheirMinimum(t *testing.T, doc []byte) {
	var v struct {
		Records []struct {
			Review *struct {
				MinDurationSeconds int64  `json:"min_duration_seconds"`
				CheckOpenTST       string `json:"check_open_tst"`
				CheckCloseTST      string `json:"check_close_tst"`
			} `json:"review"`
		} `json:"records"`
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("the reviews check passed on a document encoding/json cannot read: %v", err)
	}
	genTime := func(b64 string) *big.Int {
		der, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		info, err := timestamp.ParseResponse(der)
		if err != nil {
			t.Fatalf("the reviews check passed on a token that does not parse: %v", err)
		}
		ns := new(big.Int).Mul(big.NewInt(info.GenTime.Unix()), big.NewInt(1e9))
		return ns.Add(ns, big.NewInt(int64(info.GenTime.Nanosecond())))
	}
	for i, r := range v.Records {
		if r.Review == nil {
			continue
		}
		lasted := new(big.Int).Sub(genTime(r.Review.CheckCloseTST), genTime(r.Review.CheckOpenTST))
		if least := new(big.Int).Mul(big.NewInt(r.Review.MinDurationSeconds), big.NewInt(1e9)); lasted.Cmp(least) < 0 {
			t.Fatalf("records[%d]: the review lasted %s ns, less than min_duration_seconds %d, and the reviews check passed", i, lasted, r.Review.MinDurationSeconds)
		}
	}
}
