package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// codeEnvironmentMismatch is the error code of a key acting on a run of the
// other environment (docs/API.md).
const codeEnvironmentMismatch = "environment_mismatch"

// A key of one environment acts on no run of the other, even in its own
// organisation: every run-scoped endpoint answers 403 environment_mismatch
// naming both environments, and nothing is written. The run's own
// environment then still works end to end.
func TestEnvironmentCrossing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	live, _, err := server.CreateAPIKey(ctx, e.st, "alpha", vpec.Production, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sandbox := e.keyA
	for _, c := range []struct {
		name           string
		owner, crosser string
		runEnv, keyEnv vpec.Environment
	}{
		{"sandbox key on a production run", live, sandbox, vpec.Production, vpec.Sandbox},
		{"production key on a sandbox run", sandbox, live, vpec.Sandbox, vpec.Production},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := e.open(c.owner)
			if run.Environment != c.runEnv {
				t.Fatalf("run environment %s, want %s", run.Environment, c.runEnv)
			}
			base := "/api/v1/runs/" + run.RunID
			recs := chain(run.RunID, 2)
			if code, body := e.do("POST", base+"/records", c.owner, recs[0], nil); code != 201 {
				t.Fatalf("owner record: %d %s", code, body)
			}
			var sess api.SessionView
			if code, body := e.do("POST", base+"/sessions", c.owner, api.SessionRequest{Kind: "check", Check: "pii", ManifestID: "m1"}, &sess); code != 201 {
				t.Fatalf("owner session: %d %s", code, body)
			}
			var del api.DelegationResult
			if code, body := e.do("POST", base+"/delegations", c.owner, api.DelegationRequest{Delegation: map[string]any{"to": "agent-2"}}, &del); code != 201 {
				t.Fatalf("owner delegation: %d %s", code, body)
			}
			crossings := []struct {
				method, path string
				body         any
			}{
				{"GET", base, nil},
				{"POST", base + "/records", recs[1]},
				{"POST", base + "/sessions", api.SessionRequest{Kind: "check", Check: "pii", ManifestID: "m1"}},
				{"POST", base + "/sessions/" + sess.SessionID + "/close", api.SessionCloseRequest{CommitmentHash: recs[1].CommitmentHash}},
				{"POST", base + "/delegations", api.DelegationRequest{Delegation: map[string]any{"to": "agent-3"}}},
				{"POST", "/api/v1/runs/resume", api.ResumeRequest{LineageToken: del.LineageToken}},
				{"POST", base + "/close", nil},
			}
			for _, x := range crossings {
				var eb api.ErrorBody
				code, body := e.do(x.method, x.path, c.crosser, x.body, &eb)
				if code != 403 || eb.Error.Code != codeEnvironmentMismatch ||
					!strings.Contains(eb.Error.Message, string(c.runEnv)) || !strings.Contains(eb.Error.Message, string(c.keyEnv)) {
					if len(body) > 300 {
						body = body[:300]
					}
					t.Errorf("%s %s with a %s key on a %s run: %d %s; want 403 %s naming both environments",
						x.method, strings.TrimPrefix(x.path, base), c.keyEnv, c.runEnv, code, body, codeEnvironmentMismatch)
				}
			}
			// Opening the run's id again (a client's retry of a proposed
			// run_id) does not hand the run to a key of the other environment.
			proposed := names.NewID("run_")
			req := api.OpenRunRequest{RunID: proposed, WorkflowID: "claims"}
			if code, body := e.do("POST", "/api/v1/runs", c.owner, req, nil); code != 201 {
				t.Fatalf("owner open of a proposed id: %d %s", code, body)
			}
			if code, body := e.do("POST", "/api/v1/runs", c.crosser, req, nil); code != 403 && code != 409 || strings.Contains(string(body), `"status"`) {
				t.Errorf("retried open of a %s run's id with a %s key: %d %s; want 403 or 409 without the run", c.runEnv, c.keyEnv, code, body)
			}
			// Nothing was written: the run is open with one record, and its
			// session is still open.
			var got api.Run
			if code, body := e.do("GET", base, c.owner, nil, &got); code != 200 || got.Status != api.RunOpen || got.RecordCount != 1 {
				t.Fatalf("after the crossings: %d %s", code, body)
			}
			if code, body := e.do("POST", base+"/records", c.owner, recs[1], nil); code != 201 {
				t.Fatalf("owner second record: %d %s", code, body)
			}
			code, doc := e.do("POST", base+"/close", c.owner, nil, nil)
			if code != 200 {
				t.Fatalf("owner close: %d %s", code, doc)
			}
			if rep := e.verify(doc); !rep.Valid {
				t.Fatalf("owner VPEC: %s", rep.Verdict)
			}
		})
	}
}
