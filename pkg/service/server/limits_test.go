package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// raw sends body with exactly the given Content-Type header values (none
// when cts is empty) and returns the status, headers and decoded error.
func (e *env) raw(method, path, key string, cts []string, body string) (int, http.Header, api.ErrorBody, []byte) {
	e.t.Helper()
	return e.rawHeaders(method, path, key, http.Header{"Content-Type": cts}, body)
}

// rawHeaders is raw with the request's headers (but Authorization) given
// whole.
func (e *env) rawHeaders(method, path, key string, hdr http.Header, body string) (int, http.Header, api.ErrorBody, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, vs := range hdr {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	// Do not follow redirects: the test looks at what the service answers.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	json.Unmarshal(data, &eb)
	return resp.StatusCode, resp.Header, eb, data
}

// Bodies are application/json exactly, parameters allowed; anything else,
// a missing header included, is 415 (issue 10: application/jsonp was
// accepted, and a missing header too).
func TestContentType(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		cts  []string
		want int
	}{
		{"json", []string{"application/json"}, 201},
		{"json with charset", []string{"application/json; charset=utf-8"}, 201},
		{"case-insensitive type", []string{"Application/JSON"}, 201},
		{"jsonp", []string{"application/jsonp"}, 415},
		{"json-seq", []string{"application/json-seq"}, 415},
		{"suffix junk", []string{"application/json+x"}, 415},
		{"missing", nil, 415},
		{"empty", []string{""}, 415},
		{"text", []string{"text/plain"}, 415},
		{"form", []string{"application/x-www-form-urlencoded"}, 415},
		{"malformed parameters", []string{"application/json; charset"}, 415},
		{"list", []string{"application/json, text/plain"}, 415},
		{"two headers", []string{"application/json", "application/json"}, 415},
		// JSON is UTF-8 (RFC 8259): another charset would be misread.
		{"charset upper case", []string{"application/json; charset=UTF-8"}, 201},
		{"charset quoted", []string{`application/json; charset="utf-8"`}, 201},
		{"other parameter", []string{"application/json; profile=x"}, 201},
		{"charset latin1", []string{"application/json; charset=iso-8859-1"}, 415},
		{"charset utf-16", []string{"application/json; charset=utf-16"}, 415},
		{"charset empty", []string{`application/json; charset=""`}, 415},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, h, eb, data := e.raw("POST", "/api/v1/runs", e.keyB, tc.cts, `{"workflow_id":"claims"}`)
			if code != tc.want {
				t.Fatalf("Content-Type %q: %d %s, want %d", tc.cts, code, data, tc.want)
			}
			if code == 415 && (eb.Error.Code != api.CodeUnsupportedMedia || eb.Error.Field != "Content-Type" || h.Get("Content-Type") != "application/json") {
				t.Fatalf("415 body: %s (%s)", data, h.Get("Content-Type"))
			}
		})
	}
}

// The service reads request bodies as sent: a Content-Encoding other than
// identity is refused by name (415), not read as JSON (a gzip body was
// answered "not UTF-8"; a plain body labelled gzip was read as plain).
func TestContentEncoding(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		ces  []string
		want int
	}{
		{"none", nil, 201},
		{"identity", []string{"identity"}, 201},
		{"identity upper case", []string{"Identity"}, 201},
		{"gzip", []string{"gzip"}, 415},
		{"br", []string{"br"}, 415},
		{"deflate after identity", []string{"identity, deflate"}, 415},
		{"two headers", []string{"identity", "gzip"}, 415},
		{"unknown", []string{"x-svc"}, 415},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := http.Header{"Content-Type": {"application/json"}, "Content-Encoding": tc.ces}
			code, h, eb, data := e.rawHeaders("POST", "/api/v1/runs", e.keyB, hdr, `{"workflow_id":"claims"}`)
			if code != tc.want {
				t.Fatalf("Content-Encoding %q: %d %s, want %d", tc.ces, code, data, tc.want)
			}
			if code == 415 && (eb.Error.Code != api.CodeUnsupportedMedia || eb.Error.Field != "Content-Encoding" || !strings.Contains(eb.Error.Message, "uncompressed")) {
				t.Fatalf("415 body: %s (%s)", data, h.Get("Content-Type"))
			}
		})
	}
}

