package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// postRaw posts one record of a fresh run written as raw JSON text: body
// is the record without chain_hash; the chain hash is computed here over
// the RFC 8785 form of exactly that text (as the service does), so a
// crafted spelling reaches the disclosure checks rather than the chain
// check. It returns the run, the status and the error body.
func (e *env) postRaw(runID, body string) (int, api.ErrorBody, []byte) {
	e.t.Helper()
	tree, err := canonical.Parse([]byte(body))
	if err != nil {
		// The text is not JSON the chain can be computed over: send it
		// as it is, the service must refuse it.
		code, _, eb, data := e.raw("POST", "/api/v1/runs/"+runID+"/records", e.keyB, []string{"application/json"}, body)
		return code, eb, data
	}
	ch := commitment.OfSHA256(vpec.NextChainHash(vpec.Genesis(runID), tree.Canonical("chain_hash"))).String()
	full := `{"chain_hash":"` + ch + `",` + strings.TrimPrefix(strings.TrimSpace(body), "{")
	code, _, eb, data := e.raw("POST", "/api/v1/runs/"+runID+"/records", e.keyB, []string{"application/json"}, full)
	return code, eb, data
}

// recordJSON returns rec (sequence 1 of runID) as JSON without chain_hash,
// with the members of extra merged in as raw JSON text (replacing any of
// the same name).
func recordJSON(t *testing.T, runID string, mutate func(r *vpec.Record), extra map[string]string) string {
	t.Helper()
	rec := chain(runID, 1)[0]
	rec.CheckResult = vpec.ResultPass
	if mutate != nil {
		mutate(&rec)
	}
	rec.ChainHash = ""
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "chain_hash")
	for k, v := range extra {
		if v == "" {
			delete(m, k)
			continue
		}
		m[k] = json.RawMessage(v)
	}
	// Written by hand so raw text (duplicate names, odd numbers) stays.
	var sb strings.Builder
	sb.WriteString("{")
	first := true
	for k, v := range m {
		if !first {
			sb.WriteString(",")
		}
		first = false
		kb, _ := json.Marshal(k)
		sb.Write(kb)
		sb.WriteString(":")
		sb.Write(v)
	}
	sb.WriteString("}")
	return sb.String()
}

