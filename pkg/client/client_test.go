package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

var ctx = context.Background()

// The happy path: open, record (with output and details), close; the VPEC
// verifies offline against the service's trust bundle.
func TestOpenRecordClose(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline(func(o *client.Options) { o.Policy = []string{"hipaa", "gdpr"}; o.SurfaceID = "web" })
	run, err := p.Open(ctx, "pp_2026q4")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(run.ID(), "run_") || run.OrgID() != "org_acme" || run.WorkflowID() != "claims" || run.Environment() != vpec.Production {
		t.Fatalf("run: %s %s %s %s", run.ID(), run.OrgID(), run.WorkflowID(), run.Environment())
	}
	sr, code := e.serverRun(run.ID())
	if code != 200 || sr.PolicySnapshotHash != run.PolicySnapshotHash() {
		t.Fatalf("server run %d %+v, client snapshot %s", code, sr, run.PolicySnapshotHash())
	}
	input := []byte("claim 4411: patient data")
	res, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, input,
		client.WithOutput([]byte("redacted")), client.WithDetails(map[string]any{"rule_count": 12, "engine": "v2"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Queued || res.Sequence != 1 || res.CommitmentHash != commitment.String(input) || res.OutputCommitment == nil ||
		*res.OutputCommitment != commitment.String([]byte("redacted")) || res.ProofLevel != vpec.Execution {
		t.Fatalf("record result %+v", res)
	}
	if run.LastCommitmentHash() != res.CommitmentHash {
		t.Fatalf("last commitment %s", run.LastCommitmentHash())
	}
	// A selective record carries its manifest (which declares nothing here).
	sm := api.Manifest{Name: "schema", Version: "1", Stages: []api.ManifestStage{{StageName: "schema", ProofCeiling: "attestation"}}}
	smID, _ := client.ManifestID(sm)
	res2, err := run.Record(ctx, "schema", smID, vpec.ResultFail, []byte("{}"), client.WithProofLevel(vpec.Attestation), client.WithVisibility(vpec.Selective), client.WithManifest(sm))
	if err != nil || res2.Sequence != 2 || res2.ProofLevel != vpec.Attestation {
		t.Fatalf("second record %+v %v", res2, err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep := e.verify(v.Raw)
	if !rep.Valid || v.VPEC.ChecksPassed != 1 || v.VPEC.ChecksFailed != 1 || v.VPEC.ProofLevelFloor != vpec.Attestation || v.Offline {
		t.Fatalf("VPEC %s %+v", rep.Verdict, v.VPEC)
	}
	if !v.VPEC.IsClean || v.VPEC.Records[0].Details["engine"] != "v2" {
		t.Fatalf("VPEC %+v", v.VPEC)
	}
}

func TestNewPipelineOptions(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(client.EnvAPIKey, "")
	t.Setenv(client.EnvBaseURL, "")
	if _, err := client.NewPipeline(client.Options{QueuePath: filepath.Join(dir, "q")}); !errors.Is(err, client.ErrNoAPIKey) {
		t.Fatalf("no key: %v", err)
	}
	if _, err := client.NewPipeline(client.Options{APIKey: "sk_123", QueuePath: filepath.Join(dir, "q")}); !errors.Is(err, client.ErrInvalidAPIKey) {
		t.Fatalf("bad key: %v", err)
	}
	if _, err := client.NewPipeline(client.Options{APIKey: "pk_sb_x", WorkflowID: "a b", QueuePath: filepath.Join(dir, "q")}); err == nil {
		t.Fatal("bad workflow id accepted")
	}
	if _, err := client.NewPipeline(client.Options{APIKey: "pk_sb_x", BaseURL: "ftp://x", QueuePath: filepath.Join(dir, "q")}); err == nil {
		t.Fatal("bad base URL accepted")
	}
	if _, err := client.NewPipeline(client.Options{APIKey: "pk_sb_x", ProcessContextHash: "md5:00", QueuePath: filepath.Join(dir, "q")}); err == nil {
		t.Fatal("bad process context hash accepted")
	}
	// The environment variables, and the default queue path under the
	// user cache directory.
	t.Setenv(client.EnvAPIKey, "pk_sb_fromenv")
	t.Setenv(client.EnvBaseURL, "http://127.0.0.1:9/")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("HOME", dir)
	p, err := client.NewPipeline(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cache, _ := os.UserCacheDir()
	if !p.TestMode() || p.Environment() != vpec.Sandbox || p.WorkflowID() != "default" ||
		filepath.Dir(p.QueuePath()) != filepath.Join(cache, "svc") || !strings.HasPrefix(filepath.Base(p.QueuePath()), "queue-") ||
		p.QueuePath() != client.DefaultQueuePath("http://127.0.0.1:9", "pk_sb_fromenv") {
		t.Fatalf("defaults: test mode %v, workflow %s, queue %s", p.TestMode(), p.WorkflowID(), p.QueuePath())
	}
	if strings.Contains(p.QueuePath(), "fromenv") {
		t.Fatal("the queue path contains the key")
	}
	live, err := client.NewPipeline(client.Options{APIKey: "pk_live_x", QueuePath: filepath.Join(dir, "live")})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if live.TestMode() || live.Environment() != vpec.Production {
		t.Fatal("pk_live_ key is in test mode")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Open(ctx, ""); !errors.Is(err, client.ErrPipelineClosed) {
		t.Fatalf("open after close: %v", err)
	}
}

// A second Pipeline on the same queue file is refused until the first
// releases it.
func TestQueueLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.jsonl")
	p1, err := client.NewPipeline(client.Options{APIKey: "pk_sb_x", QueuePath: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.NewPipeline(client.Options{APIKey: "pk_sb_x", QueuePath: path}); !errors.Is(err, client.ErrQueueLocked) {
		t.Fatalf("second pipeline: %v", err)
	}
	p1.Close()
	p2, err := client.NewPipeline(client.Options{APIKey: "pk_sb_x", QueuePath: path})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	p2.Close()
}

// Local validation: a record that breaks the v1 rules is refused before
// anything is sent or queued, and the chain does not advance.
func TestRecordValidation(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]client.RecordOption{
		"verifiable_inference": {client.WithProofLevel(vpec.VerifiableInference)},
		"witnessed w/o review": {client.WithProofLevel(vpec.Witnessed)},
		"operator_bound":       {client.WithProofLevel(vpec.OperatorBound)},
		"bad visibility":       {client.WithVisibility("public")},
		"bad stage":            {client.WithStage("gpu", "")},
		"bad model hash":       {client.WithModelHash("sha256:xyz")},
	}
	for name, opts := range cases {
		if _, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("x"), opts...); !errors.Is(err, client.ErrInvalidRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := run.Record(ctx, "c", manifest, "maybe", []byte("x")); !errors.Is(err, client.ErrInvalidRecord) {
		t.Errorf("bad result: %v", err)
	}
	if _, err := run.Record(ctx, "", manifest, vpec.ResultPass, []byte("x")); !errors.Is(err, client.ErrInvalidRecord) {
		t.Errorf("empty check: %v", err)
	}
	if n, _ := p.PendingQueueCount(); n != 0 || run.Sequence() != 0 {
		t.Fatalf("queued %d, sequence %d", n, run.Sequence())
	}
	res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("x"), client.WithStage(stage.OpenSourceML, "inference"),
		client.WithModelHash(commitment.String([]byte("model"))))
	if err != nil || res.Sequence != 1 {
		t.Fatalf("valid record after invalid ones: %+v %v", res, err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep := e.verify(v.Raw); !rep.Valid || len(v.VPEC.Gaps) != 1 || v.VPEC.Gaps[0].GapType != gap.ModelProfileMissing {
		t.Fatalf("%s %+v", rep.Verdict, v.VPEC.Gaps)
	}
}

func TestRegisterCheck(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	m := api.Manifest{Name: "pii-check", Version: "1.0.0", Stages: []api.ManifestStage{{StageName: "detect", ProofCeiling: "execution", RegulatoryReferences: []string{"GDPR Art. 32"}}}}
	reg, err := p.RegisterCheck(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	local, err := client.ManifestID(m)
	if err != nil || reg.ManifestID != local || reg.Name != "pii-check" || !reg.Created {
		t.Fatalf("registration %+v, local id %s %v", reg, local, err)
	}
	again, err := p.RegisterCheck(ctx, m)
	if err != nil || again.ManifestID != reg.ManifestID || again.Created {
		t.Fatalf("again %+v %v", again, err)
	}
	// A stage whose references a Go caller left nil registers as [] (null
	// is refused), under the id ManifestID computes.
	bare := api.Manifest{Name: "bare", Version: "1", Stages: []api.ManifestStage{{StageName: "detect", ProofCeiling: "execution"}}}
	breg, err := p.RegisterCheck(ctx, bare)
	if lid, _ := client.ManifestID(bare); err != nil || breg.ManifestID != lid {
		t.Fatalf("manifest with nil references: %+v %v (local id %s)", breg, err, lid)
	}
	e.gate.set(unavailable)
	if _, err := p.RegisterCheck(ctx, m); !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("register while down: %v", err)
	}
}

// Run states, sealed rows: record after close and a second close fail with
// ErrRunSealed, whether the client or the service knows the run is sealed.
func TestRunSealed(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	run, _ := p.Open(ctx, "")
	run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("a"))
	if _, err := run.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("b")); !errors.Is(err, client.ErrRunSealed) {
		t.Fatalf("record after close: %v", err)
	}
	if _, err := run.Close(ctx); !errors.Is(err, client.ErrRunSealed) {
		t.Fatalf("second close: %v", err)
	}
	if !run.Sealed() {
		t.Fatal("not sealed")
	}

	// The service says so: another process closed the run.
	other := e.pipeline()
	for _, viaRecord := range []bool{true, false} {
		run, _ := p.Open(ctx, "")
		run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("a"))
		theirs, err := other.ResumeRun(ctx, run.ID())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := theirs.Close(ctx); err != nil {
			t.Fatal(err)
		}
		var aerr *client.APIError
		if viaRecord {
			_, err = run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("b"))
		} else {
			_, err = run.Close(ctx)
		}
		if !errors.Is(err, client.ErrRunSealed) || !errors.As(err, &aerr) || aerr.Status != http.StatusConflict {
			t.Fatalf("service-sealed (record %v): %v", viaRecord, err)
		}
		if _, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("b")); !errors.Is(err, client.ErrRunSealed) {
			t.Fatalf("then: %v", err)
		}
		if _, err := other.ResumeRun(ctx, run.ID()); !errors.Is(err, client.ErrRunSealed) {
			t.Fatalf("resume sealed run: %v", err)
		}
	}

	// Sealed locally by an offline close.
	run, _ = p.Open(ctx, "")
	e.gate.set(unavailable)
	v, err := run.Close(ctx)
	if err != nil || !v.Offline {
		t.Fatalf("offline close: %+v %v", v, err)
	}
	if _, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("b")); !errors.Is(err, client.ErrRunSealed) {
		t.Fatalf("record after offline close: %v", err)
	}
	if _, err := run.Close(ctx); !errors.Is(err, client.ErrRunSealed) {
		t.Fatalf("close after offline close: %v", err)
	}
}

// Log events: one event per record, with exactly the documented JSON names, and
// gap_types_emitted only when enabled.
func TestLogger(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	var events []client.LogEvent
	p.SetLogger(func(ev client.LogEvent) { events = append(events, ev) }, false)
	run, _ := p.Open(ctx, "")
	r1, err := run.Record(ctx, "pii", manifest, vpec.ResultPass, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	p.SetLogger(func(ev client.LogEvent) { events = append(events, ev) }, true)
	r2, _ := run.Record(ctx, "tox", manifest, vpec.ResultFail, []byte("b"), client.WithStage(stage.OpenSourceML, "inference"))
	r3, _ := run.Record(ctx, "inj", manifest, vpec.ResultPass, []byte("c"), client.WithProofLevel(vpec.Attestation))
	e.gate.set(unavailable)
	r4, _ := run.Record(ctx, "queued", manifest, vpec.ResultPass, []byte("d"))
	p.SetLogger(nil, false)
	run.Record(ctx, "unlogged", manifest, vpec.ResultPass, []byte("e"))
	if len(events) != 4 {
		t.Fatalf("%d events", len(events))
	}
	want := []struct {
		res  *client.RecordResult
		gaps []string
	}{{r1, nil}, {r2, []string{"model_profile_missing"}}, {r3, []string{}}, {r4, []string{}}}
	for i, ev := range events {
		w := want[i]
		if ev.RecordID != w.res.RecordID || ev.CommitmentHash != w.res.CommitmentHash ||
			ev.ProofLevel != string(w.res.ProofLevel) || ev.RunID != run.ID() || ev.WorkflowID != "claims" || ev.RecordedAt != w.res.RecordedAt {
			t.Errorf("event %d: %+v vs %+v", i, ev, w.res)
		}
		if (ev.GapTypesEmitted == nil) != (w.gaps == nil) || strings.Join(ev.GapTypesEmitted, ",") != strings.Join(w.gaps, ",") {
			t.Errorf("event %d gaps %#v, want %#v", i, ev.GapTypesEmitted, w.gaps)
		}
		b, _ := json.Marshal(ev)
		var m map[string]any
		json.Unmarshal(b, &m)
		keys := []string{"svc_record_id", "svc_commitment_hash", "svc_check_result", "svc_proof_level", "svc_workflow_id", "svc_run_id", "svc_recorded_at"}
		if w.gaps != nil {
			keys = append(keys, "gap_types_emitted")
		}
		if len(m) != len(keys) {
			t.Errorf("event %d JSON %s", i, b)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("event %d JSON lacks %s: %s", i, k, b)
			}
		}
		if len(ev.Attrs()) != len(keys) {
			t.Errorf("event %d: %d slog attrs", i, len(ev.Attrs()))
		}
	}
	if events[0].CheckResult != "pass" || events[1].CheckResult != "fail" {
		t.Errorf("check results %s %s", events[0].CheckResult, events[1].CheckResult)
	}
}

// A witnessed review end to end: register the reviewer key, open a review
// with a minimum duration, be refused before it, close on the input,
// record with the review, close: the VPEC is valid at witnessed.
func TestWitnessedReview(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	_, priv, _ := signing.GenerateKey()
	reviewer, _ := signing.NewSigner(priv)
	keyID, err := p.RegisterReviewer(ctx, reviewer.PublicKey(), "Dr. Reviewer")
	if err != nil || keyID != reviewer.KeyID() {
		t.Fatalf("register reviewer: %s %v", keyID, err)
	}
	run, _ := p.Open(ctx, "")
	if _, err := run.OpenReview(ctx, "human_review", manifest, "0000000000000000", time.Second); err == nil {
		t.Fatal("review with an unregistered key opened")
	}
	sess, err := run.OpenReview(ctx, "human_review", manifest, keyID, time.Second)
	if err != nil || sess.CheckOpenTST == "" || sess.MinDurationSeconds != 1 || sess.Closed() {
		t.Fatalf("open review %+v %v", sess, err)
	}
	input := []byte("claim #4411 as shown to the reviewer")
	var aerr *client.APIError
	if err := run.CloseSession(ctx, sess, input); !errors.As(err, &aerr) || aerr.Code != api.CodeReviewTooShort {
		t.Fatalf("early close: %v", err)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := run.CloseSession(ctx, sess, input); err != nil || !sess.Closed() || sess.CommitmentHash != commitment.String(input) {
		t.Fatalf("close review: %+v %v", sess, err)
	}
	// The wrong reviewer is refused locally.
	_, otherPriv, _ := signing.GenerateKey()
	other, _ := signing.NewSigner(otherPriv)
	if _, err := run.Record(ctx, "human_review", manifest, vpec.ResultPass, input, client.WithReview(sess, other, nil, "")); !errors.Is(err, client.ErrInvalidRecord) {
		t.Fatalf("other reviewer: %v", err)
	}
	// Another input than the session's is refused locally.
	if _, err := run.Record(ctx, "human_review", manifest, vpec.ResultPass, []byte("else"), client.WithReview(sess, reviewer, nil, "")); !errors.Is(err, client.ErrInvalidRecord) {
		t.Fatalf("other input: %v", err)
	}
	display := []byte("<p>Claim 4411, amount 1200 EUR</p>")
	res, err := run.Record(ctx, "human_review", manifest, vpec.ResultPass, input, client.WithReview(sess, reviewer, display, "matches policy 7"))
	if err != nil || res.ProofLevel != vpec.Witnessed || res.Queued {
		t.Fatalf("witnessed record %+v %v", res, err)
	}
	// A second review, signed outside the process with the statement.
	sess2, err := run.OpenReview(ctx, "human_review", manifest, keyID, 0)
	if err != nil {
		t.Fatal(err)
	}
	input2 := []byte("claim #4412")
	if err := run.CloseSession(ctx, sess2, input2); err != nil {
		t.Fatal(err)
	}
	stmt, err := run.ReviewStatement(sess2, vpec.ResultFail, input2, nil, "amount too high")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "human_review", manifest, vpec.ResultFail, input2,
		client.WithReviewerSignature(sess2, reviewer.PublicKey(), mustSig(reviewer.Sign(stmt)), nil, "amount too high")); err != nil {
		t.Fatal(err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 2)
	if v.VPEC.ProofLevelFloor != vpec.Witnessed || v.VPEC.Records[0].Review.DisplayContentHash != commitment.String(display) ||
		v.VPEC.Records[0].Review.RationaleHash != commitment.String([]byte("matches policy 7")) {
		t.Fatalf("VPEC %+v", v.VPEC.Records[0].Review)
	}
}

// A check session: opened before the check, closed by Record on the
// record's input, verified in the VPEC.
func TestCheckSession(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	run, _ := p.Open(ctx, "")
	s, err := run.OpenCheck(ctx, "pii_scan", manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "toxicity", manifest, vpec.ResultPass, []byte("in"), client.WithCheckSession(s)); !errors.Is(err, client.ErrInvalidRecord) {
		t.Fatalf("session of another check: %v", err)
	}
	res, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte("in"), client.WithCheckSession(s))
	if err != nil || !s.Closed() {
		t.Fatalf("%+v %v", res, err)
	}
	// A closed session whose record is queued: the evidence is complete.
	s2, _ := run.OpenCheck(ctx, "pii_scan", manifest)
	if err := run.CloseSession(ctx, s2, []byte("in2")); err != nil {
		t.Fatal(err)
	}
	e.gate.set(unavailable)
	res, err = run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte("in2"), client.WithCheckSession(s2))
	if err != nil || !res.Queued {
		t.Fatalf("queued session record %+v %v", res, err)
	}
	// An open session cannot be closed while the service is down.
	s3 := &client.Session{SessionID: "chk_x", RunID: run.ID(), Kind: "check", Check: "pii_scan", ManifestID: manifest}
	if _, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte("in3"), client.WithCheckSession(s3)); !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("unclosable session: %v", err)
	}
	e.gate.set(pass)
	if _, err := p.FlushQueue(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 2)
	if v.VPEC.Records[0].CheckSession == nil || v.VPEC.Records[1].CheckSession == nil {
		t.Fatal("no check_session blocks")
	}
}