// A query parameter has one reading: given twice, given empty, or in a
// query string that does not parse, it is a 400 naming it (the profile
// list answered ?model_hash=A&model_hash=B for A, and ?model_hash= with
// the whole list).
func TestQueryOneReading(t *testing.T) {
	e := newEnv(t)
	a, b := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	for _, tc := range []struct {
		query string
		want  int
		field string
	}{
		{"/api/v1/registry/profiles", 200, ""},
		{"/api/v1/registry/profiles?model_hash=" + a, 404, ""},
		{"/api/v1/registry/profiles?model_hash=" + a + "&model_hash=" + b, 400, "model_hash"},
		{"/api/v1/registry/profiles?model_hash=" + a + "&model_hash=" + a, 400, "model_hash"},
		{"/api/v1/registry/profiles?model_hash=", 400, "model_hash"},
		{"/api/v1/registry/profiles?model_hash=%zz", 400, "model_hash"},
		{"/api/v1/registry/profiles?model_hash=" + a + ";x=1", 400, "model_hash"},
		{"/api/v1/registry/lookup?hash=" + a, 404, ""},
		{"/api/v1/registry/lookup?hash=" + a + "&hash=" + b, 400, "hash"},
		{"/api/v1/registry/lookup?hash=", 400, "hash"},
		{"/api/v1/registry/lookup?hash=" + a + "&x=%zz", 400, "hash"},
	} {
		code, _, eb, data := e.raw("GET", tc.query, e.keyA, nil, "")
		if code != tc.want || (tc.field != "" && (eb.Error.Code != api.CodeBadRequest || eb.Error.Field != tc.field)) {
			t.Errorf("GET %s: %d %s; want %d naming %q", tc.query, code, data, tc.want, tc.field)
		}
	}
}

// A path not in canonical form gets a JSON 404, never a redirect with an
// HTML body (issue 10: //api/v1/... gave 307 with HTML).
func TestNonCanonicalPath(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"//api/v1/runs", "/api//v1/runs", "/api/v1/./runs", "/api/v1/x/../runs", "//healthz"} {
		for _, m := range []string{"GET", "POST"} {
			code, h, eb, data := e.raw(m, p, e.keyB, []string{"application/json"}, `{}`)
			if code != 404 || eb.Error.Code != api.CodeNoEndpoint || h.Get("Location") != "" || h.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: %d %s %v", m, p, code, data, h)
			}
		}
	}
	// The canonical paths still work.
	if code, _, _, data := e.raw("GET", "/healthz", "", nil, ""); code != 200 {
		t.Fatalf("healthz: %d %s", code, data)
	}
}

