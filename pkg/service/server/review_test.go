package server_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/notify"
	"github.com/svc-gov/svc/pkg/service/server"
)

// A witnessed review end to end: register the reviewer's key, open a review
// session, be refused before the minimum duration, close it on the input,
// sign, record, close the run, verify offline.
func TestWitnessedReview(t *testing.T) {
	e := newEnv(t)
	_, priv, _ := signing.GenerateKey()
	reviewer, _ := signing.NewSigner(priv)
	pubPEM, _ := signing.MarshalPublicKeyPEM(reviewer.PublicKey())
	var reg api.ReviewerKeyResult
	if code, body := e.do("POST", "/api/v1/reviewers", e.keyA, api.ReviewerKeyRequest{PublicKey: string(pubPEM), Name: "Dr. Reviewer"}, &reg); code != 201 || reg.ReviewerKeyID != reviewer.KeyID() {
		t.Fatalf("register reviewer: %d %s", code, body)
	}
	if code, _ := e.do("POST", "/api/v1/reviewers", e.keyA, api.ReviewerKeyRequest{PublicKey: string(pubPEM)}, &reg); code != 200 || reg.Created {
		t.Fatalf("re-register: %d %+v", code, reg)
	}
	run := e.open(e.keyA)
	base := "/api/v1/runs/" + run.RunID
	var eb api.ErrorBody
	if code, _ := e.do("POST", base+"/sessions", e.keyA, api.SessionRequest{Kind: "review", Check: "human_review", ManifestID: "m1", ReviewerKeyID: "0000000000000000", MinDurationSeconds: 1}, &eb); code != 422 {
		t.Fatalf("unregistered reviewer: %d %+v", code, eb)
	}
	var sess api.SessionView
	if code, body := e.do("POST", base+"/sessions", e.keyA, api.SessionRequest{Kind: "review", Check: "human_review", ManifestID: "m1", ReviewerKeyID: reviewer.KeyID(), MinDurationSeconds: 1}, &sess); code != 201 || sess.CheckOpenTST == "" {
		t.Fatalf("open review: %d %s", code, body)
	}
	input := "claim #4411 as shown to the reviewer"
	ch := commitment.String([]byte(input))
	if code, _ := e.do("POST", base+"/sessions/"+sess.SessionID+"/close", e.keyA, api.SessionCloseRequest{CommitmentHash: ch}, &eb); code != 422 || eb.Error.Code != api.CodeReviewTooShort {
		t.Fatalf("early close: %d %+v", code, eb)
	}
	time.Sleep(1100 * time.Millisecond)
	if code, body := e.do("POST", base+"/sessions/"+sess.SessionID+"/close", e.keyA, api.SessionCloseRequest{CommitmentHash: ch}, &sess); code != 200 || sess.CheckCloseTST == "" {
		t.Fatalf("close review: %d %s", code, body)
	}
	if code, _ := e.do("POST", base+"/sessions/"+sess.SessionID+"/close", e.keyA, api.SessionCloseRequest{CommitmentHash: commitment.String([]byte("other"))}, &eb); code != 409 {
		t.Fatalf("close on another input: %d", code)
	}

	der, _ := x509.MarshalPKIXPublicKey(reviewer.PublicKey())
	rec := vpec.Record{
		RecordID: names.NewID("rec_"), Sequence: 1, Check: "human_review", ManifestID: "m1", CheckResult: vpec.ResultPass,
		ProofLevel: vpec.Witnessed, CommitmentAlgorithm: "sha256", CommitmentHash: ch, Visibility: vpec.Opaque,
		RecordedAt: vpec.FormatTime(time.Now()),
		Review: &vpec.Review{SessionID: sess.SessionID, ReviewerKeyID: reviewer.KeyID(), ReviewerPublicKey: base64.StdEncoding.EncodeToString(der),
			RationaleHash: commitment.String([]byte("matches policy")), MinDurationSeconds: 1, CheckOpenTST: sess.CheckOpenTST, CheckCloseTST: sess.CheckCloseTST},
	}
	sign := func(r *vpec.Record, s *signing.Signer) {
		stmt, _ := vpec.ReviewStatement(run.RunID, r)
		r.Review.ReviewerSignature = signing.FormatSignature(mustSig(s.Sign(stmt)))
		recs := []vpec.Record{*r}
		issue.Chain(vpec.Genesis(run.RunID), recs)
		*r = recs[0]
	}
	// Signed by someone else: refused.
	_, otherPriv, _ := signing.GenerateKey()
	other, _ := signing.NewSigner(otherPriv)
	forged := rec
	forgedReview := *rec.Review
	forged.Review = &forgedReview
	sign(&forged, other)
	if code, _ := e.do("POST", base+"/records", e.keyA, forged, &eb); code != 422 || eb.Error.Code != api.CodeInvalidSignature {
		t.Fatalf("forged reviewer signature: %d %+v", code, eb)
	}
	sign(&rec, reviewer)
	if code, body := e.do("POST", base+"/records", e.keyA, rec, nil); code != 201 {
		t.Fatalf("witnessed record: %d %s", code, body)
	}
	code, doc := e.do("POST", base+"/close", e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	rep := e.verify(doc)
	if !rep.Valid || rep.ProofLevelFloor != vpec.Witnessed || rep.Check(verify.CheckReviews).Status != verify.Pass {
		t.Fatalf("witnessed VPEC: %s floor %s reviews %+v", rep.Verdict, rep.ProofLevelFloor, rep.Check(verify.CheckReviews))
	}
}

// Calibration requests, publication with an e-mail through a real SMTP
// listener, and model_profile_missing resolving once the profile exists.
func TestCalibrationAndPublish(t *testing.T) {
	e := newEnv(t)
	model := commitment.String([]byte("model.onnx bytes"))
	var req api.CalibrationRequestView
	if code, body := e.do("POST", "/api/v1/registry/calibration-requests", e.keyA, api.CalibrationRequestInput{ONNXModelHash: model, HubModelID: "acme/pii-bert", DesiredGPUClasses: []string{"cpu"}, NotifyEmail: "ml@alpha.test"}, &req); code != 201 {
		t.Fatalf("calibration request: %d %s", code, body)
	}
	if !strings.HasPrefix(req.RequestID, "cal_req_") || req.Status != server.CalQueued || req.EstimatedCompletion != "7d" || req.NotifyEmail != "ml@alpha.test" {
		t.Fatalf("request: %+v", req)
	}
	var eb api.ErrorBody
	if code, _ := e.do("POST", "/api/v1/registry/calibration-requests", e.keyA, api.CalibrationRequestInput{ONNXModelHash: model, DesiredGPUClasses: []string{"tpu"}}, &eb); code != 400 || eb.Error.Field != "desired_gpu_classes[0]" {
		t.Fatalf("bad GPU class: %d %+v", code, eb)
	}
	if code, _ := e.do("GET", "/api/v1/registry/calibration-requests/"+req.RequestID, e.keyB, nil, nil); code != 404 {
		t.Fatalf("another org reads the request: %d", code)
	}
	ctx := context.Background()
	if _, err := server.SetCalibrationStatus(ctx, e.st, "org_alpha", req.RequestID, server.CalInProgress, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := server.SetCalibrationStatus(ctx, e.st, "org_alpha", req.RequestID, server.CalQueued, "", time.Now()); err == nil {
		t.Fatal("in_progress -> queued allowed")
	}

	closeOne := func() *vpec.VPEC {
		run := e.open(e.keyA)
		recs := chain(run.RunID, 1)
		recs[0].StageType, recs[0].ONNXModelHash = stage.OpenSourceML, model
		issue.Chain(vpec.Genesis(run.RunID), recs)
		if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, recs[0], nil); code != 201 {
			t.Fatalf("record: %d %s", code, body)
		}
		_, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyA, nil, nil)
		if rep := e.verify(doc); !rep.Valid {
			t.Fatalf("VPEC: %s", rep.Verdict)
		}
		var v vpec.VPEC
		if err := jsonUnmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		return &v
	}
	if v := closeOne(); len(v.Gaps) != 1 || v.Gaps[0].GapType != gap.ModelProfileMissing || v.Gaps[0].Severity != gap.Medium {
		t.Fatalf("before publication: gaps %+v", v.Gaps)
	}

	smtp, err := notify.StartTestServer()
	if err != nil {
		t.Fatal(err)
	}
	defer smtp.Close()
	mailer, _ := notify.Parse("smtp://" + smtp.Addr() + "?from=registry@svc.test")
	p := &profile.Profile{Schema: profile.Schema, ProfileID: "svc/pii-detection-class/v1.0.0", ModelClass: "pii-detection", Architecture: "bert",
		CalibratedGPUClasses: []string{"cpu"}, CalibrationPasses: 1000, CalibrationDate: "2026-11-22", SafetyMargin: 2,
		Operators: map[string]profile.Bounds{profile.Linear: {P99: 1e-7, P99_9: 2e-7, P9999: 3e-7}},
		Models:    []profile.Model{{ONNXModelHash: model, OperatorCounts: map[string]int64{"full": 100}}}}
	res, err := server.Publish(ctx, e.st, e.mat.Signer, "127.0.0.1/.well-known/svc/trust-bundle.pem", p, mailer, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RequestsPublished) != 1 || res.NoticesSent != 1 {
		t.Fatalf("publish: %+v", res)
	}
	if msgs := smtp.Messages(); len(msgs) != 1 || msgs[0].To[0] != "ml@alpha.test" || !strings.Contains(msgs[0].Data, req.RequestID) {
		t.Fatalf("notice: %+v", msgs)
	}
	e.do("GET", "/api/v1/registry/calibration-requests/"+req.RequestID, e.keyA, nil, &req)
	if req.Status != server.CalPublished || req.ProfileID != p.ProfileID {
		t.Fatalf("request after publication: %+v", req)
	}
	var lk api.Lookup
	if code, _ := e.do("GET", "/api/v1/registry/lookup?hash="+model, e.keyB, nil, &lk); code != 200 || !lk.Found || lk.ProfileID != p.ProfileID {
		t.Fatalf("lookup: %d %+v", code, lk)
	}
	code, full := e.do("GET", "/api/v1/registry/profiles?model_hash="+model, e.keyA, nil, nil)
	if _, err := profile.Verify(full, e.mat.Trust); code != 200 || err != nil {
		t.Fatalf("published profile does not verify: %d %v", code, err)
	}
	if v := closeOne(); len(v.Gaps) != 0 || !v.IsClean {
		t.Fatalf("after publication the gap should resolve: %+v", v.Gaps)
	}
	if _, err := server.Publish(ctx, e.st, e.mat.Signer, "x", p, nil, time.Now()); err == nil {
		t.Fatal("publishing other content under the same profile id succeeded")
	}
	again, err := server.Publish(ctx, e.st, e.mat.Signer, "127.0.0.1/.well-known/svc/trust-bundle.pem", p, mailer, time.Now())
	if err != nil || len(again.RequestsPublished) != 0 || again.NoticesSent != 0 {
		t.Fatalf("publishing the identical profile again should finish quietly: %+v %v", again, err)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// A check run inside a check session: the record carries the session's
// open and close timestamps and the VPEC verifies them.
func TestCheckSession(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	base := "/api/v1/runs/" + run.RunID
	var sess api.SessionView
	if code, body := e.do("POST", base+"/sessions", e.keyA, api.SessionRequest{Kind: "check", Check: "pii", ManifestID: "m1"}, &sess); code != 201 {
		t.Fatalf("open check: %d %s", code, body)
	}
	recs := chain(run.RunID, 1)
	recs[0].Check, recs[0].ManifestID = "pii", "m1"
	var eb api.ErrorBody
	withSession := func() {
		recs[0].CheckSession = &vpec.CheckSession{SessionID: sess.SessionID, CheckOpenTST: sess.CheckOpenTST, CheckCloseTST: sess.CheckCloseTST}
		issue.Chain(vpec.Genesis(run.RunID), recs)
	}
	// Still open: no close timestamp to carry.
	withSession()
	if code, _ := e.do("POST", base+"/records", e.keyA, recs[0], &eb); code != 422 {
		t.Fatalf("record on an open session: %d %+v", code, eb)
	}
	if code, body := e.do("POST", base+"/sessions/"+sess.SessionID+"/close", e.keyA, api.SessionCloseRequest{CommitmentHash: recs[0].CommitmentHash}, &sess); code != 200 {
		t.Fatalf("close check: %d %s", code, body)
	}
	withSession()
	if code, body := e.do("POST", base+"/records", e.keyA, recs[0], nil); code != 201 {
		t.Fatalf("record on the closed session: %d %s", code, body)
	}
	_, doc := e.do("POST", base+"/close", e.keyA, nil, nil)
	if rep := e.verify(doc); !rep.Valid || rep.Check(verify.CheckReviews).Status != verify.Pass {
		t.Fatalf("VPEC: %s %+v", rep.Verdict, rep.Check(verify.CheckReviews))
	}
}

// A reviewer key given as base64 DER has one spelling: with a line break
// (which encoding/base64 would skip) it is refused naming public_key.
func TestReviewerKeyOneSpelling(t *testing.T) {
	e := newEnv(t)
	_, priv, _ := signing.GenerateKey()
	reviewer, _ := signing.NewSigner(priv)
	pubPEM, _ := signing.MarshalPublicKeyPEM(reviewer.PublicKey())
	der := strings.Join(strings.Split(strings.TrimSpace(string(pubPEM)), "\n")[1:2], "")
	var eb api.ErrorBody
	if code, body := e.do("POST", "/api/v1/reviewers", e.keyA, api.ReviewerKeyRequest{PublicKey: der[:20] + "\n" + der[20:]}, &eb); code != 400 || eb.Error.Field != "public_key" {
		t.Fatalf("base64 with a line break: %d %s, want 400 naming public_key", code, body)
	}
	var reg api.ReviewerKeyResult
	if code, body := e.do("POST", "/api/v1/reviewers", e.keyA, api.ReviewerKeyRequest{PublicKey: der}, &reg); code != 201 || reg.ReviewerKeyID != reviewer.KeyID() {
		t.Fatalf("base64 DER: %d %s", code, body)
	}
}

// A profile that covers only some of a request's GPU classes leaves it
// in_progress, saying which classes are covered and which are not; with
// no mailer the requester is reported as not notified.
func TestPublishPartialCoverage(t *testing.T) {
	e := newEnv(t)
	model := commitment.String([]byte("partly calibrated model"))
	var req api.CalibrationRequestView
	if code, body := e.do("POST", "/api/v1/registry/calibration-requests", e.keyA, api.CalibrationRequestInput{ONNXModelHash: model, DesiredGPUClasses: []string{"cpu", "a100"}, NotifyEmail: "ml@alpha.test"}, &req); code != 201 {
		t.Fatalf("calibration request: %d %s", code, body)
	}
	p := &profile.Profile{Schema: profile.Schema, ProfileID: "svc/partial-class/v1.0.0", ModelClass: "partial", Architecture: "bert",
		CalibratedGPUClasses: []string{"cpu"}, CalibrationPasses: 1000, CalibrationDate: "2026-11-22", SafetyMargin: 2,
		Operators: map[string]profile.Bounds{profile.Linear: {P99: 1e-7, P99_9: 2e-7, P9999: 3e-7}},
		Models:    []profile.Model{{ONNXModelHash: model, OperatorCounts: map[string]int64{"full": 100}}}}
	res, err := server.Publish(context.Background(), e.st, e.mat.Signer, "127.0.0.1/.well-known/svc/trust-bundle.pem", p, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RequestsPublished) != 0 || len(res.RequestsPartial) != 1 || res.RequestsPartial[0].Missing[0] != "a100" || len(res.NoticesNotSent) != 1 {
		t.Fatalf("publish: %+v", res)
	}
	e.do("GET", "/api/v1/registry/calibration-requests/"+req.RequestID, e.keyA, nil, &req)
	if req.Status != server.CalInProgress || !strings.Contains(req.Note, "still to calibrate: a100") {
		t.Fatalf("request after a partial publication: %+v", req)
	}
}
