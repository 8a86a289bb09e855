package verify

import (
	"errors"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckReviews: every witnessed review (reviewer signature, open and close
// timestamps, minimum duration) and check session (open and close
// timestamps) is valid.
const CheckReviews CheckName = "reviews"

// ErrReviewTooShort: a witnessed review closed before its minimum duration.
var ErrReviewTooShort = errors.New("review too short")

func (s *state) reviews() Check { return s.reviewed().check }

func (s *state) sessionTimes() []sessionTimes { return s.reviewed().times }

// reviewed runs the reviews check once: the time check needs the verified
// session times before the reviews check is reported.
func (s *state) reviewed() *sessionResults {
	if s.sessions == nil {
		c, times := checkReviews(&s.doc.VPEC, s.opts.Trust)
		s.sessions = &sessionResults{check: c, times: times}
	}
	return s.sessions
}

// sessionResults is the reviews check and the verified session times it
// found.
type sessionResults struct {
	check Check
	times []sessionTimes
}

// checkReviews verifies every witnessed review and check session of v
// against trust's TSA roots, and returns the check and the verified times
// of each session whose open token verified.
func checkReviews(v *vpec.VPEC, trust *signing.Bundle) (c Check, times []sessionTimes) {
	c = Check{Name: CheckReviews}
	reviews, sessions := 0, 0
	for i := range v.Records {
		r := &v.Records[i]
		var err error
		var st sessionTimes
		switch {
		case r.Review != nil:
			reviews++
			st, err = reviewTimes(v.RunID, r, trust)
		case r.CheckSession != nil:
			sessions++
			st, err = checkSessionTimes(r, trust)
		default:
			continue
		}
		if !st.open.IsZero() {
			st.index = i
			times = append(times, st)
		}
		if err != nil {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s): %v", r.Sequence, r.Check, err))
		}
	}
	if reviews+sessions == 0 {
		c.Status, c.Message = NotApplicable, "witnessed reviews: none present"
		return c, times
	}
	if len(c.Details) > 0 {
		return fail(c, "REVIEW INVALID", "witnessed review or check session invalid: "+c.Details[0], trust == nil || len(trust.Roots()) == 0), times
	}
	c.Status = Pass
	c.Message = fmt.Sprintf("%d witnessed review(s) valid (reviewer signature, open and close timestamps, minimum duration)", reviews)
	if sessions > 0 {
		c.Message = fmt.Sprintf("%d witnessed review(s) and %d check session(s) valid (signatures and open and close timestamps)", reviews, sessions)
	}
	return c, times
}

// CheckSession checks the open and close timestamps of a record's check
// session against the trust bundle's TSA roots (the service checks each
// record it receives with it).
func CheckSession(r *vpec.Record, trust *signing.Bundle) error {
	if r.CheckSession == nil {
		return fmt.Errorf("record has no check_session block")
	}
	return verifyCheckSession(r, trust)
}

func verifyCheckSession(r *vpec.Record, trust *signing.Bundle) error {
	_, err := checkSessionTimes(r, trust)
	return err
}

// sessionTimes are the verified genTimes of one record's session tokens
// (open is zero when the open token did not verify, close when the close
// token did not).
type sessionTimes struct {
	index       int // records[index]
	open, close time.Time
}

func checkSessionTimes(r *vpec.Record, trust *signing.Bundle) (st sessionTimes, err error) {
	cs := r.CheckSession
	if trust == nil || len(trust.Roots()) == 0 {
		return st, fmt.Errorf("check session timestamps not checked: the trust bundle holds no timestamp authority root")
	}
	if st.open, err = verifyTST(cs.CheckOpenTST, vpec.CheckOpenData(cs.SessionID), trust); err != nil {
		return st, fmt.Errorf("check_session.check_open_tst: %w", err)
	}
	if st.close, err = verifyTST(cs.CheckCloseTST, vpec.CheckCloseData(cs.SessionID, r.CommitmentHash), trust); err != nil {
		return st, fmt.Errorf("check_session.check_close_tst: %w", err)
	}
	if st.close.Before(st.open) {
		return st, fmt.Errorf("the check session closed before it opened")
	}
	return st, nil
}

// Review checks the witnessed-review evidence of a record of run runID:
// the reviewer's Ed25519 signature over the review statement, both RFC
// 3161 timestamps against the trust bundle's TSA roots, and that the
// review lasted at least its minimum duration (the service checks each
// record it receives with it). A review that closed too early matches
// ErrReviewTooShort.
func Review(runID string, r *vpec.Record, trust *signing.Bundle) error {
	if r.Review == nil {
		return fmt.Errorf("record has no review block")
	}
	_, err := reviewTimes(runID, r, trust)
	return err
}

func reviewTimes(runID string, r *vpec.Record, trust *signing.Bundle) (st sessionTimes, err error) {
	rv := r.Review
	der, err := signing.DecodeBase64(rv.ReviewerPublicKey)
	if err != nil {
		return st, fmt.Errorf("reviewer_public_key is not base64 SPKI DER")
	}
	pub, err := signing.ParsePublicKeyDER(der)
	if err != nil {
		return st, fmt.Errorf("reviewer_public_key: %w", err)
	}
	if id := signing.KeyID(pub); id != rv.ReviewerKeyID {
		return st, fmt.Errorf("reviewer_key_id %s does not match the reviewer public key (id %s)", rv.ReviewerKeyID, id)
	}
	sig, err := signing.ParseSignature(rv.ReviewerSignature)
	if err != nil {
		return st, fmt.Errorf("reviewer_signature: %w", err)
	}
	msg, err := vpec.ReviewStatement(runID, r)
	if err != nil {
		return st, err
	}
	if err := signing.Verify(pub, msg, sig); err != nil {
		return st, fmt.Errorf("reviewer signature: %w", err)
	}
	if trust == nil || len(trust.Roots()) == 0 {
		return st, fmt.Errorf("review timestamps not checked: the trust bundle holds no timestamp authority root")
	}
	if st.open, err = verifyTST(rv.CheckOpenTST, vpec.CheckOpenData(rv.SessionID), trust); err != nil {
		return st, fmt.Errorf("check_open_tst: %w", err)
	}
	if st.close, err = verifyTST(rv.CheckCloseTST, vpec.CheckCloseData(rv.SessionID, r.CommitmentHash), trust); err != nil {
		return st, fmt.Errorf("check_close_tst: %w", err)
	}
	if !LastedAtLeast(st.open, st.close, rv.MinDurationSeconds) {
		return st, fmt.Errorf("%w: review lasted %s, less than its minimum of %ds", ErrReviewTooShort, st.close.Sub(st.open).Round(time.Millisecond), rv.MinDurationSeconds)
	}
	return st, nil
}

// LastedAtLeast reports whether closed is at least seconds seconds after
// open, exactly: to the nanosecond, and for every int64 seconds (a review's
// min_duration_seconds may be up to 2^40, whose nanoseconds no int64
// holds: time.Duration(seconds)*time.Second would wrap around). Exact for
// any two times of years 0 to 9999, which is every time a document or a
// time-stamp token can state.
func LastedAtLeast(open, closed time.Time, seconds int64) bool {
	s := closed.Unix() - open.Unix()
	if closed.Nanosecond() < open.Nanosecond() {
		s-- // the fraction borrows one second: s whole seconds and less than one more
	}
	return s >= seconds
}

func verifyTST(b64 string, data []byte, trust *signing.Bundle) (time.Time, error) {
	der, err := signing.DecodeBase64(b64)
	if err != nil {
		return time.Time{}, err
	}
	info, err := timestamp.VerifyData(der, data, timestamp.VerifyOptions{Roots: trust.Roots()})
	if err != nil {
		return time.Time{}, err
	}
	return info.GenTime, nil
}
