package verify_test

import (
	"context"
	"crypto/x509"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// review makes rec a witnessed review signed by a fresh reviewer key, its
// open and close tokens stamped at the given offsets from the clock's
// current time, with minimum duration minSeconds.
func review(t *testing.T, f *fixture, clk *testClock, rec *vpec.Record, open, close time.Duration, minSeconds int64) {
	t.Helper()
	base := clk.now()
	defer clk.set(base)
	pub, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	reviewer, _ := signing.NewSigner(priv)
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	rec.ProofLevel = vpec.Witnessed
	rec.Review = &vpec.Review{SessionID: names.NewID("chk_"), ReviewerKeyID: reviewer.KeyID(), ReviewerPublicKey: b64(spki),
		MinDurationSeconds: minSeconds}
	stmt, err := vpec.ReviewStatement("run_rules", rec)
	if err != nil {
		t.Fatal(err)
	}
	rec.Review.ReviewerSignature = signing.FormatSignature(mustSig(reviewer.Sign(stmt)))
	stamp := func(at time.Duration, digest []byte) string {
		clk.set(base.Add(at))
		tok, err := f.tsa.Timestamp(context.Background(), digest)
		if err != nil {
			t.Fatal(err)
		}
		return b64(tok)
	}
	rec.Review.CheckOpenTST = stamp(open, issue.CheckOpenImprint(rec.Review.SessionID))
	rec.Review.CheckCloseTST = stamp(close, issue.CheckCloseImprint(rec.Review.SessionID, rec.CommitmentHash))
}

// TestReviewMinimumDuration: a review that lasted 35 s meets a minimum of
// 35 s and no larger one, up to the documented maximum 2^40. Found: from
// 9,223,372,037 s (the first whole number of seconds whose nanoseconds
// overflow int64) the comparison wrapped around and such reviews, and one
// at 2^40, verified VALID.
func TestReviewMinimumDuration(t *testing.T) {
	f, clk := clockFixture(t)
	for _, tc := range []struct {
		min   int64
		valid bool
	}{
		{0, true}, {34, true}, {35, true}, {36, false},
		{math.MaxInt64 / int64(time.Second), false}, // 9,223,372,036: the last that fits
		{math.MaxInt64/int64(time.Second) + 1, false},
		{1<<33 + 1, false},
		{1<<40 - 1, false}, {1 << 40, false},
	} {
		recs := records(1, vpec.Execution)
		recs[0].RecordedAt = vpec.FormatTime(clk.now().Add(-time.Minute))
		review(t, f, clk, &recs[0], -2*time.Minute, -2*time.Minute+35*time.Second, tc.min)
		r := verifyDoc(t, f.sealAt(t, clk, recs, nil), verify.Options{Trust: f.trust})
		c := r.Check(verify.CheckReviews)
		if r.Valid != tc.valid || (!tc.valid && (c.Status != verify.Fail || c.Code != "REVIEW INVALID")) {
			t.Errorf("lasted 35 s, min_duration_seconds %d: verdict %s, reviews %s %q; want valid=%v", tc.min, r.Verdict, c.Status, c.Message, tc.valid)
		}
	}
}

// TestLastedAtLeast compares LastedAtLeast with big-integer arithmetic on
// nanoseconds: fractions, a borrow, negative spans, every int64 edge and
// spans longer than time.Duration holds (292 years).
func TestLastedAtLeast(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 15, 36, 999_999_950, time.UTC)
	spans := []struct {
		s, ns int64
	}{{0, 0}, {35, 0}, {34, 999_999_900}, {35, 100}, {-1, 0}, {0, -100}, {9223372036, 854775807}, {9223372037, 0},
		{1 << 40, 0}, {1<<40 - 1, 999_999_999}, {300 * 365 * 86400, 0}, {-300 * 365 * 86400, 0}}
	mins := []int64{0, 1, 34, 35, 36, -1, 9223372036, 9223372037, 1<<40 - 1, 1 << 40, 1<<40 + 1, 1<<53 - 1, math.MaxInt64, math.MinInt64,
		300 * 365 * 86400, 300*365*86400 + 1}
	billion := big.NewInt(1e9)
	for _, sp := range spans {
		closed := t0.Add(time.Duration(sp.ns))
		closed = time.Unix(closed.Unix()+sp.s, int64(closed.Nanosecond())).UTC()
		lasted := new(big.Int).Mul(big.NewInt(closed.Unix()-t0.Unix()), billion)
		lasted.Add(lasted, big.NewInt(int64(closed.Nanosecond()-t0.Nanosecond())))
		for _, m := range mins {
			want := lasted.Cmp(new(big.Int).Mul(big.NewInt(m), billion)) >= 0
			if got := verify.LastedAtLeast(t0, closed, m); got != want {
				t.Errorf("%s to %s (%s ns) at least %d s: %v, want %v", t0.Format(time.RFC3339Nano), closed.Format(time.RFC3339Nano), lasted, m, got, want)
			}
		}
	}
}
