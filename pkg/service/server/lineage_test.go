package server_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/service/server"
)

func TestDelegationLineage(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	recs := chain(run.RunID, 3)
	for _, r := range recs[:2] {
		e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, r, nil)
	}
	var del api.DelegationResult
	if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/delegations", e.keyA, map[string]any{"delegation": map[string]any{"to": "agent-7", "scope": []string{"summarise"}}}, &del); code != 201 {
		t.Fatalf("delegate: %d %s", code, body)
	}
	if del.LastSequence != 2 || del.LastChainHash != recs[1].ChainHash {
		t.Fatalf("token binds %+v", del)
	}
	// The delegate resumes the same run and continues the same chain.
	var resumed api.Run
	if code, body := e.do("POST", "/api/v1/runs/resume", e.keyA, api.ResumeRequest{LineageToken: del.LineageToken}, &resumed); code != 200 || resumed.RunID != run.RunID || resumed.LastChainHash != recs[1].ChainHash {
		t.Fatalf("resume: %d %s", code, body)
	}
	// Forged: payload changed; another org; then mismatched once the run moves on.
	p, sig, _ := strings.Cut(del.LineageToken, ".")
	forged := p[:len(p)-2] + "AA." + sig
	cases := []struct {
		name, token, key string
	}{
		{"forged", forged, e.keyA},
		{"garbage", "not-a-token", e.keyA},
		{"other org", del.LineageToken, e.keyB},
	}
	for _, c := range cases {
		var eb api.ErrorBody
		if code, _ := e.do("POST", "/api/v1/runs/resume", c.key, api.ResumeRequest{LineageToken: c.token}, &eb); code != 422 || eb.Error.Code != api.CodeTokenInvalid {
			t.Errorf("%s: %d %+v", c.name, code, eb)
		}
	}
	e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, recs[2], nil)
	var eb api.ErrorBody
	if code, _ := e.do("POST", "/api/v1/runs/resume", e.keyA, api.ResumeRequest{LineageToken: del.LineageToken}, &eb); code != 422 || !strings.Contains(eb.Error.Message, "does not match") {
		t.Errorf("stale token: %d %+v", code, eb)
	}
}