// The hostile client's invariant for disclosures: whatever a client sends,
// the service either refuses it with a JSON error naming a field (never a
// 5xx), or accepts it and then seals a VPEC that verifies VALID. A
// disclosure the service signs and the verifier fails is a forged-looking
// VPEC issued by the service itself.
func TestHostileDisclosures(t *testing.T) {
	e := newEnv(t)
	m := kycManifest.AsDocument()
	mid, err := m.ID()
	if err != nil {
		t.Fatal(err)
	}
	mj, _ := json.Marshal(m)
	// selective sets a selective record whose input is the JSON object
	// input (split with the real client code), disclosing declared.
	selective := func(input string, declared ...string) func(r *vpec.Record) {
		return func(r *vpec.Record) { makeSelective(t, r, input, declared) }
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	text := []byte("some text!") // 10 bytes: its base64 is padded
	// handBuilt discloses value (raw JSON) as the one member of a
	// selective input, digests computed here as a second implementation
	// would, bypassing the client's splitter and its depth limit.
	handBuilt := func(value string) func(r *vpec.Record) {
		return func(r *vpec.Record) {
			makeSelective(t, r, `{"document_type":"passport"}`, []string{"document_type"})
			v, err := canonical.Parse([]byte(value))
			if err != nil {
				t.Fatal(err)
			}
			const salt = "AAECAwQFBgcICQoLDA0ODw"
			dg, err := disclosure.DigestOf(salt, "document_type", v.Canonical())
			if err != nil {
				t.Fatal(err)
			}
			var val any
			if err := json.Unmarshal([]byte(value), &val); err != nil {
				t.Fatal(err)
			}
			r.FieldDigests, r.CommitmentHash = []string{dg}, disclosure.Commitment([]string{dg})
			r.Disclosures = []disclosure.Disclosure{{Salt: salt, Field: "document_type", Value: val}}
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *vpec.Record)
		extra  map[string]string
		// want is 201 (then the VPEC must verify VALID) or the 4xx
		// expected, with the field the error must name; 0 takes either.
		want  int
		field string
	}{
		// Values the client's own splitter produces must seal and verify.
		{"value null", selective(`{"document_type":null}`, "document_type"), nil, 201, ""},
		{"value empty string", selective(`{"document_type":""}`, "document_type"), nil, 201, ""},
		{"value empty object", selective(`{"document_type":{}}`, "document_type"), nil, 201, ""},
		{"value empty array", selective(`{"document_type":[]}`, "document_type"), nil, 201, ""},
		{"value zero", selective(`{"document_type":0}`, "document_type"), nil, 201, ""},
		{"value false", selective(`{"document_type":false}`, "document_type"), nil, 201, ""},
		{"value -0", selective(`{"document_type":-0}`, "document_type"), nil, 201, ""},
		{"value 1.0", selective(`{"document_type":1.0}`, "document_type"), nil, 201, ""},
		{"value 1e2", selective(`{"document_type":1e2}`, "document_type"), nil, 201, ""},
		{"value __proto__ member", selective(`{"document_type":{"__proto__":{"x":1}}}`, "document_type"), nil, 201, ""},
		{"empty input object", selective(`{}`, "document_type"), nil, 201, ""},
		{"value nested to the input limit", selective(`{"document_type":`+deep(disclosure.MaxInputDepth-1)+`}`, "document_type"), nil, 201, ""},
		// Raw spellings a client may send: the service refuses or
		// canonicalises, and what it seals verifies.
		{"disclosure value with duplicate names", selective(`{"document_type":"passport"}`, "document_type"),
			map[string]string{"disclosures": `[{"salt":"AAECAwQFBgcICQoLDA0ODw","field":"document_type","value":{"a":1,"a":2}}]`}, 400, ""},
		{"disclosure value 1e400", selective(`{"document_type":"passport"}`, "document_type"),
			map[string]string{"disclosures": `[{"salt":"AAECAwQFBgcICQoLDA0ODw","field":"document_type","value":1e400}]`}, 400, ""},
		// Nesting: a record sits 2 levels down in its VPEC (limit 64), so
		// a record nesting 63 levels must be refused, not sealed into a
		// VPEC that fails as a whole (found: the service took it).
		{"details nested 63 levels with the record", nil,
			map[string]string{"details": `{"x":` + deep(61) + `}`}, 400, "details"},
		{"details nested 62 levels with the record", nil,
			map[string]string{"details": `{"x":` + deep(60) + `}`}, 201, ""},
		{"hand-built disclosure nested 63 levels with the record", handBuilt(deep(60)), nil, 400, "disclosures"},
		{"hand-built disclosure nested 62 levels with the record", handBuilt(deep(59)), nil, 201, ""},
		{"same field disclosed twice", selective(`{"document_type":"passport","jurisdiction":"FR"}`, "document_type", "document_type"), nil, 422, "disclosures[1].field"},
		{"field differing by case", selective(`{"Document_type":"passport"}`, "Document_type"), nil, 422, "disclosures[0].field"},
		{"carried manifest with an unknown member", selective(`{"document_type":"passport"}`, "document_type"),
			map[string]string{"manifest": strings.Replace(string(mj), `"kyc_check"`, `"kyc_check","disclose_unused":1`, 1)}, 400, ""},
		// The same id, other bytes: "disclose": [] is dropped by the
		// manifest's RFC 8785 form (omitempty), so its id is unchanged.
		{"carried manifest with an empty disclose list", func(r *vpec.Record) {
			makeSelective(t, r, `{"document_type":"passport"}`, []string{"document_type"})
			r.Manifest.Stages = append(r.Manifest.Stages, vpec.ManifestStage{StageName: "other", ProofCeiling: "execution", RegulatoryReferences: []string{}})
			r.ManifestID, _ = r.Manifest.ID()
		}, map[string]string{"manifest": strings.Replace(string(mj), `]}]}`, `]},{"stage_name":"other","proof_ceiling":"execution","regulatory_references":[],"disclose":[]}]}`, 1)}, 400, "manifest.stages[1].disclose"},
		{"carried manifest with empty onnx_model_hash", selective(`{"document_type":"passport"}`, "document_type"),
			map[string]string{"manifest": strings.Replace(string(mj), `"stage_name"`, `"onnx_model_hash":"","stage_name"`, 1)}, 400, ""},
		{"carried manifest with null regulatory_references", selective(`{"document_type":"passport"}`, "document_type"),
			map[string]string{"manifest": strings.Replace(string(mj), `"regulatory_references":[]`, `"regulatory_references":null`, 1)}, 400, ""},
		{"selective with empty disclosures", selective(`{"document_type":"passport"}`),
			map[string]string{"disclosures": `[]`}, 400, ""},
		{"opaque with empty disclosures", nil, map[string]string{"disclosures": `[]`}, 400, ""},
		{"opaque with manifest", nil, map[string]string{"manifest": string(mj)}, 422, "manifest"},
		{"transparent url alphabet", func(r *vpec.Record) {
			b := []byte{0xfb, 0xff, 0xbf}
			r.Visibility, r.CommitmentHash = vpec.Transparent, commitment.String(b)
		}, map[string]string{"disclosed_input": `"-_-_"`}, 422, "disclosed_input"},
		{"transparent without padding", func(r *vpec.Record) {
			r.Visibility, r.CommitmentHash = vpec.Transparent, commitment.String(text)
		}, map[string]string{"disclosed_input": `"` + strings.TrimRight(disclosure.EncodeBytes(text), "=") + `"`}, 422, "disclosed_input"},
		{"transparent with a line break", func(r *vpec.Record) {
			r.Visibility, r.CommitmentHash = vpec.Transparent, commitment.String(text)
		}, map[string]string{"disclosed_input": `"` + disclosure.EncodeBytes(text)[:4] + `\n` + disclosure.EncodeBytes(text)[4:] + `"`}, 422, "disclosed_input"},
		{"transparent without disclosed_input", func(r *vpec.Record) {
			r.Visibility, r.CommitmentHash = vpec.Transparent, commitment.String(text)
		}, nil, 422, "disclosed_input"},
		{"transparent with empty disclosed_input", func(r *vpec.Record) {
			r.Visibility, r.CommitmentHash = vpec.Transparent, commitment.String(nil)
		}, map[string]string{"disclosed_input": `""`}, 400, "disclosed_input"},
		{"transparent empty input omitted", func(r *vpec.Record) {
			r.Visibility, r.CommitmentHash = vpec.Transparent, commitment.String(nil)
		}, nil, 201, ""},
		{"transparent poseidon2", func(r *vpec.Record) {
			r.Visibility, r.CommitmentAlgorithm = vpec.Transparent, "poseidon2"
			r.CommitmentHash = "poseidon2:" + strings.Repeat("0", 64)
			r.DisclosedInput = disclosure.EncodeBytes(text)
		}, nil, 422, "commitment_algorithm"},
		// Commitment spellings (FORMATS "Commitment hashes"): one form.
		{"poseidon2 commitment", func(r *vpec.Record) {
			r.CommitmentAlgorithm, r.CommitmentHash = "poseidon2", commitment.SumPoseidon2(text).String()
		}, nil, 201, ""},
		{"poseidon2 digest at the modulus", func(r *vpec.Record) {
			r.CommitmentAlgorithm, r.CommitmentHash = "poseidon2", "poseidon2:30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"
		}, nil, 400, "commitment_hash"},
		{"poseidon2 digest above the modulus", func(r *vpec.Record) {
			r.CommitmentAlgorithm, r.CommitmentHash = "poseidon2", "poseidon2:"+strings.Repeat("f", 64)
		}, nil, 400, "commitment_hash"},
		{"upper-case hex", func(r *vpec.Record) {
			r.CommitmentHash = "sha256:" + strings.ToUpper(r.CommitmentHash[7:])
		}, nil, 400, "commitment_hash"},
		{"upper-case prefix", func(r *vpec.Record) {
			r.CommitmentHash = "SHA256:" + r.CommitmentHash[7:]
		}, nil, 400, "commitment_hash"},
		{"leading space", func(r *vpec.Record) { r.CommitmentHash = " " + r.CommitmentHash }, nil, 400, "commitment_hash"},
		{"trailing space", func(r *vpec.Record) { r.CommitmentHash += " " }, nil, 400, "commitment_hash"},
		{"algorithm sha256, poseidon2 hash", func(r *vpec.Record) {
			r.CommitmentHash = commitment.SumPoseidon2(text).String()
		}, nil, 400, "commitment_algorithm"},
		{"algorithm poseidon2, sha256 hash", func(r *vpec.Record) { r.CommitmentAlgorithm = "poseidon2" }, nil, 400, "commitment_algorithm"},
		// output_commitment names its own algorithm (docs/PROOFS.md: an
		// encoder record commits its text with sha256, its embedding
		// output with poseidon2).
		{"sha256 input, poseidon2 output", func(r *vpec.Record) {
			r.OutputCommitment = commitment.SumPoseidon2(text).String()
		}, nil, 201, ""},
		{"transparent with a poseidon2 output", func(r *vpec.Record) {
			r.Visibility, r.CommitmentHash, r.DisclosedInput = vpec.Transparent, commitment.String(text), disclosure.EncodeBytes(text)
			r.OutputCommitment, r.DisclosedOutput = commitment.SumPoseidon2(text).String(), disclosure.EncodeBytes(text)
		}, nil, 422, "disclosed_output"},
		{"selective manifest id of another manifest", func(r *vpec.Record) {
			makeSelective(t, r, `{"document_type":"passport"}`, []string{"document_type"})
			r.Manifest.Version = "2"
		}, nil, 422, "manifest"},
		{"selective manifest id uppercase", func(r *vpec.Record) {
			makeSelective(t, r, `{"document_type":"passport"}`, []string{"document_type"})
			r.ManifestID = strings.ToUpper(mid[:7]) + mid[7:]
		}, nil, 422, "manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := e.open(e.keyB)
			body := recordJSON(t, run.RunID, tc.mutate, tc.extra)
			code, eb, data := e.postRaw(run.RunID, body)
			if code >= 500 {
				t.Fatalf("5xx: %d %s\nsent %.600s", code, data, body)
			}
			if code != 201 {
				if eb.Error.Code == "" || eb.Error.Message == "" {
					t.Fatalf("%d without a JSON error body: %s", code, data)
				}
				if tc.want == 0 {
					return
				}
				if code != tc.want || (tc.field != "" && eb.Error.Field != tc.field) {
					t.Fatalf("%d field %q (%s), want %d field %q\nsent %.600s", code, eb.Error.Field, eb.Error.Message, tc.want, tc.field, body)
				}
				return
			}
			if tc.want != 201 && tc.want != 0 {
				t.Fatalf("accepted, want %d field %q\nsent %.600s", tc.want, tc.field, body)
			}
			code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
			if code != 201 && code != 200 {
				t.Fatalf("close: %d %s", code, doc)
			}
			rep := e.verify(doc)
			if !rep.Valid {
				t.Fatalf("the service accepted the record and sealed a VPEC that is %s: %s\nsent %.600s", rep.Verdict, rep.FirstFailure().Message, body)
			}
		})
	}
}

