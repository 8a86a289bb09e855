package server_test

import (
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// A check or review session backs one record: a second record presenting
// it is refused with 409 session_used naming the block, while a retry of
// the record it backs is still acknowledged as a duplicate.
func TestSessionBacksOneRecord(t *testing.T) {
	e := newEnv(t)
	_, priv, _ := signing.GenerateKey()
	reviewer, _ := signing.NewSigner(priv)
	pubPEM, _ := signing.MarshalPublicKeyPEM(reviewer.PublicKey())
	if code, body := e.do("POST", "/api/v1/reviewers", e.keyA, api.ReviewerKeyRequest{PublicKey: string(pubPEM)}, nil); code != 201 {
		t.Fatalf("register reviewer: %d %s", code, body)
	}
	der, _ := x509.MarshalPKIXPublicKey(reviewer.PublicKey())
	for _, kind := range []string{api.SessionCheck, api.SessionReview} {
		t.Run(kind, func(t *testing.T) {
			run := e.open(e.keyA)
			base := "/api/v1/runs/" + run.RunID
			req := api.SessionRequest{Kind: kind, Check: "pii", ManifestID: "m1"}
			if kind == api.SessionReview {
				req.ReviewerKeyID = reviewer.KeyID()
			}
			var sess api.SessionView
			if code, body := e.do("POST", base+"/sessions", e.keyA, req, &sess); code != 201 {
				t.Fatalf("open session: %d %s", code, body)
			}
			input := commitment.String([]byte("the input the session closed on"))
			if code, body := e.do("POST", base+"/sessions/"+sess.SessionID+"/close", e.keyA, api.SessionCloseRequest{CommitmentHash: input}, &sess); code != 200 {
				t.Fatalf("close session: %d %s", code, body)
			}
			// Two records on the same input, both presenting the session.
			recs := chain(run.RunID, 2)
			field := "check_session"
			for i := range recs {
				r := &recs[i]
				r.Check, r.ManifestID, r.CommitmentHash, r.CheckResult = "pii", "m1", input, vpec.ResultPass
				if kind == api.SessionCheck {
					r.CheckSession = &vpec.CheckSession{SessionID: sess.SessionID, CheckOpenTST: sess.CheckOpenTST, CheckCloseTST: sess.CheckCloseTST}
					continue
				}
				field = "review"
				r.ProofLevel = vpec.Witnessed
				r.Review = &vpec.Review{SessionID: sess.SessionID, ReviewerKeyID: reviewer.KeyID(), ReviewerPublicKey: base64.StdEncoding.EncodeToString(der),
					RationaleHash: commitment.String([]byte("ok")), CheckOpenTST: sess.CheckOpenTST, CheckCloseTST: sess.CheckCloseTST}
			}
			for i := range recs {
				issue.Chain(vpec.Genesis(run.RunID), recs[:i+1])
				if recs[i].Review != nil {
					stmt, _ := vpec.ReviewStatement(run.RunID, &recs[i])
					recs[i].Review.ReviewerSignature = signing.FormatSignature(mustSig(reviewer.Sign(stmt)))
				}
			}
			issue.Chain(vpec.Genesis(run.RunID), recs)
			// A record refused for its chain (after its session checks
			// passed) does not take the session: the corrected record,
			// under another record_id, still gets it.
			bad := recs[0]
			bad.RecordID, bad.ChainHash = names.NewID("rec_"), "sha256:"+strings.Repeat("0", 64)
			if bad.Review != nil {
				rv := *bad.Review
				bad.Review = &rv
				stmt, _ := vpec.ReviewStatement(run.RunID, &bad)
				bad.Review.ReviewerSignature = signing.FormatSignature(mustSig(reviewer.Sign(stmt)))
			}
			var beb api.ErrorBody
			if code, body := e.do("POST", base+"/records", e.keyA, bad, &beb); code != 422 || beb.Error.Code != api.CodeChainMismatch {
				t.Fatalf("record with a broken chain: %d %s; want 422 %s", code, body, api.CodeChainMismatch)
			}
			if code, body := e.do("POST", base+"/records", e.keyA, recs[0], nil); code != 201 {
				t.Fatalf("first record: %d %s", code, body)
			}
			if code, body := e.do("POST", base+"/records", e.keyA, recs[0], nil); code != 200 {
				t.Fatalf("retry of the first record: %d %s; want 200 duplicate", code, body)
			}
			var eb api.ErrorBody
			if code, body := e.do("POST", base+"/records", e.keyA, recs[1], &eb); code != 409 || eb.Error.Code != api.CodeSessionUsed || eb.Error.Field != field {
				t.Fatalf("second record on the same %s session: %d %s; want 409 %s field %s", kind, code, body, api.CodeSessionUsed, field)
			}
			code, doc := e.do("POST", base+"/close", e.keyA, nil, nil)
			if code != 200 {
				t.Fatalf("close: %d %s", code, doc)
			}
			if rep := e.verify(doc); !rep.Valid {
				t.Fatalf("VPEC: %s", rep.Verdict)
			}
		})
	}
	_ = time.Second
}
