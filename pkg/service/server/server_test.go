package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

type env struct {
	t    testing.TB
	st   store.Store
	url  string
	mat  *server.Material
	keyA string
	keyB string
}

// newEnv starts a real server on loopback with SQLite in a temp directory
// and two organisations with a key each.
func newEnv(t *testing.T) *env { t.Helper(); return newEnvBody(t, 64<<10) }

// newEnvBody is newEnv with a body limit of maxBody bytes.
func newEnvBody(t testing.TB, maxBody int64) *env {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust, MaxBodyBytes: maxBody})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e := &env{t: t, st: st, url: hs.URL, mat: mat}
	for _, org := range []string{"alpha", "beta"} {
		if _, err := server.CreateOrg(ctx, st, org, server.TierStandard, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if e.keyA, _, err = server.CreateAPIKey(ctx, st, "alpha", vpec.Sandbox, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e.keyB, _, err = server.CreateAPIKey(ctx, st, "beta", vpec.Production, time.Now()); err != nil {
		t.Fatal(err)
	}
	return e
}

// do sends a request and decodes a JSON answer into out (if non-nil).
func (e *env) do(method, path, key string, body any, out any) (int, []byte) {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, e.url+path, r)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			e.t.Fatalf("%s %s: %d %s: not JSON: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode, data
}

func (e *env) open(key string) api.Run {
	var run api.Run
	if code, body := e.do("POST", "/api/v1/runs", key, api.OpenRunRequest{WorkflowID: "claims", Policy: []string{"hipaa"}}, &run); code != 201 {
		e.t.Fatalf("open: %d %s", code, body)
	}
	return run
}

// chain builds n records of a run, linked from genesis.
func chain(runID string, n int) []vpec.Record {
	recs := make([]vpec.Record, n)
	for i := range recs {
		recs[i] = vpec.Record{
			RecordID: names.NewID("rec_"), Sequence: int64(i + 1), Check: []string{"pii", "toxicity", "injection"}[i%3],
			ManifestID: "sha256:" + strings.Repeat("ab", 32), CheckResult: vpec.ResultPass, ProofLevel: vpec.Execution,
			CommitmentAlgorithm: "sha256", CommitmentHash: commitment.String([]byte(fmt.Sprint("input ", i))),
			Visibility: vpec.Opaque, RecordedAt: vpec.FormatTime(time.Now()),
		}
	}
	recs[n-1].CheckResult = vpec.ResultFail
	issue.Chain(vpec.Genesis(runID), recs)
	return recs
}

func (e *env) verify(doc []byte) *verify.Report {
	r, err := verify.Verify(doc, verify.Options{Trust: e.mat.Trust})
	if r == nil { // the options are refused: a bug in the test
		panic(err)
	}
	return r // err agrees with r.Valid (pkg/core/verify TestVerifyFailsClosed)
}

// The run state table of docs/API.md, row by row.
func TestRunLifecycle(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	if run.Status != api.RunOpen || run.Environment != vpec.Sandbox || run.LastChainHash != commitment.OfSHA256(vpec.Genesis(run.RunID)).String() {
		t.Fatalf("opened run: %+v", run)
	}
	recs := chain(run.RunID, 3)
	for _, r := range recs {
		var res api.RecordResult
		if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, r, &res); code != 201 || res.Queued || res.ChainHash != r.ChainHash {
			t.Fatalf("record %d: %d %s", r.Sequence, code, body)
		}
	}
	// An identical retry is acknowledged and stored once.
	var dup api.RecordResult
	if code, _ := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, recs[1], &dup); code != 200 || !dup.Duplicate {
		t.Fatalf("retry: %d %+v", code, dup)
	}
	var got api.Run
	e.do("GET", "/api/v1/runs/"+run.RunID, e.keyA, nil, &got)
	if got.RecordCount != 3 || got.LastChainHash != recs[2].ChainHash {
		t.Fatalf("run after records: %+v", got)
	}
	code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	rep := e.verify(doc)
	if !rep.Valid || !rep.IsClean || rep.Records != 3 {
		t.Fatalf("issued VPEC does not verify: %s %+v", rep.Verdict, rep.Checks)
	}
	var v vpec.VPEC
	json.Unmarshal(doc, &v)
	if v.ChecksPassed != 2 || v.ChecksFailed != 1 || v.Environment != vpec.Sandbox || v.ProofLevelFloor != vpec.Execution {
		t.Fatalf("VPEC summary: %+v", v)
	}
	// Sealed: record and close are refused with run_sealed.
	var apiErr api.ErrorBody
	extra := chain(run.RunID, 4)[3]
	if code, _ := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, extra, &apiErr); code != 409 || apiErr.Error.Code != api.CodeRunSealed {
		t.Fatalf("record after close: %d %+v", code, apiErr)
	}
	if code, _ := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyA, nil, &apiErr); code != 409 || apiErr.Error.Code != api.CodeRunSealed {
		t.Fatalf("second close: %d %+v", code, apiErr)
	}
	// A retry of a record the sealed run holds is still acknowledged (its
	// first response may have been lost), and changes nothing.
	var retry api.RecordResult
	if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, recs[2], &retry); code != 200 || !retry.Duplicate {
		t.Fatalf("retry after close: %d %s", code, body)
	}
	// The stored VPEC is the one issued.
	code, again := e.do("GET", "/api/v1/vpecs/"+v.VPECID, e.keyA, nil, nil)
	if code != 200 || !bytes.Equal(again, doc) {
		t.Fatalf("GET vpec: %d", code)
	}
}

