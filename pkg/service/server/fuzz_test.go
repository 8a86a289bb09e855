package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// FuzzRequestBodies sends arbitrary bodies and Content-Type values to every
// body-taking route of an in-process server: the answer is never a 5xx,
// and every error is the JSON error body (a 400 names a field whenever the
// body parsed as JSON and broke a field rule). Seeds hold the shapes of
// issue 10: nulls at every depth, empty optional members, odd unicode,
// duplicates, over-long lists, unknown proof ceilings.
func FuzzRequestBodies(f *testing.F) {
	dir := f.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		f.Fatal(err)
	}
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust, MaxBodyBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := server.CreateOrg(ctx, st, "fuzz", server.TierStandard, time.Now()); err != nil {
		f.Fatal(err)
	}
	key, _, err := server.CreateAPIKey(ctx, st, "fuzz", vpec.Production, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	send := func(method, path, ct string, body []byte) (int, []byte) {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		return w.Code, w.Body.Bytes()
	}
	code, body := send("POST", "/api/v1/runs", "application/json", []byte(`{"workflow_id":"fuzz"}`))
	var run api.Run
	if json.Unmarshal(body, &run); code != 201 {
		f.Fatalf("open: %d %s", code, body)
	}
	routes := []string{
		"/api/v1/runs", "/api/v1/runs/" + run.RunID + "/records", "/api/v1/manifests", "/api/v1/reviewers",
		"/api/v1/registry/calibration-requests", "/api/v1/runs/" + run.RunID + "/sessions",
		"/api/v1/runs/" + run.RunID + "/delegations", "/api/v1/runs/resume",
	}
	rec := chain(run.RunID, 1)[0]
	recJSON, _ := json.Marshal(rec)
	// A selective and a transparent record (disclosure members reach
	// their checks before the chain link is looked at).
	sel, trans := rec, rec
	m := kycManifest.AsDocument()
	split, err := disclosure.SplitInput([]byte(`{"document_type":"passport","jurisdiction":"FR","n":[1,{"x":null}]}`), []string{"document_type", "jurisdiction"})
	if err != nil {
		f.Fatal(err)
	}
	sel.Check, sel.Visibility, sel.Manifest = "kyc_check", vpec.Selective, &m
	sel.ManifestID, _ = m.ID()
	sel.CommitmentHash, sel.FieldDigests, sel.Disclosures = split.Commitment, split.Digests, split.Disclosed
	selJSON, _ := json.Marshal(sel)
	trans.Visibility, trans.CommitmentHash, trans.DisclosedInput = vpec.Transparent, commitment.String([]byte("hi")), disclosure.EncodeBytes([]byte("hi"))
	trans.OutputCommitment, trans.DisclosedOutput = commitment.String(nil), ""
	transJSON, _ := json.Marshal(trans)
	for _, seed := range []struct {
		route int
		ct    string
		body  string
	}{
		{0, "application/json", `{"workflow_id":"w","surface_id":null,"policy":[null,"a","a"],"policy_pack_id":"\u202e"}`},
		{0, "application/jsonp", `{"workflow_id":"w"}`},
		{0, "", `{"workflow_id":"w"}`},
		{0, "application/json; charset=\"utf-8\"", `{"workflow_id":"w","policy":[]}`},
		{1, "application/json", string(recJSON)},
		{1, "application/json", `{"details":{"x":null,"y":[null,{"z":null}]},"output_commitment":"","stage_type":""}`},
		{1, "application/json", `{"record_id":null,"sequence":null,"details":null}`},
		{1, "application/json", string(selJSON)},
		{1, "application/json", string(transJSON)},
		{1, "application/json", `{"visibility":"selective","field_digests":[],"disclosures":[{"salt":"","field":"","value":null}],"manifest":{}}`},
		{2, "application/json", `{"name":"m","version":"1","stages":[{"stage_name":"s","proof_ceiling":"god","regulatory_references":null}]}`},
		{2, "application/json", `{"name":"m\u0000","version":"","stages":[{"stage_name":"s","proof_ceiling":"execution","regulatory_references":["x","x"]}]}`},
		{3, "application/json", `{"public_key":"","name":"\u0085"}`},
		{4, "application/json", `{"onnx_model_hash":"sha256:` + string(bytes.Repeat([]byte("ab"), 32)) + `","desired_gpu_classes":["a100","a100","god"]}`},
		{5, "application/json", `{"kind":"check","check":"\u2066x","manifest_id":"m"}`},
		{6, "application/json", `{"delegation":{"a":null,"b":{"c":[null]}}}`},
		{7, "application/json", `{"lineage_token":null}`},
	} {
		f.Add(seed.route, seed.ct, []byte(seed.body))
	}
	// Every integer of a record, a session and a delegation at the
	// documented maxima and int64 edges (sequence, min_duration_seconds,
	// operator_count).
	bi := rec
	bi.ProofLevel, bi.StageType, bi.StagePart = vpec.OperatorBound, stage.BoundCommittedInference, stage.PartInference
	bi.BoundedInference = &vpec.BoundedInference{ProfileID: "acme/pii-class/v1.0.0", GPUClass: "cpu", ONNXModelHash: commitment.String([]byte("m")),
		TraceMode: profile.TraceProduction, OperatorCount: 9, MerkleRoot: commitment.String([]byte("t"))}
	biJSON, _ := json.Marshal(bi)
	for _, seed := range []struct {
		route int
		body  string
	}{
		{1, string(recJSON)}, {1, string(biJSON)},
		{5, `{"kind":"review","check":"c","manifest_id":"m","reviewer_key_id":"0123456789abcdef","min_duration_seconds":30}`},
		{6, `{"delegation":{"depth":1}}`},
	} {
		for _, d := range fuzzedge.Documents([]byte(seed.body), 200) {
			f.Add(seed.route, "application/json", d)
		}
	}
	f.Fuzz(func(t *testing.T, route int, ct string, body []byte) {
		if route < 0 {
			route = -route
		}
		path := routes[route%len(routes)]
		code, out := send("POST", path, ct, body)
		if code >= 500 && code != http.StatusBadGateway {
			t.Fatalf("POST %s %q: %d %s", path, body, code, out)
		}
		if code >= 400 {
			var eb api.ErrorBody
			if err := json.Unmarshal(out, &eb); err != nil || eb.Error.Code == "" || eb.Error.Message == "" || !bytes.Contains(out, []byte(`"field":`)) {
				t.Fatalf("POST %s: %d with a body that is not the JSON error: %q", path, code, out)
			}
		}
	})
}
