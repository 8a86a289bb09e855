package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunSessions tests the check and review sessions role
// (store.SessionStore), sessions racing each other and the seal of their
// run.
func RunSessions(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"Sessions", testSessions},
		{"CloseSession", testCloseSession},
		{"ConcurrentCloseSession", testConcurrentCloseSession},
		{"ConcurrentSessionsAndSeal", testConcurrentSessionsAndSeal},
		{"OrgIsolationSessions", testOrgIsolationSessions},
		{"ClaimSession", testClaimSession},
	})
}

func sessionEqual(a, b store.Session) bool {
	return a.ID == b.ID && a.OrgID == b.OrgID && a.RunID == b.RunID && a.Kind == b.Kind && a.Check == b.Check &&
		a.ManifestID == b.ManifestID && a.ReviewerKeyID == b.ReviewerKeyID && a.MinDurationSeconds == b.MinDurationSeconds &&
		utcEqual(a.OpenedAt, b.OpenedAt) && bytes.Equal(a.OpenTST, b.OpenTST) && utcEqual(a.ClosedAt, b.ClosedAt) &&
		a.CommitmentHash == b.CommitmentHash && bytes.Equal(a.CloseTST, b.CloseTST)
}

// newSession returns an open check session of run.
func newSession(f fixture, id string) store.Session {
	return store.Session{
		ID: id, OrgID: f.org.ID, RunID: f.run.ID, Kind: "check", Check: "pii-scan", ManifestID: "sha256:" + strings.Repeat("0f", 32),
		MinDurationSeconds: 0, OpenedAt: T0.Add(3 * time.Second), OpenTST: []byte{0x30, 0x82, 0x01, 0x00, 'o', 0},
	}
}

func testSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	sealed := newRun(a.org.ID, a.key.ID, "run_sealed")
	if err := s.CreateRun(ctx, sealed); err != nil {
		t.Fatal(err)
	}
	if err := s.SealRun(ctx, a.org.ID, sealed.ID, store.VPEC{ID: "vpec-sealed", IssuedAt: T0, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	check := newSession(a, "chk_1")
	review := newSession(a, "chk_2")
	review.Kind, review.Check, review.ReviewerKeyID, review.MinDurationSeconds = "review", "human_review", "9c1e4b7a2f301d5e", 30
	closedInput := newSession(a, "chk_3")
	closedInput.ClosedAt, closedInput.CommitmentHash, closedInput.CloseTST = T0.Add(time.Hour), "sha256:x", []byte("tst")
	noTST := newSession(a, "chk_4")
	noTST.OpenTST = nil
	other := func(mod func(*store.Session)) store.Session {
		x := newSession(a, "chk_x")
		mod(&x)
		return x
	}
	creates := []struct {
		name string
		s    store.Session
		want error
	}{
		{"check", check, nil},
		{"review", review, nil},
		{"stored open whatever it says", closedInput, nil},
		{"nil open token", noTST, nil},
		{"id taken", check, store.ErrExists},
		{"id taken by another org", store.Session{ID: check.ID, OrgID: b.org.ID, RunID: b.run.ID, Kind: "check", OpenedAt: T0}, store.ErrExists},
		{"unknown run", other(func(x *store.Session) { x.RunID = "run_nobody" }), store.ErrNotFound},
		{"another org's run", other(func(x *store.Session) { x.RunID = b.run.ID }), store.ErrNotFound},
		{"unknown org", other(func(x *store.Session) { x.OrgID = "org_nobody" }), store.ErrNotFound},
		{"sealed run", other(func(x *store.Session) { x.RunID = sealed.ID }), store.ErrSealed},
	}
	for _, c := range creates {
		wantErr(t, "CreateSession "+c.name, s.CreateSession(ctx, c.s), c.want)
	}
	openClosed := closedInput
	openClosed.ClosedAt, openClosed.CommitmentHash, openClosed.CloseTST = time.Time{}, "", nil
	noTSTWant := noTST
	noTSTWant.OpenTST = []byte{}
	lookups := []struct {
		name, org, id string
		want          *store.Session
	}{
		{"check", a.org.ID, check.ID, &check},
		{"review", a.org.ID, review.ID, &review},
		{"created open", a.org.ID, closedInput.ID, &openClosed},
		{"nil open token reads back empty", a.org.ID, noTST.ID, &noTSTWant},
		{"another org's", b.org.ID, check.ID, nil},
		{"unknown", a.org.ID, "chk_nobody", nil},
		{"refused: sealed run", a.org.ID, "chk_x", nil},
	}
	for _, c := range lookups {
		got, err := s.Session(ctx, c.org, c.id)
		if c.want == nil {
			wantErr(t, "Session "+c.name, err, store.ErrNotFound)
			continue
		}
		if err != nil || !sessionEqual(got, *c.want) {
			t.Errorf("Session %s = %+v, %v; want %+v", c.name, got, err, *c.want)
		}
		if !got.ClosedAt.IsZero() || got.CommitmentHash != "" || len(got.CloseTST) != 0 {
			t.Errorf("Session %s: a new session is not open: %+v", c.name, got)
		}
	}
}

// testCloseSession: the first close stores its values, a retry with the
// same commitment changes nothing, another commitment is ErrConflict, and
// nothing closes once the run is sealed.
func testCloseSession(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	sess := newSession(a, "chk_1")
	open := newSession(a, "chk_open")
	for _, x := range []store.Session{sess, open} {
		if err := s.CreateSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	closedAt, hash, tst := T0.Add(time.Minute+time.Microsecond), "sha256:"+strings.Repeat("1e", 32), []byte{0x30, 0x82, 'c', 0}
	closed := sess
	closed.ClosedAt, closed.CommitmentHash, closed.CloseTST = closedAt, hash, tst
	steps := []struct {
		name    string
		org, id string
		at      time.Time
		hash    string
		tst     []byte
		want    error
		after   store.Session // Session(a, chk_1) afterwards
	}{
		{"unknown session", a.org.ID, "chk_nobody", closedAt, hash, tst, store.ErrNotFound, sess},
		{"another org's session", b.org.ID, sess.ID, closedAt, hash, tst, store.ErrNotFound, sess},
		{"unknown org", "org_nobody", sess.ID, closedAt, hash, tst, store.ErrNotFound, sess},
		{"first close", a.org.ID, sess.ID, closedAt, hash, tst, nil, closed},
		{"retry, same commitment", a.org.ID, sess.ID, closedAt.Add(time.Second), hash, []byte("another token"), nil, closed},
		{"another commitment", a.org.ID, sess.ID, closedAt.Add(time.Second), "sha256:" + strings.Repeat("2f", 32), []byte("x"), store.ErrConflict, closed},
		{"empty commitment", a.org.ID, sess.ID, closedAt, "", tst, store.ErrConflict, closed},
	}
	for _, st := range steps {
		wantErr(t, "CloseSession "+st.name, s.CloseSession(ctx, st.org, st.id, st.at, st.hash, st.tst), st.want)
		if got, err := s.Session(ctx, a.org.ID, sess.ID); err != nil || !sessionEqual(got, st.after) {
			t.Errorf("after CloseSession %s: Session = %+v, %v; want %+v", st.name, got, err, st.after)
		}
	}
	if got, err := s.Session(ctx, a.org.ID, open.ID); err != nil || !sessionEqual(got, open) {
		t.Errorf("closing one session changed another: %+v, %v", got, err)
	}
	// A nil close token is stored (as an empty one): the session reads closed.
	nilTST := newSession(a, "chk_niltst")
	if err := s.CreateSession(ctx, nilTST); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSession(ctx, a.org.ID, nilTST.ID, closedAt, hash, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Session(ctx, a.org.ID, nilTST.ID); err != nil || !got.ClosedAt.Equal(closedAt) || got.CommitmentHash != hash || len(got.CloseTST) != 0 {
		t.Errorf("Session closed with a nil token = %+v, %v; want closed, with no token", got, err)
	}

	if err := s.SealRun(ctx, a.org.ID, a.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	sealedSteps := []struct {
		name string
		id   string
		hash string
		want store.Session
	}{
		{"an open session of a sealed run", open.ID, hash, open},
		{"a retry on a sealed run", sess.ID, hash, closed},
		{"another commitment on a sealed run", sess.ID, "sha256:other", closed},
	}
	for _, st := range sealedSteps {
		wantErr(t, "CloseSession "+st.name, s.CloseSession(ctx, a.org.ID, st.id, closedAt, st.hash, tst), store.ErrSealed)
		if got, err := s.Session(ctx, a.org.ID, st.id); err != nil || !sessionEqual(got, st.want) {
			t.Errorf("after CloseSession %s: Session = %+v, %v; want %+v", st.name, got, err, st.want)
		}
	}
}

// testConcurrentCloseSession: goroutines closing one session at once, each
// on its own commitment: exactly one wins, the others get ErrConflict and
// the stored close is the winner's. Then goroutines sharing a few
// commitments: those with the winner's all succeed.
func testConcurrentCloseSession(t *testing.T, s store.Store) {
	const workers = 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	for round := range 6 {
		distinct := round%2 == 0 // otherwise workers share 3 commitments
		sess := newSession(f, fmt.Sprintf("chk_%d", round))
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		hashOf := func(w int) string {
			if !distinct {
				w %= 3
			}
			return fmt.Sprintf("sha256:%064d", w)
		}
		errs := make([]error, workers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range workers {
			wg.Go(func() {
				<-start
				errs[w] = s.CloseSession(ctx, f.org.ID, sess.ID, T0.Add(time.Duration(w+1)*time.Second), hashOf(w), []byte(hashOf(w)))
			})
		}
		close(start)
		wg.Wait()
		got, err := s.Session(ctx, f.org.ID, sess.ID)
		if err != nil || got.ClosedAt.IsZero() {
			t.Fatalf("round %d: Session = %+v, %v; want it closed", round, got, err)
		}
		won := 0
		for w, err := range errs {
			switch {
			case hashOf(w) == got.CommitmentHash:
				won++
				if err != nil {
					t.Errorf("round %d: CloseSession %d with the stored commitment: %v", round, w, err)
				}
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("round %d: CloseSession %d with another commitment: %v, want ErrConflict", round, w, err)
			}
		}
		if distinct && won != 1 {
			t.Errorf("round %d: %d closes won, want 1", round, won)
		}
		if string(got.CloseTST) != got.CommitmentHash {
			t.Errorf("round %d: stored close token %q is not the winner's (%s)", round, got.CloseTST, got.CommitmentHash)
		}
		var w int
		fmt.Sscanf(got.CommitmentHash, "sha256:%d", &w)
		if distinct && !got.ClosedAt.Equal(T0.Add(time.Duration(w+1)*time.Second)) {
			t.Errorf("round %d: stored close time %v is not the winner's", round, got.ClosedAt)
		}
	}
}

// testConcurrentSessionsAndSeal: sessions created and closed while the run
// is sealed either land before the seal or get ErrSealed; none lands after.
func testConcurrentSessionsAndSeal(t *testing.T, s store.Store) {
	const n, workers = 80, 4
	ctx := context.Background()
	f := seed(t, s, "acme")
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, closed := map[string]bool{}, map[string]bool{}
	sealing := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if i == n/4 {
					close(sealing)
				}
				x := newSession(f, fmt.Sprintf("chk_%d", i))
				err := s.CreateSession(ctx, x)
				if err == nil {
					mu.Lock()
					created[x.ID] = true
					mu.Unlock()
					err = s.CloseSession(ctx, f.org.ID, x.ID, T0, "sha256:c", []byte("t"))
					if err == nil {
						mu.Lock()
						closed[x.ID] = true
						mu.Unlock()
					}
				}
				if err != nil && !errors.Is(err, store.ErrSealed) {
					t.Errorf("session %d: %v", i, err)
				}
			}
		})
	}
	var atSeal []store.Session
	wg.Go(func() {
		<-sealing
		if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
			t.Errorf("SealRun: %v", err)
		}
		for i := range n {
			x, err := s.Session(ctx, f.org.ID, fmt.Sprintf("chk_%d", i))
			if err == nil {
				atSeal = append(atSeal, x)
			} else if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Session: %v", err)
			}
		}
	})
	wg.Wait()
	if len(atSeal) != len(created) {
		t.Errorf("%d sessions when SealRun returned, %d created successfully", len(atSeal), len(created))
	}
	for _, x := range atSeal {
		if !created[x.ID] || closed[x.ID] == x.ClosedAt.IsZero() {
			t.Errorf("session %s: created %v, closed %v; stored as of the seal %+v", x.ID, created[x.ID], closed[x.ID], x)
		}
	}
}