func TestRecordErrors(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	recs := chain(run.RunID, 3)
	path := "/api/v1/runs/" + run.RunID + "/records"
	e.do("POST", path, e.keyA, recs[0], nil)

	other := recs[1]
	other.RecordID = names.NewID("rec_")
	bad := recs[1]
	bad.ChainHash = recs[0].ChainHash
	raw, _ := json.Marshal(recs[1])
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"chain mismatch", bad, 422, api.CodeChainMismatch, "chain_hash"},
		{"unknown field", strings.Replace(string(raw), `"check":`, `"approved":true,"check":`, 1), 400, api.CodeBadRequest, "approved"},
		// The field is the decoder's path (document.FieldError), not text
		// parsed back out of the message: a member name with a space is named.
		{"unknown field with a space", strings.Replace(string(raw), `"check":`, `"approved by":"me","check":`, 1), 400, api.CodeBadRequest, "approved by"},
		{"wrong type", strings.Replace(string(raw), `"sequence":2`, `"sequence":"2"`, 1), 400, api.CodeBadRequest, "sequence"},
		{"bad enum", strings.Replace(string(raw), `"check_result":"pass"`, `"check_result":"passed"`, 1), 400, api.CodeBadRequest, "check_result"},
		{"malformed json", `{"record_id":`, 400, api.CodeBadRequest, ""},
		{"duplicate key", strings.Replace(string(raw), `"check":`, `"check":"x","check":`, 1), 400, api.CodeBadRequest, ""},
		{"too large", `{"details":{"x":"` + strings.Repeat("a", 70<<10) + `"}}`, 413, api.CodePayloadTooLarge, ""},
		{"zk claim", func() vpec.Record { r := recs[1]; r.ProofLevel = vpec.VerifiableInference; return r }(), 422, api.CodeClaimWithoutEvidence, "proof_level"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var eb api.ErrorBody
			code, body := e.do("POST", path, e.keyA, c.body, &eb)
			if code != c.status || eb.Error.Code != c.code || (c.field != "" && eb.Error.Field != c.field) || eb.Error.Message == "" {
				t.Fatalf("%d %s, want %d %s field %q", code, body, c.status, c.code, c.field)
			}
		})
	}
	// A different record claiming a stored sequence conflicts.
	r0 := []vpec.Record{recs[0]}
	r0[0].RecordID = names.NewID("rec_")
	issue.Chain(vpec.Genesis(run.RunID), r0) // a well-chained, different record 1
	var eb api.ErrorBody
	if code, _ := e.do("POST", path, e.keyA, r0[0], &eb); code != 409 || eb.Error.Code != api.CodeSequenceConflict {
		t.Fatalf("sequence conflict: %d %+v", code, eb)
	}
	// Wrong content type.
	req, _ := http.NewRequest("POST", e.url+path, strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 415 {
		t.Fatalf("text/plain: %d", resp.StatusCode)
	}
}

// A record that never arrives becomes a sequence_missing gap; the VPEC is
// authentic but not clean.
func TestGapAtClose(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	recs := chain(run.RunID, 4)
	for _, r := range []vpec.Record{recs[0], recs[2], recs[3]} {
		if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, r, nil); code != 201 {
			t.Fatalf("record %d: %d %s", r.Sequence, code, body)
		}
	}
	code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	rep := e.verify(doc)
	if !rep.Valid || rep.IsClean || rep.Check(verify.CheckChain).Status != verify.Warn {
		t.Fatalf("verdict %s clean=%v chain=%+v", rep.Verdict, rep.IsClean, rep.Check(verify.CheckChain))
	}
	var v vpec.VPEC
	json.Unmarshal(doc, &v)
	if len(v.Gaps) != 1 || v.Gaps[0].GapType != gap.SequenceMissing || *v.Gaps[0].Sequence != 2 || v.Gaps[0].Severity != gap.High {
		t.Fatalf("gaps: %+v", v.Gaps)
	}
}