// A client that reuses a salt in two records of a run: the service checks
// each record on its own (salts within a record), so it takes both, and
// the verifier fails the sealed VPEC SALT REUSED, naming the second
// record. The harm stays in the client's own run; docs/API.md says so.
func TestHostileSaltReusedAcrossRecords(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyB)
	recs := chain(run.RunID, 2)
	makeSelective(t, &recs[0], `{"document_type":"passport","jurisdiction":"FR"}`, []string{"document_type"})
	recs[1].Check, recs[1].ManifestID, recs[1].Visibility, recs[1].Manifest = recs[0].Check, recs[0].ManifestID, vpec.Selective, recs[0].Manifest
	recs[1].CommitmentHash, recs[1].FieldDigests = recs[0].CommitmentHash, recs[0].FieldDigests
	recs[1].Disclosures = recs[0].Disclosures
	issue.Chain(vpec.Genesis(run.RunID), recs)
	for _, r := range recs {
		if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, r, nil); code != 201 {
			t.Fatalf("record %d: %d %s", r.Sequence, code, body)
		}
	}
	code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
	if code != 201 && code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	rep := e.verify(doc)
	c := rep.Check(verify.CheckDisclosure)
	if rep.Valid || c.Status != verify.Fail || c.Code != "SALT REUSED" || !strings.Contains(c.Message, "record 2") {
		t.Fatalf("%s: %+v", rep.Verdict, c)
	}
}

