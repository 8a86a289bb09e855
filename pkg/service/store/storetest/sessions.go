package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

func reviewerKeyEqual(a, b store.ReviewerKey) bool {
	return a.OrgID == b.OrgID && a.KeyID == b.KeyID && bytes.Equal(a.PublicKey, b.PublicKey) && a.Name == b.Name &&
		utcEqual(a.CreatedAt, b.CreatedAt)
}

func sessionEqual(a, b store.Session) bool {
	return a.ID == b.ID && a.OrgID == b.OrgID && a.RunID == b.RunID && a.Kind == b.Kind && a.Check == b.Check &&
		a.ManifestID == b.ManifestID && a.ReviewerKeyID == b.ReviewerKeyID && a.MinDurationSeconds == b.MinDurationSeconds &&
		utcEqual(a.OpenedAt, b.OpenedAt) && bytes.Equal(a.OpenTST, b.OpenTST) && utcEqual(a.ClosedAt, b.ClosedAt) &&
		a.CommitmentHash == b.CommitmentHash && bytes.Equal(a.CloseTST, b.CloseTST)
}

// calEqual compares two requests; GPUClasses must be equal element by
// element and never nil (a request stored with nil classes reads back with
// an empty list).
func calEqual(a, b store.CalibrationRequest) bool {
	return a.ID == b.ID && a.OrgID == b.OrgID && a.ModelHash == b.ModelHash && a.ModelDescription == b.ModelDescription &&
		a.HubModelID == b.HubModelID && a.GPUClasses != nil && slices.Equal(a.GPUClasses, b.GPUClasses) &&
		a.NotifyEmail == b.NotifyEmail && a.Status == b.Status && a.EstimatedCompletion == b.EstimatedCompletion &&
		a.ProfileID == b.ProfileID && a.Note == b.Note && utcEqual(a.CreatedAt, b.CreatedAt) && utcEqual(a.UpdatedAt, b.UpdatedAt)
}

// newSession returns an open check session of run.
func newSession(f fixture, id string) store.Session {
	return store.Session{
		ID: id, OrgID: f.org.ID, RunID: f.run.ID, Kind: "check", Check: "pii-scan", ManifestID: "sha256:" + strings.Repeat("0f", 32),
		MinDurationSeconds: 0, OpenedAt: T0.Add(3 * time.Second), OpenTST: []byte{0x30, 0x82, 0x01, 0x00, 'o', 0},
	}
}

// newCal returns a queued calibration request of org for model.
func newCal(orgID, id, model string, created time.Time) store.CalibrationRequest {
	return store.CalibrationRequest{
		ID: id, OrgID: orgID, ModelHash: model, ModelDescription: "a BERT PII tagger", HubModelID: "acme/pii-bert",
		GPUClasses: []string{"cpu", "a100"}, NotifyEmail: "ml@acme.test", Status: "queued", EstimatedCompletion: "7d",
		CreatedAt: created, UpdatedAt: created,
	}
}

func testReviewerKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	k := store.ReviewerKey{OrgID: a.org.ID, KeyID: "9c1e4b7a2f301d5e", PublicKey: []byte{0x30, 0x2a, 0, 0xff, '\''}, Name: "Dr. Reviewer", CreatedAt: T0}
	noKey := store.ReviewerKey{OrgID: a.org.ID, KeyID: "0000000000000000", Name: "", CreatedAt: T0.Add(time.Microsecond)}
	creates := []struct {
		name string
		k    store.ReviewerKey
		want error
	}{
		{"new", k, nil},
		{"same key id again", k, store.ErrExists},
		{"same key id, other name and key", store.ReviewerKey{OrgID: a.org.ID, KeyID: k.KeyID, PublicKey: []byte("other"), Name: "x", CreatedAt: T0}, store.ErrExists},
		{"same key id, other org", store.ReviewerKey{OrgID: b.org.ID, KeyID: k.KeyID, PublicKey: []byte("beta's"), Name: "B", CreatedAt: T0}, nil},
		{"nil public key and empty name", noKey, nil},
		{"unknown org", store.ReviewerKey{OrgID: "org_nobody", KeyID: "1111111111111111", PublicKey: []byte("k"), CreatedAt: T0}, store.ErrNotFound},
	}
	for _, c := range creates {
		wantErr(t, "CreateReviewerKey "+c.name, s.CreateReviewerKey(ctx, c.k), c.want)
	}
	lookups := []struct {
		name, org, id string
		want          *store.ReviewerKey
	}{
		{"own", a.org.ID, k.KeyID, &k},
		{"nil public key reads back empty", a.org.ID, noKey.KeyID, &store.ReviewerKey{OrgID: a.org.ID, KeyID: noKey.KeyID, PublicKey: []byte{}, CreatedAt: noKey.CreatedAt}},
		{"other org's with the same id", b.org.ID, k.KeyID, &store.ReviewerKey{OrgID: b.org.ID, KeyID: k.KeyID, PublicKey: []byte("beta's"), Name: "B", CreatedAt: T0}},
		{"other org's", b.org.ID, noKey.KeyID, nil},
		{"unknown id", a.org.ID, "ffffffffffffffff", nil},
		{"unknown org", "org_nobody", k.KeyID, nil},
		{"never stored (unknown org)", "org_nobody", "1111111111111111", nil},
	}
	for _, c := range lookups {
		got, err := s.ReviewerKey(ctx, c.org, c.id)
		if c.want == nil {
			wantErr(t, "ReviewerKey "+c.name, err, store.ErrNotFound)
		} else if err != nil || !reviewerKeyEqual(got, *c.want) {
			t.Errorf("ReviewerKey %s = %+v, %v; want %+v", c.name, got, err, *c.want)
		}
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

func testCalibrationRequests(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	const model = "sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"
	base := newCal(a.org.ID, "cal_req_1", model, T0)
	with := func(id string, classes []string) store.CalibrationRequest {
		c := newCal(a.org.ID, id, model, T0)
		c.GPUClasses = classes
		return c
	}
	creates := []struct {
		name string
		c    store.CalibrationRequest
		want error
	}{
		{"new", base, nil},
		{"id taken", base, store.ErrExists},
		{"id taken by another org", newCal(b.org.ID, base.ID, model, T0), store.ErrExists},
		{"unknown org", newCal("org_nobody", "cal_req_nobody", model, T0), store.ErrNotFound},
		{"nil classes", with("cal_req_nil", nil), nil},
		{"empty classes", with("cal_req_empty", []string{}), nil},
		{"awkward classes", with("cal_req_odd", []string{"a,b", "", `"q"`, "{x}", "NULL", "é ü", `back\slash`, "[1]"}), nil},
		{"empty strings", store.CalibrationRequest{ID: "cal_req_min", OrgID: b.org.ID, ModelHash: "sha256:other", CreatedAt: T0, UpdatedAt: T0}, nil},
	}
	for _, c := range creates {
		wantErr(t, "CreateCalibrationRequest "+c.name, s.CreateCalibrationRequest(ctx, c.c), c.want)
	}
	lookups := []struct {
		name, org, id string
		want          *store.CalibrationRequest
	}{
		{"new", a.org.ID, base.ID, &base},
		{"nil classes read back empty", a.org.ID, "cal_req_nil", ptr(with("cal_req_nil", []string{}))},
		{"empty classes", a.org.ID, "cal_req_empty", ptr(with("cal_req_empty", []string{}))},
		{"awkward classes", a.org.ID, "cal_req_odd", ptr(with("cal_req_odd", []string{"a,b", "", `"q"`, "{x}", "NULL", "é ü", `back\slash`, "[1]"}))},
		{"empty strings", b.org.ID, "cal_req_min", &store.CalibrationRequest{ID: "cal_req_min", OrgID: b.org.ID, ModelHash: "sha256:other", GPUClasses: []string{}, CreatedAt: T0, UpdatedAt: T0}},
		{"another org's", b.org.ID, base.ID, nil},
		{"unknown", a.org.ID, "cal_req_nobody", nil},
		{"unknown org", "org_nobody", "cal_req_nobody", nil},
	}
	for _, c := range lookups {
		got, err := s.CalibrationRequest(ctx, c.org, c.id)
		if c.want == nil {
			wantErr(t, "CalibrationRequest "+c.name, err, store.ErrNotFound)
		} else if err != nil || !calEqual(got, *c.want) {
			t.Errorf("CalibrationRequest %s = %+v, %v; want %+v", c.name, got, err, *c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// testCalibrationRequestsByModel: every organisation's requests for a
// model, oldest first (ties by id), and none of other models'.
func testCalibrationRequestsByModel(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	const m1, m2 = "sha256:m1", "sha256:m2"
	stored := []store.CalibrationRequest{ // in creation order, not in time order
		newCal(a.org.ID, "cal_req_a3", m1, T0.Add(3*time.Hour)),
		newCal(b.org.ID, "cal_req_b1", m1, T0.Add(time.Hour)),
		newCal(a.org.ID, "cal_req_a0", m1, T0),
		newCal(b.org.ID, "cal_req_b2", m2, T0.Add(2*time.Hour)),
		newCal(b.org.ID, "cal_req_z-tie", m1, T0.Add(2*time.Hour)),
		newCal(a.org.ID, "cal_req_A-tie", m1, T0.Add(2*time.Hour)),
		newCal(a.org.ID, "cal_req_a-tie", m1, T0.Add(2*time.Hour)),
		newCal(a.org.ID, "cal_req_a-micro", m1, T0.Add(2*time.Hour+time.Microsecond)),
	}
	for _, c := range stored {
		if err := s.CreateCalibrationRequest(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	byID := map[string]store.CalibrationRequest{}
	for _, c := range stored {
		byID[c.ID] = c
	}
	cases := []struct {
		model string
		want  []string
	}{
		{m1, []string{"cal_req_a0", "cal_req_b1", "cal_req_A-tie", "cal_req_a-tie", "cal_req_z-tie", "cal_req_a-micro", "cal_req_a3"}},
		{m2, []string{"cal_req_b2"}},
		{"sha256:nobody", []string{}},
		{"", []string{}},
	}
	for _, c := range cases {
		got, err := s.CalibrationRequestsByModel(ctx, c.model)
		if err != nil || got == nil {
			t.Errorf("CalibrationRequestsByModel(%s) = %v, %v; want a list", c.model, got, err)
			continue
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID)
			if !calEqual(r, byID[r.ID]) {
				t.Errorf("CalibrationRequestsByModel(%s): %+v, want %+v", c.model, r, byID[r.ID])
			}
		}
		if strings.Join(ids, ",") != strings.Join(c.want, ",") {
			t.Errorf("CalibrationRequestsByModel(%s) = %v, want %v", c.model, ids, c.want)
		}
	}
}

func testUpdateCalibrationRequest(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	ca := newCal(a.org.ID, "cal_req_a", "sha256:m", T0)
	cb := newCal(b.org.ID, "cal_req_b", "sha256:m", T0.Add(time.Second))
	for _, c := range []store.CalibrationRequest{ca, cb} {
		if err := s.CreateCalibrationRequest(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	set := func(c store.CalibrationRequest, status, profile, note string, at time.Time) store.CalibrationRequest {
		c.Status, c.ProfileID, c.Note, c.UpdatedAt = status, profile, note, at
		return c
	}
	steps := []struct {
		name                    string
		id, status, profile, nt string
		at                      time.Time
		want                    error
		wantA, wantB            store.CalibrationRequest
	}{
		{"in progress", ca.ID, "in_progress", "", "", T0.Add(time.Hour), nil,
			set(ca, "in_progress", "", "", T0.Add(time.Hour)), cb},
		{"published", ca.ID, "published", "prof-1", "", T0.Add(2 * time.Hour), nil,
			set(ca, "published", "prof-1", "", T0.Add(2*time.Hour)), cb},
		{"another org's, rejected", cb.ID, "rejected", "", "not an ONNX model", T0.Add(3 * time.Hour), nil,
			set(ca, "published", "prof-1", "", T0.Add(2*time.Hour)), set(cb, "rejected", "", "not an ONNX model", T0.Add(3*time.Hour))},
		{"fields cleared", ca.ID, "queued", "", "", T0.Add(4 * time.Hour), nil,
			set(ca, "queued", "", "", T0.Add(4*time.Hour)), set(cb, "rejected", "", "not an ONNX model", T0.Add(3*time.Hour))},
		{"unknown", "cal_req_nobody", "published", "prof-1", "", T0, store.ErrNotFound,
			set(ca, "queued", "", "", T0.Add(4*time.Hour)), set(cb, "rejected", "", "not an ONNX model", T0.Add(3*time.Hour))},
	}
	for _, st := range steps {
		wantErr(t, "UpdateCalibrationRequest "+st.name, s.UpdateCalibrationRequest(ctx, st.id, nil, st.status, st.profile, st.nt, st.at), st.want)
		if got, err := s.CalibrationRequest(ctx, a.org.ID, ca.ID); err != nil || !calEqual(got, st.wantA) {
			t.Errorf("after %s: CalibrationRequest(a) = %+v, %v; want %+v", st.name, got, err, st.wantA)
		}
		if got, err := s.CalibrationRequest(ctx, b.org.ID, cb.ID); err != nil || !calEqual(got, st.wantB) {
			t.Errorf("after %s: CalibrationRequest(b) = %+v, %v; want %+v", st.name, got, err, st.wantB)
		}
	}
	got, err := s.CalibrationRequestsByModel(ctx, "sha256:m")
	if err != nil || len(got) != 2 || got[0].Status != "queued" || got[1].Status != "rejected" {
		t.Errorf("CalibrationRequestsByModel after updates = %+v, %v", got, err)
	}
	// Conditional updates happen only from the listed statuses, atomically.
	wantErr(t, "conditional update from a status it is not in", s.UpdateCalibrationRequest(ctx, cb.ID, []string{"queued", "in_progress"}, "published", "prof-2", "", T0.Add(5*time.Hour)), store.ErrConflict)
	wantErr(t, "conditional update of an unknown request", s.UpdateCalibrationRequest(ctx, "cal_req_nobody", []string{"queued"}, "in_progress", "", "", T0), store.ErrNotFound)
	wantErr(t, "conditional update from its status", s.UpdateCalibrationRequest(ctx, ca.ID, []string{"queued"}, "in_progress", "", "", T0.Add(5*time.Hour)), nil)
	if got, err := s.CalibrationRequest(ctx, b.org.ID, cb.ID); err != nil || got.Status != "rejected" {
		t.Errorf("a refused conditional update changed the request: %+v, %v", got, err)
	}
	if got, err := s.CalibrationRequest(ctx, a.org.ID, ca.ID); err != nil || got.Status != "in_progress" {
		t.Errorf("conditional update not applied: %+v, %v", got, err)
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