// Every string and list of every request has a documented maximum, and
// names a person reads carry no control or bidi character: 400 naming the
// field (issue 10: surface_id, policy, manifests, desired_gpu_classes,
// proof_ceiling ... had no limits).
func TestRequestLimits(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyB)
	long := func(n int) string { return strings.Repeat("a", n) }
	list := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = `"` + f(i) + `"`
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	num := func(i int) string {
		return "p" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
	}
	stage := func(name, ceiling, refs string) string {
		return `{"stage_name":"` + name + `","proof_ceiling":"` + ceiling + `","regulatory_references":` + refs + `}`
	}
	manifest := func(name, version, stages string) string {
		return `{"name":"` + name + `","version":"` + version + `","stages":[` + stages + `]}`
	}
	goodStage := stage("pii", "execution", `["GDPR Art. 5"]`)
	many := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	cal := func(extra string) string {
		return `{"onnx_model_hash":"sha256:` + strings.Repeat("cd", 32) + `"` + extra + `}`
	}
	runs, manifests, reviewers := "/api/v1/runs", "/api/v1/manifests", "/api/v1/reviewers"
	calibrations := "/api/v1/registry/calibration-requests"
	sessions := "/api/v1/runs/" + run.RunID + "/sessions"
	session := func(check, manifestID string) string {
		return `{"kind":"check","check":"` + check + `","manifest_id":"` + manifestID + `"}`
	}
	for _, tc := range []struct {
		name, path, body, field string
	}{
		// Runs.
		{"surface_id long", runs, `{"workflow_id":"w","surface_id":"` + long(129) + `"}`, "surface_id"},
		{"surface_id control", runs, `{"workflow_id":"w","surface_id":"web\u0007"}`, "surface_id"},
		{"policy_pack_id long", runs, `{"workflow_id":"w","policy_pack_id":"` + long(129) + `"}`, "policy_pack_id"},
		{"policy_pack_id bidi", runs, `{"workflow_id":"w","policy_pack_id":"pp\u202Eevil"}`, "policy_pack_id"},
		{"policy entry long", runs, `{"workflow_id":"w","policy":["` + long(129) + `"]}`, "policy[0]"},
		{"policy entry empty", runs, `{"workflow_id":"w","policy":["hipaa",""]}`, "policy[1]"},
		{"policy entry C1", runs, `{"workflow_id":"w","policy":["hipaa","x\u0085"]}`, "policy[1]"},
		{"policy duplicate", runs, `{"workflow_id":"w","policy":["hipaa","gdpr","hipaa"]}`, "policy[2]"},
		{"policy too many", runs, `{"workflow_id":"w","policy":` + list(65, num) + `}`, "policy"},
		{"workflow_id long", runs, `{"workflow_id":"` + long(129) + `"}`, "workflow_id"},
		// Manifests.
		{"manifest name long", manifests, manifest(long(129), "1", goodStage), "name"},
		{"manifest name bidi", manifests, manifest(`a\u2066b`, "1", goodStage), "name"},
		{"manifest version long", manifests, manifest("m", long(65), goodStage), "version"},
		{"manifest version control", manifests, manifest("m", `1\n2`, goodStage), "version"},
		{"stage name long", manifests, manifest("m", "1", stage(long(129), "execution", `[]`)), "stages[0].stage_name"},
		{"stage name empty", manifests, manifest("m", "1", stage("", "execution", `[]`)), "stages[0].stage_name"},
		{"stage name control", manifests, manifest("m", "1", goodStage+","+stage(`x\u001b[2J`, "execution", `[]`)), "stages[1].stage_name"},
		{"stage name duplicate", manifests, manifest("m", "1", goodStage+","+goodStage), "stages[1].stage_name"},
		{"proof_ceiling god", manifests, manifest("m", "1", stage("pii", "god", `[]`)), "stages[0].proof_ceiling"},
		{"proof_ceiling empty", manifests, manifest("m", "1", stage("pii", "", `[]`)), "stages[0].proof_ceiling"},
		{"reference long", manifests, manifest("m", "1", stage("pii", "execution", `["`+long(257)+`"]`)), "stages[0].regulatory_references[0]"},
		{"reference bidi", manifests, manifest("m", "1", stage("pii", "execution", `["GDPR\u200f"]`)), "stages[0].regulatory_references[0]"},
		{"references too many", manifests, manifest("m", "1", stage("pii", "execution", list(33, num))), "stages[0].regulatory_references"},
		{"stages too many", manifests, manifest("m", "1", many(257, func(i int) string { return stage(num(i), "execution", `[]`) })), "stages"},
		// Reviewers.
		{"reviewer name long", reviewers, `{"public_key":"x","name":"` + long(129) + `"}`, "name"},
		{"reviewer name bidi", reviewers, `{"public_key":"x","name":"Alice\u202Eecila"}`, "name"},
		{"reviewer public_key long", reviewers, `{"public_key":"` + long(4097) + `"}`, "public_key"},
		// Calibration requests.
		{"gpu duplicates", calibrations, cal(`,"desired_gpu_classes":` + list(50, func(int) string { return "a100" })), "desired_gpu_classes[1]"},
		{"gpu unknown", calibrations, cal(`,"desired_gpu_classes":["cpu","tpu"]`), "desired_gpu_classes[1]"},
		{"gpu empty", calibrations, cal(`,"desired_gpu_classes":[""]`), "desired_gpu_classes[0]"},
		{"model_description long", calibrations, cal(`,"model_description":"` + long(4097) + `"`), "model_description"},
		{"model_description bidi", calibrations, cal(`,"model_description":"a\u202Eb"`), "model_description"},
		{"hub_model_id long", calibrations, cal(`,"hub_model_id":"` + long(257) + `"`), "hub_model_id"},
		{"hub_model_id control", calibrations, cal(`,"hub_model_id":"org/m\u0000"`), "hub_model_id"},
		// Sessions.
		{"session check bidi", sessions, session(`pii\u202E`, "m"), "check"},
		{"session manifest_id long", sessions, session("pii", long(257)), "manifest_id"},
		// Delegation and resume.
		{"delegation large", "/api/v1/runs/" + run.RunID + "/delegations", `{"delegation":{"to":"` + long(16400) + `"}}`, "delegation"},
		{"lineage_token long", "/api/v1/runs/resume", `{"lineage_token":"` + long(4097) + `"}`, "lineage_token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, eb, data := e.raw("POST", tc.path, e.keyB, []string{"application/json"}, tc.body)
			if code != 400 || eb.Error.Code != api.CodeBadRequest || eb.Error.Field != tc.field {
				t.Fatalf("%d %.300s, want 400 naming %s", code, data, tc.field)
			}
		})
	}
	// At the limits, and with odd but harmless unicode, requests pass.
	for _, tc := range []struct{ name, path, body string }{
		{"run at limits", runs, `{"workflow_id":"` + long(128) + `","surface_id":"` + long(128) + `","policy_pack_id":"` + long(128) + `","policy":` + list(64, num) + `}`},
		{"run with defaults", runs, `{}`},
		{"run unicode", runs, `{"workflow_id":"w","surface_id":"wéb-検査-🎉","policy":["ΗΠΑ","zero\u200bwidth"]}`},
		{"manifest at limits", manifests, manifest(long(128), long(64), stage(long(128), "mathematical", list(32, func(j int) string { return long(256 - j) }))+","+
			many(255, func(i int) string { return stage(num(i), "attestation", `[]`) }))},
		{"calibration all classes", calibrations, cal(`,"desired_gpu_classes":["cpu","a10g","a100","h100"],"model_description":"line one\nline\ttwo","hub_model_id":"org/model-x"`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, _, data := e.raw("POST", tc.path, e.keyB, []string{"application/json"}, tc.body); code != 201 {
				t.Fatalf("%d %.300s", code, data)
			}
		})
	}
}