// A VPEC the service issued, then edited so that a carried manifest keeps
// its id but not its bytes (an empty optional member the id's RFC 8785
// form drops, or an unknown member): the verifier refuses the spelling as
// a schema error naming the member, not only through the signature.
func TestHostileCarriedManifestSpelling(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyB)
	recs := chain(run.RunID, 1)
	makeSelective(t, &recs[0], `{"document_type":"passport"}`, []string{"document_type"})
	issue.Chain(vpec.Genesis(run.RunID), recs)
	if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, recs[0], nil); code != 201 {
		t.Fatalf("record: %d %s", code, body)
	}
	code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
	if code != 201 && code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	if rep := e.verify(doc); !rep.Valid {
		t.Fatalf("as issued: %s", rep.Verdict)
	}
	for name, edit := range map[string][2]string{
		"empty onnx_model_hash": {`"stage_name":"kyc_check"`, `"onnx_model_hash":"","stage_name":"kyc_check"`},
		"null onnx_model_hash":  {`"stage_name":"kyc_check"`, `"onnx_model_hash":null,"stage_name":"kyc_check"`},
		"unknown member":        {`"stage_name":"kyc_check"`, `"x":1,"stage_name":"kyc_check"`},
	} {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(string(doc), edit[0]) {
				t.Fatalf("the VPEC has no %s", edit[0])
			}
			bad := strings.Replace(string(doc), edit[0], edit[1], 1)
			rep := e.verify([]byte(bad))
			c := rep.Check(verify.CheckSchema)
			if rep.Valid || c == nil || c.Status != verify.Fail || !strings.Contains(c.Message+strings.Join(c.Details, " "), "manifest") {
				t.Fatalf("%s: schema %+v", rep.Verdict, c)
			}
		})
	}
}

