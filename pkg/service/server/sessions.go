package server

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// maxSessionSeconds is the longest min_duration_seconds a session may ask
// for: one week.
const maxSessionSeconds = 7 * 24 * 3600

func sessionView(s store.Session) api.SessionView {
	v := api.SessionView{SessionID: s.ID, RunID: s.RunID, Kind: s.Kind, Check: s.Check, ManifestID: s.ManifestID,
		ReviewerKeyID: s.ReviewerKeyID, MinDurationSeconds: s.MinDurationSeconds, OpenedAt: vpec.FormatTime(s.OpenedAt),
		CheckOpenTST: base64.StdEncoding.EncodeToString(s.OpenTST)}
	if !s.ClosedAt.IsZero() {
		v.ClosedAt, v.CommitmentHash = vpec.FormatTime(s.ClosedAt), s.CommitmentHash
		v.CheckCloseTST = base64.StdEncoding.EncodeToString(s.CloseTST)
	}
	return v
}

// parseSPKI reads a public key given as PEM or base64 DER.
func parseSPKI(s string) ([]byte, error) {
	if block, _ := pem.Decode([]byte(s)); block != nil {
		if block.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("PEM block is %q, want PUBLIC KEY", block.Type)
		}
		return block.Bytes, nil
	}
	return signing.DecodeBase64(s)
}

func (s *Server) registerReviewer(w http.ResponseWriter, r *http.Request) {
	var req api.ReviewerKeyRequest
	if _, err := s.decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	der, err := parseSPKI(req.PublicKey)
	if err != nil {
		s.fail(w, r, badRequest("public_key", "public_key must be an Ed25519 SPKI public key as PEM or base64 DER: %v", err))
		return
	}
	pub, err := signing.ParsePublicKeyDER(der)
	if err != nil {
		s.fail(w, r, badRequest("public_key", "public_key: %v", err))
		return
	}
	k := store.ReviewerKey{OrgID: caller(r).OrgID, KeyID: signing.KeyID(pub), PublicKey: der, Name: req.Name, CreatedAt: s.cfg.Now().UTC()}
	err = s.cfg.Storage.Orgs.CreateReviewerKey(r.Context(), k)
	created := err == nil
	if errors.Is(err, store.ErrExists) {
		err = nil
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, api.ReviewerKeyResult{ReviewerKeyID: k.KeyID, Name: req.Name, Created: created})
}

func (s *Server) openSession(w http.ResponseWriter, r *http.Request) {
	run, err := s.openRunFor(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req api.SessionRequest
	if _, err := s.decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	switch {
	case req.Kind != api.SessionCheck && req.Kind != api.SessionReview:
		s.fail(w, r, badRequest("kind", "kind must be %q or %q", api.SessionCheck, api.SessionReview))
		return
	case req.Check == "" || len(req.Check) > api.MaxCheckBytes:
		s.fail(w, r, badRequest("check", "check must be 1-%d characters", api.MaxCheckBytes))
		return
	case req.ManifestID == "" || len(req.ManifestID) > api.MaxManifestIDBytes:
		s.fail(w, r, badRequest("manifest_id", "manifest_id must be 1-%d characters", api.MaxManifestIDBytes))
		return
	case req.MinDurationSeconds < 0 || req.MinDurationSeconds > maxSessionSeconds:
		s.fail(w, r, badRequest("min_duration_seconds", "min_duration_seconds must be between 0 and one week"))
		return
	}
	if req.Kind == api.SessionReview {
		if _, err := s.cfg.Storage.Orgs.ReviewerKey(r.Context(), run.OrgID, req.ReviewerKeyID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				s.fail(w, r, &httpError{http.StatusUnprocessableEntity, api.CodeInvalidSignature,
					fmt.Sprintf("reviewer key %q is not registered for this organisation: POST it to /api/v1/reviewers first", req.ReviewerKeyID), "reviewer_key_id"})
				return
			}
			s.fail(w, r, err)
			return
		}
	} else if req.ReviewerKeyID != "" {
		s.fail(w, r, badRequest("reviewer_key_id", "reviewer_key_id goes with kind review only"))
		return
	}
	id := names.NewID("chk_")
	tok, err := s.cfg.Timestamper.Timestamp(r.Context(), issue.CheckOpenImprint(id))
	if err != nil {
		s.fail(w, r, timestampFailed(r, "check-open timestamp", "", err))
		return
	}
	sess := store.Session{ID: id, OrgID: run.OrgID, RunID: run.ID, Kind: req.Kind, Check: req.Check, ManifestID: req.ManifestID,
		ReviewerKeyID: req.ReviewerKeyID, MinDurationSeconds: req.MinDurationSeconds, OpenedAt: s.cfg.Now().UTC().Truncate(time.Microsecond), OpenTST: tok}
	if err := s.cfg.Storage.Sessions.CreateSession(r.Context(), sess); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, sessionView(sess))
}