func TestFieldErrorIs(t *testing.T) {
	m := api.Manifest{Name: "a\u202Eb", Version: "1"}
	err := m.CheckLimits()
	var fe *api.FieldError
	if !errors.As(err, &fe) || fe.Field != "name" || !errors.Is(err, api.ErrLimit) || !errors.Is(err, names.ErrInvalidName) {
		t.Fatalf("%v", err)
	}
}

// record posts one record built by mutate from a fresh chain of one and
// returns the status and the error body.
func (e *env) recordOne(key string, mutate func(*vpec.Record)) (vpec.Record, int, api.ErrorBody, []byte) {
	e.t.Helper()
	run := e.open(key)
	rec := chain(run.RunID, 1)[0]
	rec.CheckResult = vpec.ResultPass
	mutate(&rec)
	recs := []vpec.Record{rec}
	if _, err := issue.Chain(vpec.Genesis(run.RunID), recs); err != nil {
		e.t.Fatal(err)
	}
	body, _ := json.Marshal(recs[0])
	code, _, eb, data := e.raw("POST", "/api/v1/runs/"+run.RunID+"/records", key, []string{"application/json"}, string(body))
	return recs[0], code, eb, data
}

// A proof level is accepted only with its evidence (decision D6):
// mathematical only on the pre/post conditions of a
// bound_committed_inference decomposition, verifiable_inference never.
func TestClaimsNeedEvidence(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		level  vpec.ProofLevel
		stage  string
		part   string
		want   int
		code   string
		fields string
	}{
		{"mathematical bare", vpec.Mathematical, "", "", 422, api.CodeClaimWithoutEvidence, "proof_level"},
		{"mathematical open_source_ml pre", vpec.Mathematical, stage.OpenSourceML, stage.PartPre, 422, api.CodeClaimWithoutEvidence, "proof_level"},
		{"mathematical bci inference", vpec.Mathematical, stage.BoundCommittedInference, stage.PartInference, 422, api.CodeClaimWithoutEvidence, "proof_level"},
		{"mathematical bci no part", vpec.Mathematical, stage.BoundCommittedInference, "", 422, api.CodeClaimWithoutEvidence, "proof_level"},
		{"mathematical bci pre", vpec.Mathematical, stage.BoundCommittedInference, stage.PartPre, 201, "", ""},
		{"mathematical bci post", vpec.Mathematical, stage.BoundCommittedInference, stage.PartPost, 201, "", ""},
		{"mathematical bci pre, check without a part", vpec.Mathematical, stage.BoundCommittedInference, stage.PartPre, 422, api.CodeClaimWithoutEvidence, "proof_level"},
		{"verifiable_inference", vpec.VerifiableInference, "", "", 422, "", "proof_level"},
		{"verifiable_inference bci pre", vpec.VerifiableInference, stage.BoundCommittedInference, stage.PartPre, 422, "", "proof_level"},
		{"execution", vpec.Execution, "", "", 201, "", ""},
		{"attestation", vpec.Attestation, "", "", 201, "", ""},
		{"witnessed without review", vpec.Witnessed, "", "", 422, api.CodeClaimWithoutEvidence, "proof_level"},
		{"operator_bound without block", vpec.OperatorBound, "", "", 422, api.CodeClaimWithoutEvidence, "proof_level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, code, eb, data := e.recordOne(e.keyB, func(r *vpec.Record) {
				r.ProofLevel, r.StageType, r.StagePart = tc.level, tc.stage, tc.part
				if !strings.Contains(tc.name, "without a part") {
					r.Check += ":tokenization" // a decomposition's part: <check>:<part>
				}
			})
			if code != tc.want || (tc.code != "" && eb.Error.Code != tc.code) || (tc.fields != "" && eb.Error.Field != tc.fields) {
				t.Fatalf("%d %s, want %d %s %s", code, data, tc.want, tc.code, tc.fields)
			}
		})
	}
}