// testOrgIsolationSessions: reviewer keys, sessions and calibration
// requests of one organisation are invisible to, and unchangeable by,
// another, even with the same ids.
func testOrgIsolationSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	for _, f := range []fixture{a, b} {
		if err := s.CreateReviewerKey(ctx, store.ReviewerKey{OrgID: f.org.ID, KeyID: "k1", PublicKey: []byte(f.org.Name), Name: f.org.Name, CreatedAt: T0}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSession(ctx, newSession(f, "chk_"+f.org.Name)); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateCalibrationRequest(ctx, newCal(f.org.ID, "cal_req_"+f.org.Name, "sha256:m", T0)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ me, other fixture }{{a, b}, {b, a}} {
		if k, err := s.ReviewerKey(ctx, c.me.org.ID, "k1"); err != nil || string(k.PublicKey) != c.me.org.Name {
			t.Errorf("ReviewerKey k1 of %s = %+v, %v", c.me.org.Name, k, err)
		}
		otherSession := "chk_" + c.other.org.Name
		checks := []struct {
			name string
			err  error
		}{
			{"Session", func() error { _, err := s.Session(ctx, c.me.org.ID, otherSession); return err }()},
			{"CloseSession", s.CloseSession(ctx, c.me.org.ID, otherSession, T0, "sha256:c", nil)},
			{"CreateSession in its run", s.CreateSession(ctx, store.Session{ID: "chk_intruder", OrgID: c.me.org.ID, RunID: c.other.run.ID, Kind: "check", OpenedAt: T0})},
			{"CalibrationRequest", func() error {
				_, err := s.CalibrationRequest(ctx, c.me.org.ID, "cal_req_"+c.other.org.Name)
				return err
			}()},
		}
		for _, ch := range checks {
			if !errors.Is(ch.err, store.ErrNotFound) {
				t.Errorf("%s of %s's resource as %s: err = %v, want ErrNotFound", ch.name, c.other.org.Name, c.me.org.Name, ch.err)
			}
		}
		if got, err := s.Session(ctx, c.other.org.ID, otherSession); err != nil || !got.ClosedAt.IsZero() {
			t.Errorf("%s's session after %s tried to close it = %+v, %v; want it open", c.other.org.Name, c.me.org.Name, got, err)
		}
	}
	if got, err := s.CalibrationRequestsByModel(ctx, "sha256:m"); err != nil || len(got) != 2 {
		t.Errorf("CalibrationRequestsByModel = %+v, %v; want both organisations' requests", got, err)
	}
}

// testClaimSession: a session backs one record: the first claim wins, a
// retry by the same record succeeds, another record gets ErrConflict, in
// the caller's organisation only; of concurrent claims by distinct records
// exactly one wins.
func testClaimSession(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "bravo")
	sess := newSession(a, "chk_claim")
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "ClaimSession unknown session", s.ClaimSession(ctx, a.org.ID, "chk_nobody", "rec_1"), store.ErrNotFound)
	wantErr(t, "ClaimSession other org", s.ClaimSession(ctx, b.org.ID, sess.ID, "rec_1"), store.ErrNotFound)
	wantErr(t, "ClaimSession first", s.ClaimSession(ctx, a.org.ID, sess.ID, "rec_1"), nil)
	wantErr(t, "ClaimSession retry", s.ClaimSession(ctx, a.org.ID, sess.ID, "rec_1"), nil)
	wantErr(t, "ClaimSession other record", s.ClaimSession(ctx, a.org.ID, sess.ID, "rec_2"), store.ErrConflict)
	if got, err := s.Session(ctx, a.org.ID, sess.ID); err != nil || got.RecordID != "rec_1" {
		t.Fatalf("Session after claim: RecordID %q, %v; want rec_1", got.RecordID, err)
	}
	fresh := newSession(a, "chk_fresh")
	if err := s.CreateSession(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Session(ctx, a.org.ID, fresh.ID); err != nil || got.RecordID != "" {
		t.Fatalf("unclaimed Session: RecordID %q, %v; want empty", got.RecordID, err)
	}

	// Concurrent claims by distinct records: exactly one wins, the others
	// get ErrConflict, and the stored claim is the winner's.
	RaceClaims(t, []store.SessionStore{s}, a.org.ID, a.run.ID)
}