// Delegation: a lineage token hands the run to another pipeline, which
// continues the same run and chain; the VPEC covers both.
func TestDelegation(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	run, _ := p.Open(ctx, "")
	for i := range 2 {
		if _, err := run.Record(ctx, "step", manifest, vpec.ResultPass, fmt.Appendf(nil, "a%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	token, err := run.RecordDelegation(ctx, map[string]any{"to": "agent-7", "scope": []string{"summarise"}})
	if err != nil || token == "" {
		t.Fatalf("delegate: %q %v", token, err)
	}
	delegate := e.pipeline()
	cont, err := delegate.ResumeFromLineage(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if cont.ID() != run.ID() || cont.Sequence() != 2 {
		t.Fatalf("resumed %s at %d", cont.ID(), cont.Sequence())
	}
	if _, err := delegate.ResumeFromLineage(ctx, token[:len(token)-4]+"AAAA"); err == nil {
		t.Fatal("forged token accepted")
	}
	for i := range 2 {
		res, err := cont.Record(ctx, "delegated", manifest, vpec.ResultPass, fmt.Appendf(nil, "b%d", i))
		if err != nil || res.Sequence != int64(3+i) {
			t.Fatalf("%+v %v", res, err)
		}
	}
	// A second hand-over, taken up while the service is down: the
	// delegate reads the token locally and queues its records.
	token2, err := cont.RecordDelegation(ctx, map[string]any{"to": "agent-9"})
	if err != nil {
		t.Fatal(err)
	}
	third := e.pipeline(func(o *client.Options) { o.RetryInterval = time.Hour })
	e.gate.set(unavailable)
	last, err := third.ResumeFromLineage(ctx, token2)
	if err != nil || last.Sequence() != 4 {
		t.Fatalf("offline resume: %v", err)
	}
	if res, err := last.Record(ctx, "offline", manifest, vpec.ResultPass, []byte("c")); err != nil || !res.Queued || res.Sequence != 5 {
		t.Fatalf("%+v %v", res, err)
	}
	e.gate.set(pass)
	if n, err := third.FlushQueue(ctx); n != 1 || err != nil {
		t.Fatalf("flush %d %v", n, err)
	}
	v, err := last.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 5)
}

// Concurrent runs on one pipeline while the service goes down and comes
// back: every record is delivered once, every chain is intact.
func TestConcurrentRuns(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	const runs, per = 4, 5
	all := make([]*client.Run, runs)
	for g := range all {
		run, err := p.Open(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		all[g] = run
	}
	var queued atomic.Int64
	phase := func() {
		var wg sync.WaitGroup
		for g, run := range all {
			wg.Go(func() {
				for i := range per {
					res, err := run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "%d-%d-%d", g, i, run.Sequence()))
					if err != nil {
						t.Error(err)
						return
					}
					if res.Queued {
						queued.Add(1)
					}
				}
			})
		}
		wg.Wait()
	}
	phase()
	e.gate.set(unavailable)
	phase()
	if queued.Load() != runs*per {
		t.Fatalf("%d records queued while down, want %d", queued.Load(), runs*per)
	}
	e.gate.set(pass)
	phase()
	if _, err := p.FlushQueue(ctx); err != nil {
		t.Fatal(err)
	}
	vpecs := make([]*client.VPECResult, runs)
	var wg sync.WaitGroup
	for g, run := range all {
		wg.Go(func() {
			v, err := run.Close(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			vpecs[g] = v
		})
	}
	wg.Wait()
	for _, v := range vpecs {
		if v != nil {
			e.mustValid(v, 3*per)
		}
	}
}

// The queue file holds hashes only.
func queueHolds(t *testing.T, path string, secrets ...[]byte) {
	t.Helper()
	b, _ := os.ReadFile(path)
	for _, s := range secrets {
		if bytes.Contains(b, s) {
			t.Fatalf("the queue file holds raw data %q", s)
		}
	}
}
