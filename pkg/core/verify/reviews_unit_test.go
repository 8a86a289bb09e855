package verify

import (
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestCheckReviews: witnessed.json holds a check session (sequence 1) and
// a witnessed review (sequence 3) with a 10 s minimum.
func TestCheckReviews(t *testing.T) {
	trust := vectorTrust(t)
	cases := []struct {
		name     string
		edit     func(v *vpec.VPEC)
		trust    *signing.Bundle
		want     want
		sessions int // sessions whose open token verified
	}{
		{"valid", nil, trust, want{Pass, "", false, "1 witnessed review(s) and 1 check session(s) valid"}, 2},
		{"no reviews", func(v *vpec.VPEC) { v.Records[0].CheckSession, v.Records[2].Review = nil, nil }, trust,
			want{NotApplicable, "", false, "witnessed reviews: none present"}, 0},
		{"no TSA root", nil, keysOnly(t), want{Fail, "REVIEW INVALID", true, "check session timestamps not checked: the trust bundle holds no timestamp authority root"}, 0},
		{"the reviewed record changed", func(v *vpec.VPEC) { v.Records[2].CheckResult = vpec.ResultFail }, trust,
			want{Fail, "REVIEW INVALID", false, "): reviewer signature: "}, 1},
		{"a longer minimum", func(v *vpec.VPEC) { v.Records[2].Review.MinDurationSeconds = 1 << 40 }, trust,
			want{Fail, "REVIEW INVALID", false, "review too short: review lasted"}, 2},
		{"a session's close token over another input", func(v *vpec.VPEC) { v.Records[0].CommitmentHash = commitment.String([]byte("other")) }, trust,
			want{Fail, "REVIEW INVALID", false, "): check_session.check_close_tst: "}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := vector(t, "vpec/valid/witnessed.json")
			v := &d.VPEC
			if c.edit != nil {
				c.edit(v)
			}
			got, sessions := checkReviews(v, c.trust)
			c.want.check(t, CheckReviews, got)
			if len(sessions) != c.sessions {
				t.Errorf("%d sessions with verified times, want %d", len(sessions), c.sessions)
			}
		})
	}
	d := vector(t, "vpec/valid/witnessed.json")
	d.VPEC.Records[2].Review.MinDurationSeconds = 1 << 40
	if err := Review(d.VPEC.RunID, &d.VPEC.Records[2], trust); !errors.Is(err, ErrReviewTooShort) {
		t.Errorf("Review of a too short review: %v, want ErrReviewTooShort", err)
	}
	if err := CheckSession(&d.VPEC.Records[0], trust); err != nil {
		t.Errorf("CheckSession: %v", err)
	}
}