// A record dated more than server.MaxRecordAhead after the service clock is
// refused naming recorded_at (decision D7); within the skew it passes.
func TestRecordedAtFuture(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		ahead time.Duration
		want  int
	}{
		{-4 * time.Minute, 201}, // before the run's open, within the skew (TestRecordedAtBeforeOpen)
		{0, 201},
		{server.MaxRecordAhead - 30*time.Second, 201},
		{server.MaxRecordAhead + 30*time.Second, 400},
		{30 * 24 * time.Hour, 400},
	} {
		_, code, eb, data := e.recordOne(e.keyB, func(r *vpec.Record) { r.RecordedAt = vpec.FormatTime(time.Now().Add(tc.ahead)) })
		if code != tc.want || (code == 400 && eb.Error.Field != "recorded_at") {
			t.Errorf("recorded_at now%+v: %d %s, want %d", tc.ahead, code, data, tc.want)
		}
	}
}

// Names a person reads in records carry no control or bidi character
// (decision D9), and details are bounded (decision D1).
func TestRecordNamesAndDetails(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		mutate func(*vpec.Record)
		field  string
	}{
		{"check bidi", func(r *vpec.Record) { r.Check = "pii\u202Eevil" }, "check"},
		{"check escape", func(r *vpec.Record) { r.Check = "pii\x1b[31m" }, "check"},
		{"manifest_id C1", func(r *vpec.Record) { r.ManifestID = "m\u009b" }, "manifest_id"},
		{"details too large", func(r *vpec.Record) { r.Details = map[string]any{"x": strings.Repeat("a", vpec.MaxDetailsBytes)} }, "details"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, code, eb, data := e.recordOne(e.keyB, tc.mutate)
			if code != 400 || eb.Error.Field != tc.field {
				t.Fatalf("%d %s, want 400 naming %s", code, data, tc.field)
			}
		})
	}
}