// Selective and transparent records posted concurrently with a close:
// each gets 201 (and is then in the VPEC, its disclosures intact) or 409
// run_sealed (and is not); the VPEC verifies VALID, its disclosures check
// passing, whatever the interleaving.
func TestHostileDisclosuresRaceClose(t *testing.T) {
	e := newEnv(t)
	for trial := range 3 {
		run := e.open(e.keyB)
		const n = 12
		recs := chain(run.RunID, n)
		for i := range recs {
			recs[i].CheckResult = vpec.ResultPass
			if i%2 == 0 {
				makeSelective(t, &recs[i], fmt.Sprintf(`{"document_type":"passport %d","jurisdiction":"FR","name":"A"}`, i), []string{"document_type"})
			} else {
				in := []byte(fmt.Sprint("input ", i))
				recs[i].Visibility, recs[i].CommitmentHash, recs[i].DisclosedInput = vpec.Transparent, commitment.String(in), disclosure.EncodeBytes(in)
			}
		}
		issue.Chain(vpec.Genesis(run.RunID), recs)
		codes := make([]int, n)
		var closeCode int
		var doc []byte
		var wg sync.WaitGroup
		for i := range recs {
			wg.Go(func() { codes[i], _ = e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, recs[i], nil) })
			if i == n/2 {
				wg.Go(func() { closeCode, doc = e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil) })
			}
		}
		wg.Wait()
		if closeCode != 201 && closeCode != 200 {
			t.Fatalf("trial %d: close %d %s", trial, closeCode, doc)
		}
		rep := e.verify(doc)
		if !rep.Valid {
			t.Fatalf("trial %d: %s", trial, rep.Verdict)
		}
		var v vpec.VPEC
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		in := map[int64]vpec.Record{}
		for _, r := range v.Records {
			in[r.Sequence] = r
		}
		accepted := 0
		for i, c := range codes {
			r, sealed := in[recs[i].Sequence]
			switch {
			case c == 201 && (!sealed || r.RecordID != recs[i].RecordID || len(r.Disclosures) != len(recs[i].Disclosures) || r.DisclosedInput != recs[i].DisclosedInput):
				t.Fatalf("trial %d: record %d accepted but not sealed as sent", trial, i+1)
			case c == 409 && sealed:
				t.Fatalf("trial %d: record %d refused but sealed", trial, i+1)
			case c != 201 && c != 409:
				t.Fatalf("trial %d: record %d: %d", trial, i+1, c)
			}
			if c == 201 {
				accepted++
			}
		}
		t.Logf("trial %d: %d of %d records accepted before the seal", trial, accepted, n)
		if c := rep.Check(verify.CheckDisclosure); accepted > 0 && (c.Status != verify.Pass || len(rep.Disclosed) != accepted) {
			t.Fatalf("trial %d: %d accepted, disclosures %+v, %d disclosed", trial, accepted, c, len(rep.Disclosed))
		}
	}
}