func TestLineageExpiry(t *testing.T) {
	_, priv, _ := signing.GenerateKey()
	s, _ := signing.NewSigner(priv)
	trust := signing.NewBundle()
	trust.AddKey(s.PublicKey())
	now := time.Now()
	tok, err := server.SignLineage(api.Lineage{RunID: "run_x", OrgID: "org_a", LastChainHash: "sha256:" + strings.Repeat("0", 64), DelegationHash: "sha256:" + strings.Repeat("1", 64), IssuedAt: now.Format(time.RFC3339), ExpiresAt: now.Add(time.Hour).UTC().Format(time.RFC3339)}, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.ParseLineage(tok, trust, now); err != nil {
		t.Fatalf("fresh token: %v", err)
	}
	if _, err := server.ParseLineage(tok, trust, now.Add(2*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired token: %v", err)
	}
	if _, err := server.ParseLineage(tok, signing.NewBundle(), now); err == nil {
		t.Fatal("token verified without its key")
	}
}

func TestSandboxRateLimit(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	limited := 0
	for i := 0; i < 60; i++ {
		code, _ := e.do("GET", "/api/v1/registry/profiles", e.keyA, nil, nil)
		if code == 429 {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("60 rapid sandbox requests were never limited (burst 40)")
	}
	var eb api.ErrorBody
	if code, _ := e.do("GET", "/api/v1/registry/profiles", e.keyA, nil, &eb); code != 429 || eb.Error.Code != api.CodeRateLimited {
		t.Fatalf("over the limit: %d %+v", code, eb)
	}
	// Closing is exempt: a rate-limited close would leave only an offline VPEC.
	if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyA, nil, nil); code != 200 {
		t.Fatalf("close over the limit: %d %s", code, body)
	}
	for i := 0; i < 60; i++ {
		if code, _ := e.do("GET", "/api/v1/registry/profiles", e.keyB, nil, nil); code != 200 {
			t.Fatalf("production key limited: %d", code)
		}
	}
}

// A client may propose the run id (to open a run while the service is
// down and create it later), a UUID of version 7 (the Go client's) or 4;
// a retry returns the same run. An id the service makes is version 7.
func TestProposedRunID(t *testing.T) {
	e := newEnv(t)
	var eb api.ErrorBody
	for _, id := range []string{names.NewOrderedID("run_", time.Now()), names.NewID("run_")} {
		var first, again api.Run
		if code, body := e.do("POST", "/api/v1/runs", e.keyA, api.OpenRunRequest{RunID: id, WorkflowID: "offline"}, &first); code != 201 || first.RunID != id {
			t.Fatalf("proposed id %s: %d %s", id, code, body)
		}
		if code, _ := e.do("POST", "/api/v1/runs", e.keyA, api.OpenRunRequest{RunID: id, WorkflowID: "offline"}, &again); code != 200 || again.RunID != id {
			t.Fatalf("retried open: %d %+v", code, again)
		}
		if code, _ := e.do("POST", "/api/v1/runs", e.keyA, api.OpenRunRequest{RunID: id, WorkflowID: "other"}, &eb); code != 409 {
			t.Fatalf("same id, other workflow: %d %+v", code, eb)
		}
		if code, _ := e.do("POST", "/api/v1/runs", e.keyB, api.OpenRunRequest{RunID: id, WorkflowID: "offline"}, &eb); code != 409 || eb.Error.Code != api.CodeRunIDTaken {
			t.Fatalf("another org taking the id: %d %+v", code, eb)
		}
	}
	v7 := strings.TrimPrefix(names.NewOrderedID("run_", time.Now()), "run_")
	for name, id := range map[string]string{
		"short":          "run_123",
		"version 1":      "run_" + v7[:14] + "1" + v7[15:],
		"version 6":      "run_" + v7[:14] + "6" + v7[15:],
		"version 8":      "run_" + v7[:14] + "8" + v7[15:],
		"variant 0":      "run_" + v7[:19] + "7" + v7[20:],
		"upper case":     "run_" + strings.ToUpper(v7),
		"no hyphens":     "run_" + strings.ReplaceAll(v7, "-", ""),
		"other prefix":   "rec_" + v7,
		"trailing space": "run_" + v7 + " ",
	} {
		if code, _ := e.do("POST", "/api/v1/runs", e.keyA, api.OpenRunRequest{RunID: id, WorkflowID: "x"}, &eb); code != 400 || eb.Error.Field != "run_id" {
			t.Errorf("%s (%q): %d %+v", name, id, code, eb)
		}
	}
	var made api.Run
	before := time.Now().Add(-time.Millisecond)
	if code, body := e.do("POST", "/api/v1/runs", e.keyA, api.OpenRunRequest{WorkflowID: "made"}, &made); code != 201 {
		t.Fatalf("open: %d %s", code, body)
	}
	after := time.Now().Add(time.Millisecond)
	u, err := uuid.Parse(strings.TrimPrefix(made.RunID, "run_"))
	sec, nsec := u.Time().UnixTime()
	if at := time.Unix(sec, nsec); err != nil || u.Version() != 7 || at.Before(before) || at.After(after) {
		t.Fatalf("the service made run id %s: version %d, time %v, want 7 within [%v, %v] (%v)", made.RunID, u.Version(), at, before, after, err)
	}
}

// A token has one spelling: the same token with a line break, or with other
// trailing bits in its last base64url character, is refused as forged.
func TestLineageOneSpelling(t *testing.T) {
	_, priv, _ := signing.GenerateKey()
	s, _ := signing.NewSigner(priv)
	trust := signing.NewBundle()
	trust.AddKey(s.PublicKey())
	now := time.Now()
	tok, err := server.SignLineage(api.Lineage{RunID: "run_x", OrgID: "org_a", LastChainHash: "sha256:" + strings.Repeat("0", 64), DelegationHash: "sha256:" + strings.Repeat("1", 64), IssuedAt: now.Format(time.RFC3339), ExpiresAt: now.Add(time.Hour).UTC().Format(time.RFC3339)}, s)
	if err != nil {
		t.Fatal(err)
	}
	// The signature is 64 bytes: 86 characters, the last carrying 2
	// unused bits; flipping one of them decodes to the same bytes.
	last := tok[len(tok)-1]
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	other := alphabet[strings.IndexByte(alphabet, last)^1]
	for name, variant := range map[string]string{
		"line break in payload": tok[:10] + "\n" + tok[10:],
		"CR before signature":   strings.Replace(tok, ".", "\r.", 1),
		"other trailing bits":   tok[:len(tok)-1] + string(other),
	} {
		if _, err := server.ParseLineage(variant, trust, now); !errors.Is(err, server.ErrLineageForged) {
			t.Errorf("%s: %v, want ErrLineageForged", name, err)
		}
	}
}