// details {"x": null} is a valid record (decision D3): 201, and the VPEC
// verifies VALID with the null kept (issue 10: 500 from a recovered panic).
func TestNullDetails(t *testing.T) {
	e := newEnv(t)
	for _, details := range []string{`{"x":null}`, `{"a":{"b":[null,1,{"c":null}]},"n":null}`} {
		run := e.open(e.keyB)
		rec := chain(run.RunID, 1)[0]
		rec.ChainHash = ""
		b, _ := json.Marshal(rec)
		var m map[string]any
		json.Unmarshal(b, &m)
		var d any
		json.Unmarshal([]byte(details), &d)
		m["details"] = d
		body := chainRaw(t, run.RunID, nil, m)
		code, _, _, data := e.raw("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, []string{"application/json"}, string(body))
		if code != 201 {
			t.Fatalf("details %s: %d %s", details, code, data)
		}
		code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
		if code != 200 {
			t.Fatalf("close: %d %s", code, doc)
		}
		if rep := e.verify(doc); !rep.Valid {
			t.Fatalf("details %s: %s %+v", details, rep.Verdict, rep.Checks)
		}
		var v struct {
			Records []struct {
				Details json.RawMessage `json:"details"`
			} `json:"records"`
		}
		json.Unmarshal(doc, &v)
		if len(v.Records) != 1 || compact(v.Records[0].Details) != compact([]byte(details)) {
			t.Fatalf("details in the VPEC: %s, want %s", v.Records[0].Details, details)
		}
	}
}

// An evidence block on a record whose level it does not go with is
// refused naming the block.
func TestRecordBlockWithoutLevel(t *testing.T) {
	e := newEnv(t)
	bi := &vpec.BoundedInference{ProfileID: "p", GPUClass: "cpu", ONNXModelHash: commitment.OfSHA256([32]byte{1}).String(), TraceMode: profile.TraceFull, OperatorCount: 3, MerkleRoot: commitment.OfSHA256([32]byte{2}).String()}
	_, code, eb, data := e.recordOne(e.keyB, func(r *vpec.Record) { r.BoundedInference = bi })
	if code != 400 || eb.Error.Field != "bounded_inference" {
		t.Fatalf("%d %s, want 400 naming bounded_inference", code, data)
	}
}

// A mathematical pre/post-condition record is sealed only beside the
// operator_bound inference record of its decomposition (decision D6): a
// run without it is not closed (422 naming proof_level); with it, the VPEC
// verifies VALID.
func TestCloseNeedsDecompositionAnchor(t *testing.T) {
	e := newEnv(t)
	model := commitment.String([]byte("anchor model"))
	p := &profile.Profile{Schema: profile.Schema, ProfileID: "svc/anchor-class/v1.0.0", ModelClass: "anchor", Architecture: "bert",
		CalibratedGPUClasses: []string{"cpu"}, CalibrationPasses: 1000, CalibrationDate: "2026-11-22", SafetyMargin: 2,
		Operators: map[string]profile.Bounds{profile.Linear: {P99: 1e-7, P99_9: 2e-7, P9999: 3e-7}},
		Models:    []profile.Model{{ONNXModelHash: model, OperatorCounts: map[string]int64{"full": 100}}}}
	if _, err := server.Publish(context.Background(), e.st, e.mat.Signer, "test", p, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	input := commitment.String([]byte("the check's input"))
	decomposition := func(runID string, withInference bool) []vpec.Record {
		recs := chain(runID, 3)
		for i := range recs {
			recs[i].ProofLevel, recs[i].StageType = vpec.Mathematical, stage.BoundCommittedInference
			recs[i].CheckResult, recs[i].CommitmentHash = vpec.ResultPass, input
		}
		recs[0].Check, recs[1].Check, recs[2].Check = "pii:tokenization", "pii", "pii:threshold_check"
		recs[0].StagePart, recs[2].StagePart = stage.PartPre, stage.PartPost
		recs[1].StagePart = stage.PartInference
		if withInference {
			recs[1].ProofLevel, recs[1].ONNXModelHash = vpec.OperatorBound, model
			recs[1].BoundedInference = &vpec.BoundedInference{ProfileID: p.ProfileID, GPUClass: "cpu", ONNXModelHash: model,
				TraceMode: profile.TraceFull, OperatorCount: 100, MerkleRoot: commitment.OfSHA256([32]byte{7}).String()}
		} else {
			recs = append(recs[:1], recs[2])
			recs[1].Sequence = 2
		}
		issue.Chain(vpec.Genesis(runID), recs)
		return recs
	}
	for _, with := range []bool{false, true} {
		run := e.open(e.keyB)
		for _, r := range decomposition(run.RunID, with) {
			if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, r, nil); code != 201 {
				t.Fatalf("record %d (%s): %d %s", r.Sequence, r.ProofLevel, code, body)
			}
		}
		var eb api.ErrorBody
		code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
		json.Unmarshal(doc, &eb)
		if !with {
			if code != 422 || eb.Error.Field != "proof_level" || eb.Error.Code != api.CodeClaimWithoutEvidence {
				t.Fatalf("close without the inference record: %d %s", code, doc)
			}
			// The refused close leaves the run open: the inference record
			// (queued at the client, say) arrives, and the close succeeds.
			var got api.Run
			e.do("GET", "/api/v1/runs/"+run.RunID, e.keyB, nil, &got)
			inf := chain(run.RunID, 1)[0]
			inf.Sequence, inf.CheckResult, inf.Check, inf.CommitmentHash = 3, vpec.ResultPass, "pii", input
			inf.ProofLevel, inf.StageType, inf.StagePart, inf.ONNXModelHash = vpec.OperatorBound, stage.BoundCommittedInference, stage.PartInference, model
			inf.BoundedInference = &vpec.BoundedInference{ProfileID: p.ProfileID, GPUClass: "cpu", ONNXModelHash: model,
				TraceMode: profile.TraceFull, OperatorCount: 100, MerkleRoot: commitment.OfSHA256([32]byte{8}).String()}
			prev, _ := commitment.ParseSHA256(got.LastChainHash)
			one := []vpec.Record{inf}
			issue.Chain(prev, one)
			if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, one[0], nil); code != 201 || got.Status != api.RunOpen {
				t.Fatalf("the refused close sealed the run (%s): the inference record got %d %s", got.Status, code, body)
			}
			code, doc = e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
			with = true
		}
		switch {
		case with && code != 200:
			t.Fatalf("close with the inference record: %d %s", code, doc)
		case with:
			sp, err := e.st.ProfileByID(context.Background(), p.ProfileID)
			if err != nil {
				t.Fatal(err)
			}
			set := profile.NewSet()
			if _, err := set.Add(sp.Body); err != nil {
				t.Fatal(err)
			}
			if rep, err := verify.Verify(doc, verify.Options{Trust: e.mat.Trust, Profiles: set}); err != nil || !rep.Valid {
				t.Fatalf("anchored decomposition: %s %+v", rep.Verdict, rep.Checks)
			}
		}
	}
}