// RaceClaims creates sessions of the open run runID through handles[0]
// and has 8 distinct records claim each at once, spread over handles (one
// database opened several times, as by several processes): exactly one
// claim wins, the others get store.ErrConflict, and every handle reads the
// winner's claim.
func RaceClaims(t *testing.T, handles []store.SessionStore, orgID, runID string) {
	t.Helper()
	ctx := context.Background()
	for trial := range 5 {
		id := fmt.Sprintf("chk_race_%d", trial)
		if err := handles[0].CreateSession(ctx, store.Session{ID: id, OrgID: orgID, RunID: runID, Kind: "check", OpenedAt: T0}); err != nil {
			t.Fatal(err)
		}
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = handles[i%len(handles)].ClaimSession(ctx, orgID, id, fmt.Sprintf("rec_%d", i)) })
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("trial %d: records %d and %d both claimed the session", trial, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("trial %d: claim %d: %v; want nil or ErrConflict", trial, i, err)
			}
		}
		for h, st := range handles {
			got, err := st.Session(ctx, orgID, id)
			if winner < 0 || err != nil || got.RecordID != fmt.Sprintf("rec_%d", winner) {
				t.Fatalf("trial %d: handle %d reads claim %q (%v), winner %d", trial, h, got.RecordID, err, winner)
			}
		}
	}
}
