package server

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// Errors of lineage tokens, matchable with errors.Is.
var (
	ErrLineageForged   = errors.New("lineage token signature does not verify")
	ErrLineageExpired  = errors.New("lineage token expired")
	ErrLineageMismatch = errors.New("lineage token does not match the run")
)

// SignLineage returns the token "<base64url payload>.<base64url signature>".
func SignLineage(l api.Lineage, signer *signing.Signer) (string, error) {
	l.Type, l.KeyID = api.LineageType, signer.KeyID()
	payload, err := canonical.Marshal(l)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	sig, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("sign lineage: %w", err)
	}
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(sig), nil
}

// ParseLineage checks a token's signature against the trust bundle and its
// expiry at now, and returns its payload.
func ParseLineage(token string, trust *signing.Bundle, now time.Time) (*api.Lineage, error) {
	p64, s64, ok := strings.Cut(token, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p64)
	sig, err2 := enc.DecodeString(s64)
	// One spelling per token: base64url without padding, re-encoding to
	// the same text (no stray trailing bits, no CR/LF).
	if !ok || err1 != nil || err2 != nil || enc.EncodeToString(payload) != p64 || enc.EncodeToString(sig) != s64 {
		return nil, fmt.Errorf("%w: not <payload>.<signature> in base64url", ErrLineageForged)
	}
	var l api.Lineage
	tree, err := document.Parse(payload, &l)
	if err != nil || l.Type != api.LineageType || string(tree.Canonical()) != string(payload) {
		return nil, fmt.Errorf("%w: payload is not a canonical %s document", ErrLineageForged, api.LineageType)
	}
	if err := trust.Verify(l.KeyID, payload, signing.FormatSignature(sig)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLineageForged, err)
	}
	exp, err := time.Parse(time.RFC3339Nano, l.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("%w: expires_at %q", ErrLineageForged, l.ExpiresAt)
	}
	if !now.Before(exp) {
		return nil, fmt.Errorf("%w at %s", ErrLineageExpired, l.ExpiresAt)
	}
	return &l, nil
}

func (s *Server) delegate(w http.ResponseWriter, r *http.Request) {
	run, err := s.openRunOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var req api.DelegationRequest
	tree, err := s.decode(r, &req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	view := s.runView(r, run)
	now := s.cfg.Now().UTC()
	l := api.Lineage{
		RunID: run.ID, OrgID: run.OrgID, LastSequence: view.LastSequence, LastChainHash: view.LastChainHash,
		DelegationHash: commitment.String(tree.Get("delegation").Canonical()),
		IssuedAt:       vpec.FormatTime(now), ExpiresAt: vpec.FormatTime(now.Add(s.cfg.LineageTTL)),
	}
	tok, err := SignLineage(l, s.cfg.Signer)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, api.DelegationResult{LineageToken: tok, RunID: run.ID, LastSequence: l.LastSequence,
		LastChainHash: l.LastChainHash, DelegationHash: l.DelegationHash, ExpiresAt: l.ExpiresAt})
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	var req api.ResumeRequest
	if _, err := s.decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	bad := func(err error) {
		s.fail(w, r, &httpError{http.StatusUnprocessableEntity, api.CodeTokenInvalid, err.Error(), "lineage_token"})
	}
	l, err := ParseLineage(req.LineageToken, s.cfg.Trust, s.cfg.Now())
	if err != nil {
		bad(err)
		return
	}
	if l.OrgID != caller(r).OrgID {
		bad(fmt.Errorf("%w: issued to another organisation", ErrLineageMismatch))
		return
	}
	run, err := s.runFor(r, l.RunID) // the caller's organisation is l.OrgID; refuses another environment's run
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if run.Sealed {
		s.fail(w, r, store.ErrSealed)
		return
	}
	view := s.runView(r, run)
	if view.LastSequence != l.LastSequence || view.LastChainHash != l.LastChainHash {
		bad(fmt.Errorf("%w: the token binds sequence %d, the run is at sequence %d", ErrLineageMismatch, l.LastSequence, view.LastSequence))
		return
	}
	writeJSON(w, http.StatusOK, view)
}