// The service seals a mathematical condition only beside the inference of
// its own decomposition, the verifier's rule (verify.Claims): an
// operator_bound record of another check or input is not its evidence
// (422 at close), and a mathematical record whose check names no part is
// refused at once. Found: any operator_bound record let the run close, and
// the VPEC then failed its evidence check.
func TestCloseNeedsOwnInference(t *testing.T) {
	e := newEnv(t)
	model := commitment.String([]byte("anchor model"))
	p := &profile.Profile{Schema: profile.Schema, ProfileID: "svc/anchor-class/v1.0.0", ModelClass: "anchor", Architecture: "bert",
		CalibratedGPUClasses: []string{"cpu"}, CalibrationPasses: 1000, CalibrationDate: "2026-11-22", SafetyMargin: 2,
		Operators: map[string]profile.Bounds{profile.Linear: {P99: 1e-7, P99_9: 2e-7, P9999: 3e-7}},
		Models:    []profile.Model{{ONNXModelHash: model, OperatorCounts: map[string]int64{"full": 100}}}}
	if _, err := server.Publish(context.Background(), e.st, e.mat.Signer, "test", p, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	input := commitment.String([]byte("the check's input"))
	for _, tc := range []struct {
		name         string
		condition    string // the condition's check
		inference    string // the inference record's check
		otherInput   bool
		recordStatus int
		closeStatus  int
	}{
		{"its own inference", "pii:threshold_check", "pii", false, 201, 200},
		{"another check's inference", "toxicity:threshold_check", "pii", false, 201, 422},
		{"another input's inference", "pii:threshold_check", "pii", true, 201, 422},
		{"a check without a part", "pii", "pii", false, 422, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := e.open(e.keyB)
			recs := chain(run.RunID, 2)
			for i := range recs {
				recs[i].CheckResult, recs[i].StageType, recs[i].CommitmentHash = vpec.ResultPass, stage.BoundCommittedInference, input
			}
			recs[0].Check, recs[0].StagePart = tc.inference, stage.PartInference
			recs[0].ProofLevel, recs[0].ONNXModelHash = vpec.OperatorBound, model
			recs[0].BoundedInference = &vpec.BoundedInference{ProfileID: p.ProfileID, GPUClass: "cpu", ONNXModelHash: model,
				TraceMode: profile.TraceFull, OperatorCount: 100, MerkleRoot: commitment.OfSHA256([32]byte{7}).String()}
			recs[1].Check, recs[1].StagePart, recs[1].ProofLevel = tc.condition, stage.PartPost, vpec.Mathematical
			if tc.otherInput {
				recs[1].CommitmentHash = commitment.String([]byte("another input"))
			}
			issue.Chain(vpec.Genesis(run.RunID), recs)
			for i, r := range recs {
				want := 201
				if i == 1 {
					want = tc.recordStatus
				}
				if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, r, nil); code != want {
					t.Fatalf("record %d (%s): %d, want %d: %s", r.Sequence, r.Check, code, want, body)
				}
			}
			if tc.closeStatus == 0 {
				return
			}
			var eb api.ErrorBody
			code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
			json.Unmarshal(doc, &eb)
			if code != tc.closeStatus || (code == 422 && (eb.Error.Field != "proof_level" || eb.Error.Code != api.CodeClaimWithoutEvidence)) {
				t.Fatalf("close: %d, want %d: %s", code, tc.closeStatus, doc)
			}
		})
	}
}