func (s *Server) closeSession(w http.ResponseWriter, r *http.Request) {
	run, err := s.openRunFor(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req api.SessionCloseRequest
	if _, err := s.decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := commitment.Validate(req.CommitmentHash); err != nil {
		s.fail(w, r, badRequest("commitment_hash", "commitment_hash: %v", err))
		return
	}
	sess, err := s.cfg.Storage.Sessions.Session(r.Context(), run.OrgID, r.PathValue("session_id"))
	if err != nil || sess.RunID != run.ID {
		s.fail(w, r, store.ErrNotFound)
		return
	}
	if !sess.ClosedAt.IsZero() {
		if sess.CommitmentHash != req.CommitmentHash {
			s.fail(w, r, &httpError{http.StatusConflict, api.CodeSequenceConflict, "the session was already closed on another input", "commitment_hash"})
			return
		}
		writeJSON(w, http.StatusOK, sessionView(sess))
		return
	}
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	// Compared in whole seconds and nanoseconds (verify.LastedAtLeast), never
	// as time.Duration(seconds)*time.Second, which wraps around above
	// 9,223,372,036 s (open refuses more than a week; the store is not
	// trusted to have kept that).
	if !verify.LastedAtLeast(sess.OpenedAt, now, sess.MinDurationSeconds) {
		after := time.Unix(sess.OpenedAt.Unix()+min(sess.MinDurationSeconds, maxSessionSeconds), int64(sess.OpenedAt.Nanosecond()))
		s.fail(w, r, &httpError{http.StatusUnprocessableEntity, api.CodeReviewTooShort,
			fmt.Sprintf("the session has been open %s; its minimum duration is %ds: close it after %s", now.Sub(sess.OpenedAt).Round(time.Millisecond), sess.MinDurationSeconds, vpec.FormatTime(after)), ""})
		return
	}
	tok, err := s.cfg.Timestamper.Timestamp(r.Context(), issue.CheckCloseImprint(sess.ID, req.CommitmentHash))
	if err != nil {
		s.fail(w, r, timestampFailed(r, "check-close timestamp", "", err))
		return
	}
	if err := s.cfg.Storage.Sessions.CloseSession(r.Context(), run.OrgID, sess.ID, now, req.CommitmentHash, tok); err != nil {
		if errors.Is(err, store.ErrConflict) {
			s.fail(w, r, &httpError{http.StatusConflict, api.CodeSequenceConflict, "the session was already closed on another input", "commitment_hash"})
			return
		}
		s.fail(w, r, err)
		return
	}
	sess, err = s.cfg.Storage.Sessions.Session(r.Context(), run.OrgID, sess.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sessionView(sess))
}

// checkReviewSession ties a witnessed record to the review session the
// service opened and closed: same run, reviewer, input and timestamps, and
// a reviewer key registered by the organisation. It returns the session for
// claimSession, which the caller makes once every check has passed.
func (s *Server) checkReviewSession(r *http.Request, run store.Run, rec *vpec.Record) (store.Session, error) {
	rv := rec.Review
	reject := func(format string, a ...any) error {
		return &httpError{http.StatusUnprocessableEntity, api.CodeInvalidSignature, "witnessed review rejected: " + fmt.Sprintf(format, a...), "review"}
	}
	sess, err := s.cfg.Storage.Sessions.Session(r.Context(), run.OrgID, rv.SessionID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (sess.RunID != run.ID || sess.Kind != api.SessionReview)) {
		return store.Session{}, reject("review.session_id %q is not a review session of this run: open one with POST /api/v1/runs/%s/sessions", rv.SessionID, run.ID)
	}
	if err != nil {
		return store.Session{}, err
	}
	if sess.ClosedAt.IsZero() {
		return store.Session{}, reject("the review session is still open: close it on the input first (POST .../sessions/%s/close)", sess.ID)
	}
	key, err := s.cfg.Storage.Orgs.ReviewerKey(r.Context(), run.OrgID, sess.ReviewerKeyID)
	if err != nil {
		return store.Session{}, reject("reviewer key %s is not registered", sess.ReviewerKeyID)
	}
	pub, err := signing.DecodeBase64(rv.ReviewerPublicKey)
	switch {
	case err != nil || !bytes.Equal(pub, key.PublicKey) || rv.ReviewerKeyID != sess.ReviewerKeyID:
		return store.Session{}, reject("the reviewer key is not the one the session was opened for (%s)", sess.ReviewerKeyID)
	case sess.CommitmentHash != rec.CommitmentHash:
		return store.Session{}, reject("the session was closed on another input than this record's commitment_hash")
	case rv.CheckOpenTST != base64.StdEncoding.EncodeToString(sess.OpenTST) || rv.CheckCloseTST != base64.StdEncoding.EncodeToString(sess.CloseTST):
		return store.Session{}, reject("check_open_tst and check_close_tst must be the session's timestamps")
	case rv.MinDurationSeconds != sess.MinDurationSeconds:
		return store.Session{}, reject("min_duration_seconds must be the session's (%d)", sess.MinDurationSeconds)
	case rec.Check != sess.Check || rec.ManifestID != sess.ManifestID:
		return store.Session{}, reject("check and manifest_id must be the session's (%s, %s)", sess.Check, sess.ManifestID)
	}
	return sess, nil
}

// checkCheckSession ties a record's check_session block to the check
// session the service opened and closed on the record's input. It returns
// the session for claimSession, as checkReviewSession does.
func (s *Server) checkCheckSession(r *http.Request, run store.Run, rec *vpec.Record) (store.Session, error) {
	cs := rec.CheckSession
	reject := func(format string, a ...any) error {
		return &httpError{http.StatusUnprocessableEntity, api.CodeInvalidSignature, "check session rejected: " + fmt.Sprintf(format, a...), "check_session"}
	}
	sess, err := s.cfg.Storage.Sessions.Session(r.Context(), run.OrgID, cs.SessionID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (sess.RunID != run.ID || sess.Kind != api.SessionCheck)) {
		return store.Session{}, reject("check_session.session_id %q is not a check session of this run", cs.SessionID)
	}
	if err != nil {
		return store.Session{}, err
	}
	switch {
	case sess.ClosedAt.IsZero():
		return store.Session{}, reject("the session is still open: close it on the input first (POST .../sessions/%s/close)", sess.ID)
	case sess.CommitmentHash != rec.CommitmentHash:
		return store.Session{}, reject("the session was closed on another input than this record's commitment_hash")
	case cs.CheckOpenTST != base64.StdEncoding.EncodeToString(sess.OpenTST) || cs.CheckCloseTST != base64.StdEncoding.EncodeToString(sess.CloseTST):
		return store.Session{}, reject("check_open_tst and check_close_tst must be the session's timestamps")
	case rec.Check != sess.Check || rec.ManifestID != sess.ManifestID:
		return store.Session{}, reject("check and manifest_id must be the session's (%s, %s)", sess.Check, sess.ManifestID)
	}
	return sess, nil
}

// claimSession binds a session to the one record it backs (store
// ClaimSession, atomic across processes): the record that first presents
// it keeps it, and a retry of that record (same record_id) passes; any
// other record gets 409 session_used naming field (review or
// check_session). checkRecord claims once every other check of the record
// has passed (signatures, evidence, chain): only a record the store then
// refuses (a conflicting sequence, a sealed run) keeps a session it does not
// use, and its retry must keep its record_id.
func (s *Server) claimSession(r *http.Request, run store.Run, sess store.Session, recordID, field string) error {
	used := func(holder string) error {
		return &httpError{http.StatusConflict, api.CodeSessionUsed,
			fmt.Sprintf("%s session %s already backs %s: a session backs one record; open a new session for this one", sess.Kind, sess.ID, holder), field}
	}
	switch sess.RecordID {
	case recordID:
		return nil
	case "":
	default:
		return used("record " + sess.RecordID)
	}
	err := s.cfg.Storage.Sessions.ClaimSession(r.Context(), run.OrgID, sess.ID, recordID)
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	holder := "another record"
	if cur, gerr := s.cfg.Storage.Sessions.Session(r.Context(), run.OrgID, sess.ID); gerr == nil && cur.RecordID != "" {
		holder = "record " + cur.RecordID
	}
	return used(holder)
}