func TestOrgIsolationAndAuth(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	recs := chain(run.RunID, 1)
	e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, recs[0], nil)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/runs/" + run.RunID},
		{"POST", "/api/v1/runs/" + run.RunID + "/close"},
	} {
		var eb api.ErrorBody
		code, body := e.do(c.method, c.path, e.keyB, nil, &eb)
		if code != 404 || eb.Error.Code != api.CodeNotFound || strings.Contains(string(body), run.WorkflowID) {
			t.Errorf("%s %s with another org's key: %d %s", c.method, c.path, code, body)
		}
	}
	var eb api.ErrorBody
	if code, _ := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, chain(run.RunID, 2)[1], &eb); code != 404 {
		t.Errorf("record into another org's run: %d", code)
	}
	for _, key := range []string{"", "sk_live_nope", "pk_live_unknownkey000000000000000000000"} {
		if code, _ := e.do("GET", "/api/v1/runs/"+run.RunID, key, nil, &eb); code != 401 || eb.Error.Code != api.CodeUnauthorized {
			t.Errorf("key %q: %d", key, code)
		}
	}
	// The production key opens production runs.
	if r := e.open(e.keyB); r.Environment != vpec.Production || r.OrgID != "org_beta" {
		t.Errorf("production run: %+v", r)
	}
}

func TestManifestsRegistryHealth(t *testing.T) {
	e := newEnv(t)
	m := api.Manifest{Name: "pii-check", Version: "1.0.0", Stages: []api.ManifestStage{{StageName: "detect", ProofCeiling: "execution", RegulatoryReferences: []string{"GDPR Art. 32"}}}}
	var first, second api.ManifestRegistration
	c1, _ := e.do("POST", "/api/v1/manifests", e.keyA, m, &first)
	c2, _ := e.do("POST", "/api/v1/manifests", e.keyA, m, &second)
	if c1 != 201 || c2 != 200 || first.ManifestID != second.ManifestID || !first.Created || second.Created || !strings.HasPrefix(first.ManifestID, "sha256:") {
		t.Fatalf("manifest idempotency: %d %+v / %d %+v", c1, first, c2, second)
	}
	if code, _ := e.do("GET", "/api/v1/manifests/"+first.ManifestID, e.keyB, nil, nil); code != 404 {
		t.Errorf("another org sees the manifest: %d", code)
	}
	code, body := e.do("GET", "/api/v1/registry/lookup?hash=sha256:"+strings.Repeat("0", 64), e.keyA, nil, nil)
	if code != 404 || strings.TrimSpace(string(body)) != `{"found":false}` {
		t.Errorf("lookup miss: %d %s", code, body)
	}
	var list api.ProfileList
	if code, _ := e.do("GET", "/api/v1/registry/profiles", e.keyA, nil, &list); code != 200 || list.Profiles == nil {
		t.Errorf("profiles: %d %+v", code, list)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		var h api.Health
		if code, _ := e.do("GET", p, "", nil, &h); code != 200 || h.Status == "" {
			t.Errorf("%s: %d %+v", p, code, h)
		}
	}
	code, pem := e.do("GET", api.TrustBundlePath, "", nil, nil)
	if code != 200 || !bytes.Equal(pem, e.mat.Trust.Marshal()) {
		t.Errorf("trust bundle: %d", code)
	}
	var nf api.ErrorBody
	if code, _ := e.do("GET", "/api/v1/nothing", e.keyA, nil, &nf); code != 404 || nf.Error.Code != api.CodeNoEndpoint {
		t.Errorf("unknown path: %d %+v", code, nf)
	}
}

// The OpenAPI document and the router list the same operations.
func TestOpenAPIMatchesRouter(t *testing.T) {
	data, err := os.ReadFile("../../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if err := noDuplicateMembers(json.NewDecoder(bytes.NewReader(data)), "$"); err != nil {
		t.Fatalf("docs/openapi.json: %v (a reader keeps one of the two)", err)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	e := newEnvServer(t)
	routes := e.Routes()
	slices.Sort(documented)
	slices.Sort(routes)
	if !slices.Equal(documented, routes) {
		t.Fatalf("docs/openapi.json and the router disagree:\n documented %v\n routed     %v", documented, routes)
	}
}

// noDuplicateMembers reads one JSON value from dec and reports an object
// that names a member twice, with its path.
func noDuplicateMembers(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			name := k.(string)
			if seen[name] {
				return fmt.Errorf("%s has member %q twice", path, name)
			}
			seen[name] = true
			if err := noDuplicateMembers(dec, path+"."+name); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := noDuplicateMembers(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

func newEnvServer(t *testing.T) *server.Server {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// Every error body carries "field", "" when no field is at fault (API.md).
func TestErrorBodyAlwaysHasField(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/api/v1/no-such-endpoint", "/api/v1/runs/run_00000000-0000-4000-8000-000000000000"} {
		code, body := e.do("GET", path, e.keyA, nil, nil)
		var m map[string]map[string]any
		if err := json.Unmarshal(body, &m); err != nil || code != 404 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		if f, ok := m["error"]["field"]; !ok || f != "" {
			t.Errorf("%s: %s lacks \"field\": \"\"", path, body)
		}
	}
}
