package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
)

// Session is a check or review session the service opened (docs/API.md,
// sessions): its RFC 3161 open timestamp and, once closed on the input,
// its close timestamp. It is the API's wire type, api.SessionView.
type Session = api.SessionView

// OpenCheck opens a check session: the service timestamps when the check
// opened. Pass it to Record with WithCheckSession. It needs the service
// (queued entries of the run are delivered first).
func (r *Run) OpenCheck(ctx context.Context, check, manifestID string) (*Session, error) {
	return r.openSession(ctx, api.SessionRequest{Kind: api.SessionCheck, Check: check, ManifestID: manifestID})
}

// OpenReview opens a human review session for the registered reviewer key
// (RegisterReviewer) with a minimum duration (whole seconds, rounded up)
// that the service enforces when the session closes. Pass it to Record
// with WithReview. It needs the service.
func (r *Run) OpenReview(ctx context.Context, check, manifestID, reviewerKeyID string, minDuration time.Duration) (*Session, error) {
	secs := int64((minDuration + time.Second - 1) / time.Second)
	return r.openSession(ctx, api.SessionRequest{Kind: api.SessionReview, Check: check, ManifestID: manifestID, ReviewerKeyID: reviewerKeyID, MinDurationSeconds: max(secs, 0)})
}

func (r *Run) openSession(ctx context.Context, req api.SessionRequest) (*Session, error) {
	p := r.p
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	if r.Sealed() {
		return nil, fmt.Errorf("svc client: open %s session on run %s: %w", req.Kind, r.id, ErrRunSealed)
	}
	if err := p.flushFor(ctx, r.id); err != nil {
		return nil, fmt.Errorf("svc client: open %s session: %w", req.Kind, err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs/"+url.PathEscape(r.id)+"/sessions", body)
	if err != nil {
		p.noteFailure(err)
		return nil, fmt.Errorf("svc client: open %s session: %w", req.Kind, err)
	}
	var s Session
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("svc client: open %s session: answer: %w", req.Kind, err)
	}
	return &s, nil
}

// CloseSession closes a session on the input the check ran on (or the
// reviewer saw): only the input's commitment hash is sent, and the service
// timestamps the close. A review session closes only after its minimum
// duration (an *APIError with code review_too_short before). Closing again
// on the same input is harmless.
func (r *Run) CloseSession(ctx context.Context, s *Session, input []byte) error {
	p := r.p
	if err := p.enter(); err != nil {
		return err
	}
	defer p.exit()
	h := commitment.String(input)
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	return r.closeSession(ctx, s, h)
}

func (r *Run) closeSession(ctx context.Context, s *Session, commitmentHash string) error {
	if s == nil || s.SessionID == "" {
		return fmt.Errorf("%w: no session", ErrInvalidRecord)
	}
	body, err := json.Marshal(api.SessionCloseRequest{CommitmentHash: commitmentHash})
	if err != nil {
		return err
	}
	data, _, err := r.p.call(ctx, http.MethodPost, "/api/v1/runs/"+url.PathEscape(r.id)+"/sessions/"+url.PathEscape(s.SessionID)+"/close", body)
	if err != nil {
		r.p.noteFailure(err)
		return fmt.Errorf("svc client: close session %s: %w", s.SessionID, err)
	}
	var out Session
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("svc client: close session %s: answer: %w", s.SessionID, err)
	}
	*s = out
	return nil
}

// readySession checks a session for a record and closes it on the input
// if it is still open.
func (r *Run) readySession(ctx context.Context, s *Session, kind, check, manifestID, inputHash string) error {
	switch {
	case s == nil:
		return fmt.Errorf("%w: no %s session", ErrInvalidRecord, kind)
	case s.Kind != kind:
		return fmt.Errorf("%w: session %s is a %s session, want a %s session", ErrInvalidRecord, s.SessionID, s.Kind, kind)
	case s.RunID != r.id:
		return fmt.Errorf("%w: session %s belongs to run %s, not %s", ErrInvalidRecord, s.SessionID, s.RunID, r.id)
	case s.Check != check || s.ManifestID != manifestID:
		return fmt.Errorf("%w: session %s was opened for check %s (manifest %s)", ErrInvalidRecord, s.SessionID, s.Check, s.ManifestID)
	}
	if !s.Closed() {
		if r.p.down.Load() {
			return fmt.Errorf("svc client: close session %s on the record's input: %w", s.SessionID, ErrUnavailable)
		}
		if err := r.closeSession(ctx, s, inputHash); err != nil {
			return err
		}
	}
	if s.CommitmentHash != inputHash {
		return fmt.Errorf("%w: session %s was closed on another input than this record's", ErrInvalidRecord, s.SessionID)
	}
	return nil
}
