// Package storetest is the conformance suite every store.Store
// implementation passes. A backend's test calls Run with a function that
// opens a fresh, empty store (and registers its own cleanup with t.Cleanup),
// and RunPersistence with a function that opens the same database again and
// again.
//
// Timestamps in the suite are whole microseconds, the finest precision
// every backend keeps (PostgreSQL's timestamptz keeps microseconds; SQLite
// keeps nanoseconds). Every time read back must be equal to the one written
// and in UTC.
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// T0 is the base timestamp of the suite's rows: microsecond precision, not
// UTC (stores must return UTC).
var T0 = time.Date(2025, 3, 14, 16, 9, 26, 535897000, time.FixedZone("CET", 3600))

// Run runs the conformance suite: every method, every sentinel error,
// organisation isolation, idempotency and concurrency. open must return a
// fresh, empty store each time it is called and close it in a t.Cleanup.
//
// Beyond what the store.Store comments say, the suite holds every backend
// to these rules: a Create* naming an unknown organisation gives
// store.ErrNotFound; CreateSession stores the session open and gives
// store.ErrExists for a taken id; CloseSession on a sealed run gives
// store.ErrSealed, even for a retry; nil byte slices are stored (NOT NULL
// columns) and read back empty; GPU class lists read back non-nil, empty
// for nil; CalibrationRequestsByModel orders requests
// created at the same instant by id (byte order).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Ping", testPing},
		{"Orgs", testOrgs},
		{"APIKeys", testAPIKeys},
		{"Runs", testRuns},
		{"AppendRecord", testAppendRecord},
		{"AppendRecordNoChangeOnError", testAppendRecordNoChange},
		{"Records", testRecords},
		{"SealRun", testSealRun},
		{"SealRunVPECIDTaken", testSealRunVPECIDTaken},
		{"SealedRun", testSealedRun},
		{"OrgIsolation", testOrgIsolation},
		{"Manifests", testManifests},
		{"Profiles", testProfiles},
		{"ProfileLatestWins", testProfileLatestWins},
		{"CancelledContext", testCancelledContext},
		{"ConcurrentAppendDistinct", testConcurrentAppendDistinct},
		{"ConcurrentAppendSame", testConcurrentAppendSame},
		{"ConcurrentSealRun", testConcurrentSealRun},
		{"ConcurrentAppendAndSeal", testConcurrentAppendAndSeal},
		{"RunMetadata", testRunMetadata},
		{"Limits", testLimits},
		{"TwoPhaseSeal", testTwoPhaseSeal},
		{"UnsealRecords", testUnsealRecords},
		{"EachRecord", testEachRecord},
		{"ConcurrentAppendAndSealRecords", testConcurrentAppendAndSealRecords},
		{"ReviewerKeys", testReviewerKeys},
		{"Sessions", testSessions},
		{"CloseSession", testCloseSession},
		{"ConcurrentCloseSession", testConcurrentCloseSession},
		{"ConcurrentSessionsAndSeal", testConcurrentSessionsAndSeal},
		{"CalibrationRequests", testCalibrationRequests},
		{"CalibrationRequestsByModel", testCalibrationRequestsByModel},
		{"UpdateCalibrationRequest", testUpdateCalibrationRequest},
		{"OrgIsolationSessions", testOrgIsolationSessions},
		{"RevokeAPIKey", testRevokeAPIKey},
		{"ClaimSession", testClaimSession},
		{"VPECInfo", testVPECInfo},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

// RunPersistence writes one of everything through a store, closes it,
// opens the database again and checks that everything is still there.
// reopen opens the same database each time it is called; the caller's
// cleanup removes the database.
func RunPersistence(t *testing.T, reopen func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := reopen(t)
	f := seed(t, s, "persist")
	rec := MakeRecord(f.run.ID, 0, "rec-0", 600)
	mustAppend(t, s, f.org.ID, rec)
	v := store.VPEC{ID: "vpec-persist", RunID: f.run.ID, OrgID: f.org.ID, IssuedAt: T0.Add(time.Hour), Body: []byte(`{"vpec":1}`)}
	if err := s.SealRun(ctx, f.org.ID, f.run.ID, v); err != nil {
		t.Fatal(err)
	}
	m := store.Manifest{OrgID: f.org.ID, ID: "sha256:m", Name: "m", Body: []byte(`{"m":1}`), CreatedAt: T0}
	if _, err := s.PutManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	p := store.Profile{ID: "prof-1", ModelHashes: []string{"sha256:a"}, Body: []byte(`{"p":1}`), PublishedAt: T0}
	if err := s.PutProfile(ctx, p); err != nil {
		t.Fatal(err)
	}
	rk := store.ReviewerKey{OrgID: f.org.ID, KeyID: "k1", PublicKey: []byte{0x30, 0}, Name: "R", CreatedAt: T0}
	if err := s.CreateReviewerKey(ctx, rk); err != nil {
		t.Fatal(err)
	}
	sessRun := newRun(f.org.ID, f.key.ID, "run_persist_sessions")
	if err := s.CreateRun(ctx, sessRun); err != nil {
		t.Fatal(err)
	}
	sess := store.Session{ID: "chk_1", OrgID: f.org.ID, RunID: sessRun.ID, Kind: "review", Check: "human_review", ManifestID: "m",
		ReviewerKeyID: rk.KeyID, MinDurationSeconds: 5, OpenedAt: T0, OpenTST: []byte("open")}
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	sess.ClosedAt, sess.CommitmentHash, sess.CloseTST = T0.Add(time.Minute), "sha256:c", []byte("close")
	if err := s.CloseSession(ctx, f.org.ID, sess.ID, sess.ClosedAt, sess.CommitmentHash, sess.CloseTST); err != nil {
		t.Fatal(err)
	}
	cal := newCal(f.org.ID, "cal_req_1", "sha256:a", T0)
	if err := s.CreateCalibrationRequest(ctx, cal); err != nil {
		t.Fatal(err)
	}
	cal.Status, cal.ProfileID, cal.UpdatedAt = "published", p.ID, T0.Add(time.Hour)
	if err := s.UpdateCalibrationRequest(ctx, cal.ID, nil, cal.Status, cal.ProfileID, "", cal.UpdatedAt); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	for i := range 2 {
		s := reopen(t)
		if got, err := s.OrgByID(ctx, f.org.ID); err != nil || !orgEqual(got, f.org) {
			t.Errorf("reopen %d: OrgByID = %+v, %v; want %+v", i, got, err, f.org)
		}
		if got, err := s.APIKeyByHash(ctx, f.key.Hash); err != nil || !keyEqual(got, f.key) {
			t.Errorf("reopen %d: APIKeyByHash = %+v, %v; want %+v", i, got, err, f.key)
		}
		want := f.run
		want.Sealed, want.ClosedAt, want.VPECID = true, v.IssuedAt, v.ID
		if got, err := s.Run(ctx, f.org.ID, f.run.ID); err != nil || !runEqual(got, want) {
			t.Errorf("reopen %d: Run = %+v, %v; want %+v", i, got, err, want)
		}
		if got, err := s.Records(ctx, f.run.ID); err != nil || len(got) != 1 || !recordEqual(got[0], rec) {
			t.Errorf("reopen %d: Records = %+v, %v", i, got, err)
		}
		if got, err := s.VPEC(ctx, f.org.ID, v.ID); err != nil || !vpecEqual(got, v) {
			t.Errorf("reopen %d: VPEC = %+v, %v; want %+v", i, got, err, v)
		}
		if got, err := s.Manifest(ctx, f.org.ID, m.ID); err != nil || !manifestEqual(got, m) {
			t.Errorf("reopen %d: Manifest = %+v, %v; want %+v", i, got, err, m)
		}
		if got, err := s.ProfileByModelHash(ctx, "sha256:a"); err != nil || !profileEqual(got, p) {
			t.Errorf("reopen %d: ProfileByModelHash = %+v, %v; want %+v", i, got, err, p)
		}
		if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, 1, "rec-1", 10), store.Limits{}); !errors.Is(err, store.ErrSealed) {
			t.Errorf("reopen %d: AppendRecord on the sealed run: err = %v, want ErrSealed", i, err)
		}
		if got, err := s.ReviewerKey(ctx, f.org.ID, rk.KeyID); err != nil || !reviewerKeyEqual(got, rk) {
			t.Errorf("reopen %d: ReviewerKey = %+v, %v; want %+v", i, got, err, rk)
		}
		if got, err := s.Session(ctx, f.org.ID, sess.ID); err != nil || !sessionEqual(got, sess) {
			t.Errorf("reopen %d: Session = %+v, %v; want %+v", i, got, err, sess)
		}
		if got, err := s.CalibrationRequestsByModel(ctx, cal.ModelHash); err != nil || len(got) != 1 || !calEqual(got[0], cal) {
			t.Errorf("reopen %d: CalibrationRequestsByModel = %+v, %v; want [%+v]", i, got, err, cal)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("reopen %d: Close: %v", i, err)
		}
	}
}

// MakeRecord returns a record of run runID whose body is a realistic
// canonical-JSON record of about size bytes.
func MakeRecord(runID string, seq int64, recordID string, size int) store.Record {
	chain := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%s", runID, seq, recordID))))
	body := fmt.Sprintf(`{"chain_hash":%q,"check_id":"pii-scan","inputs_hash":"sha256:%064x","outcome":"pass","record_id":%q,"run_id":%q,"sequence":%d,"timestamp":"2025-03-14T15:09:26.535897Z","details":"`,
		chain, seq, recordID, runID, seq)
	if pad := size - len(body) - 2; pad > 0 {
		body += strings.Repeat("x", pad)
	}
	body += `"}`
	return store.Record{RunID: runID, RecordID: recordID, Sequence: seq, ChainHash: chain, Body: []byte(body)}
}

// fixture is an organisation with an API key and an open run.
type fixture struct {
	org store.Org
	key store.APIKey
	run store.Run
}

// seed creates organisation name with a key and an open run.
func seed(t *testing.T, s store.Store, name string) fixture {
	t.Helper()
	ctx := context.Background()
	f := fixture{
		org: store.Org{ID: "org_" + name, Name: name, Tier: "standard", CreatedAt: T0},
	}
	h := sha256.Sum256([]byte("sk_live_" + name))
	f.key = store.APIKey{ID: fmt.Sprintf("pk_live_%x", h[:6]), OrgID: f.org.ID, Environment: "production", Hash: h[:], CreatedAt: T0.Add(time.Second)}
	f.run = newRun(f.org.ID, f.key.ID, "run_"+name)
	if err := s.CreateOrg(ctx, f.org); err != nil {
		t.Fatalf("CreateOrg(%s): %v", name, err)
	}
	if err := s.CreateAPIKey(ctx, f.key); err != nil {
		t.Fatalf("CreateAPIKey(%s): %v", name, err)
	}
	if err := s.CreateRun(ctx, f.run); err != nil {
		t.Fatalf("CreateRun(%s): %v", name, err)
	}
	return f
}

func newRun(orgID, keyID, id string) store.Run {
	return store.Run{
		ID: id, OrgID: orgID, WorkflowID: "wf-claims", SurfaceID: "surface-api",
		PolicyPackID: "pack-eu-ai-act", PolicySnapshotHash: "sha256:" + strings.Repeat("ab", 32),
		ProcessContextHash: "sha256:" + strings.Repeat("cd", 32), Environment: "production",
		APIKeyID: keyID, OpenedAt: T0.Add(2 * time.Second),
	}
}

func mustAppend(t *testing.T, s store.Store, orgID string, rec store.Record) {
	t.Helper()
	dup, err := s.AppendRecord(context.Background(), orgID, rec, store.Limits{})
	if err != nil || dup {
		t.Fatalf("AppendRecord(%s) = %v, %v; want false, nil", rec.RecordID, dup, err)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s: err = %v, want nil", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
	}
}

func utcEqual(got, want time.Time) bool {
	return got.Equal(want) && (got.IsZero() || got.Location() == time.UTC)
}

func orgEqual(a, b store.Org) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Tier == b.Tier && utcEqual(a.CreatedAt, b.CreatedAt)
}

func keyEqual(a, b store.APIKey) bool {
	return a.ID == b.ID && a.OrgID == b.OrgID && a.Environment == b.Environment &&
		bytes.Equal(a.Hash, b.Hash) && utcEqual(a.CreatedAt, b.CreatedAt)
}

func runEqual(a, b store.Run) bool {
	return a.ID == b.ID && a.OrgID == b.OrgID && a.WorkflowID == b.WorkflowID && a.SurfaceID == b.SurfaceID &&
		a.PolicyPackID == b.PolicyPackID && a.PolicySnapshotHash == b.PolicySnapshotHash &&
		a.ProcessContextHash == b.ProcessContextHash && a.Environment == b.Environment &&
		a.APIKeyID == b.APIKeyID && a.Sealed == b.Sealed && utcEqual(a.OpenedAt, b.OpenedAt) &&
		utcEqual(a.ClosedAt, b.ClosedAt) && a.VPECID == b.VPECID
}

func recordEqual(a, b store.Record) bool {
	return a.RunID == b.RunID && a.RecordID == b.RecordID && a.Sequence == b.Sequence &&
		a.ChainHash == b.ChainHash && bytes.Equal(a.Body, b.Body)
}

func vpecEqual(a, b store.VPEC) bool {
	return a.ID == b.ID && a.RunID == b.RunID && a.OrgID == b.OrgID && utcEqual(a.IssuedAt, b.IssuedAt) &&
		bytes.Equal(a.Body, b.Body)
}

func manifestEqual(a, b store.Manifest) bool {
	return a.OrgID == b.OrgID && a.ID == b.ID && a.Name == b.Name && bytes.Equal(a.Body, b.Body) &&
		utcEqual(a.CreatedAt, b.CreatedAt)
}

func profileEqual(a, b store.Profile) bool {
	return a.ID == b.ID && slices.Equal(a.ModelHashes, b.ModelHashes) && bytes.Equal(a.Body, b.Body) &&
		utcEqual(a.PublishedAt, b.PublishedAt)
}

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testOrgs(t *testing.T, s store.Store) {
	ctx := context.Background()
	acme := store.Org{ID: "org_acme", Name: "acme", Tier: "enterprise", CreatedAt: T0}
	if err := s.CreateOrg(ctx, acme); err != nil {
		t.Fatalf("CreateOrg: %v", err)
	}
	creates := []struct {
		name string
		org  store.Org
		want error
	}{
		{"name taken", store.Org{ID: "org_other", Name: "acme", Tier: "standard", CreatedAt: T0}, store.ErrExists},
		{"id taken", store.Org{ID: "org_acme", Name: "acme-2", Tier: "standard", CreatedAt: T0}, store.ErrExists},
		{"second org", store.Org{ID: "org_beta", Name: "beta", Tier: "standard", CreatedAt: T0.Add(time.Nanosecond * 1000)}, nil},
	}
	for _, c := range creates {
		wantErr(t, "CreateOrg "+c.name, s.CreateOrg(ctx, c.org), c.want)
	}
	lookups := []struct {
		name   string
		lookup func() (store.Org, error)
		want   store.Org
		err    error
	}{
		{"by name", func() (store.Org, error) { return s.OrgByName(ctx, "acme") }, acme, nil},
		{"by id", func() (store.Org, error) { return s.OrgByID(ctx, "org_acme") }, acme, nil},
		{"by name unknown", func() (store.Org, error) { return s.OrgByName(ctx, "nobody") }, store.Org{}, store.ErrNotFound},
		{"by id unknown", func() (store.Org, error) { return s.OrgByID(ctx, "org_nobody") }, store.Org{}, store.ErrNotFound},
		{"by name is exact", func() (store.Org, error) { return s.OrgByName(ctx, "ACME") }, store.Org{}, store.ErrNotFound},
		{"by id of a name", func() (store.Org, error) { return s.OrgByID(ctx, "acme") }, store.Org{}, store.ErrNotFound},
	}
	for _, c := range lookups {
		got, err := c.lookup()
		wantErr(t, c.name, err, c.err)
		if c.err == nil && !orgEqual(got, c.want) {
			t.Errorf("%s = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func testAPIKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	other := sha256.Sum256([]byte("other"))
	creates := []struct {
		name string
		key  store.APIKey
		want error
	}{
		{"id taken", store.APIKey{ID: f.key.ID, OrgID: f.org.ID, Environment: "sandbox", Hash: other[:], CreatedAt: T0}, store.ErrExists},
		{"hash taken", store.APIKey{ID: "pk_test_000000000000", OrgID: f.org.ID, Environment: "sandbox", Hash: f.key.Hash, CreatedAt: T0}, store.ErrExists},
		{"unknown org", store.APIKey{ID: "pk_test_111111111111", OrgID: "org_nobody", Environment: "sandbox", Hash: other[:], CreatedAt: T0}, store.ErrNotFound},
		{"second key", store.APIKey{ID: "pk_test_222222222222", OrgID: f.org.ID, Environment: "sandbox", Hash: other[:], CreatedAt: T0}, nil},
	}
	for _, c := range creates {
		wantErr(t, "CreateAPIKey "+c.name, s.CreateAPIKey(ctx, c.key), c.want)
	}
	got, err := s.APIKeyByHash(ctx, f.key.Hash)
	if err != nil || !keyEqual(got, f.key) {
		t.Errorf("APIKeyByHash = %+v, %v; want %+v", got, err, f.key)
	}
	got, err = s.APIKeyByHash(ctx, other[:])
	if err != nil || got.ID != "pk_test_222222222222" || got.Environment != "sandbox" {
		t.Errorf("APIKeyByHash(second) = %+v, %v", got, err)
	}
	unknown := sha256.Sum256([]byte("unknown"))
	for _, h := range [][]byte{unknown[:], f.key.Hash[:31], nil, {}} {
		if _, err := s.APIKeyByHash(ctx, h); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("APIKeyByHash(%x): err = %v, want ErrNotFound", h, err)
		}
	}
}

func testRuns(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	g := seed(t, s, "beta")
	got, err := s.Run(ctx, f.org.ID, f.run.ID)
	if err != nil || !runEqual(got, f.run) {
		t.Fatalf("Run = %+v, %v; want %+v", got, err, f.run)
	}
	if got.Sealed || !got.ClosedAt.IsZero() || got.VPECID != "" {
		t.Errorf("a new run is not open: %+v", got)
	}
	sealedInput := newRun(f.org.ID, f.key.ID, "run_claims_sealed")
	sealedInput.Sealed, sealedInput.ClosedAt, sealedInput.VPECID = true, T0, "vpec-x"
	creates := []struct {
		name string
		run  store.Run
		want error
	}{
		{"id taken", newRun(f.org.ID, f.key.ID, f.run.ID), store.ErrExists},
		{"id taken by another org", newRun(g.org.ID, g.key.ID, f.run.ID), store.ErrExists},
		{"unknown org", newRun("org_nobody", f.key.ID, "run_nobody"), store.ErrNotFound},
		{"stored open whatever it says", sealedInput, nil},
	}
	for _, c := range creates {
		wantErr(t, "CreateRun "+c.name, s.CreateRun(ctx, c.run), c.want)
	}
	if got, err := s.Run(ctx, f.org.ID, sealedInput.ID); err != nil || got.Sealed || !got.ClosedAt.IsZero() || got.VPECID != "" {
		t.Errorf("CreateRun of a run marked sealed: Run = %+v, %v; want it open", got, err)
	}
	lookups := []struct{ name, org, run string }{
		{"unknown run", f.org.ID, "run_nobody"},
		{"another org's run", f.org.ID, g.run.ID},
		{"unknown org", "org_nobody", f.run.ID},
		{"empty ids", "", ""},
	}
	for _, c := range lookups {
		if _, err := s.Run(ctx, c.org, c.run); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Run %s: err = %v, want ErrNotFound", c.name, err)
		}
	}
}

func testAppendRecord(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	g := seed(t, s, "beta")
	r0 := MakeRecord(f.run.ID, 0, "rec-0", 600)
	r1 := MakeRecord(f.run.ID, 1, "rec-1", 600)
	changedBody := r0
	changedBody.Body = append(bytes.Clone(r0.Body[:len(r0.Body)-2]), `y"}`...)
	changedChain := r0
	changedChain.ChainHash = "sha256:other"
	movedSeq := r0
	movedSeq.Sequence = 7
	seqTaken := MakeRecord(f.run.ID, 0, "rec-other", 600)
	binary := store.Record{RunID: f.run.ID, RecordID: "rec-bin", Sequence: 2, ChainHash: "h", Body: []byte{0, 1, 2, 0xff, '\'', '"', 0}}
	steps := []struct {
		name    string
		org     string
		rec     store.Record
		wantDup bool
		wantErr error
	}{
		{"first", f.org.ID, r0, false, nil},
		{"same again", f.org.ID, r0, true, nil},
		{"same id, different body", f.org.ID, changedBody, false, store.ErrConflict},
		{"same id, different chain hash", f.org.ID, changedChain, false, store.ErrConflict},
		{"same id and body, other sequence", f.org.ID, movedSeq, false, store.ErrConflict},
		{"sequence taken by another id", f.org.ID, seqTaken, false, store.ErrConflict},
		{"next", f.org.ID, r1, false, nil},
		{"next again", f.org.ID, r1, true, nil},
		{"arbitrary bytes", f.org.ID, binary, false, nil},
		{"another org's run", g.org.ID, MakeRecord(f.run.ID, 3, "rec-3", 10), false, store.ErrNotFound},
		{"unknown run", f.org.ID, MakeRecord("run_nobody", 0, "rec-0", 10), false, store.ErrNotFound},
		{"unknown org", "org_nobody", MakeRecord(f.run.ID, 3, "rec-3", 10), false, store.ErrNotFound},
		{"same record id in another run", g.org.ID, MakeRecord(g.run.ID, 0, "rec-0", 600), false, nil},
	}
	for _, st := range steps {
		dup, err := s.AppendRecord(ctx, st.org, st.rec, store.Limits{})
		wantErr(t, "AppendRecord "+st.name, err, st.wantErr)
		if dup != st.wantDup {
			t.Errorf("AppendRecord %s: duplicate = %v, want %v", st.name, dup, st.wantDup)
		}
	}
	for _, want := range []store.Record{r0, r1, binary} {
		got, err := s.RecordBySequence(ctx, f.run.ID, want.Sequence)
		if err != nil || !recordEqual(got, want) {
			t.Errorf("RecordBySequence(%d) = %+v, %v; want %+v", want.Sequence, got, err, want)
		}
	}
	for _, c := range []struct {
		run string
		seq int64
	}{{f.run.ID, 3}, {f.run.ID, 7}, {f.run.ID, -1}, {"run_nobody", 0}} {
		if _, err := s.RecordBySequence(ctx, c.run, c.seq); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RecordBySequence(%s, %d): err = %v, want ErrNotFound", c.run, c.seq, err)
		}
	}
}

// testAppendRecordNoChange: a rejected append changes nothing.
func testAppendRecordNoChange(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	r0 := MakeRecord(f.run.ID, 0, "rec-0", 600)
	mustAppend(t, s, f.org.ID, r0)
	bad := MakeRecord(f.run.ID, 0, "rec-x", 600)
	if _, err := s.AppendRecord(ctx, f.org.ID, bad, store.Limits{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("AppendRecord: err = %v, want ErrConflict", err)
	}
	moved := r0
	moved.Sequence = 1
	if _, err := s.AppendRecord(ctx, f.org.ID, moved, store.Limits{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("AppendRecord: err = %v, want ErrConflict", err)
	}
	got, err := s.Records(ctx, f.run.ID)
	if err != nil || len(got) != 1 || !recordEqual(got[0], r0) {
		t.Fatalf("Records = %+v, %v; want only rec-0", got, err)
	}
}

func testRecords(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	got, err := s.Records(ctx, f.run.ID)
	if err != nil || len(got) != 0 {
		t.Fatalf("Records of an empty run = %+v, %v", got, err)
	}
	got, err = s.Records(ctx, "run_nobody")
	if err != nil || len(got) != 0 {
		t.Fatalf("Records of an unknown run = %+v, %v", got, err)
	}
	var want []store.Record
	for _, seq := range []int64{5, 0, 12, 3, 1, 100, 2} { // stored out of order, with gaps
		rec := MakeRecord(f.run.ID, seq, fmt.Sprintf("rec-%d", seq), 200+int(seq))
		mustAppend(t, s, f.org.ID, rec)
		want = append(want, rec)
	}
	sort.Slice(want, func(i, j int) bool { return want[i].Sequence < want[j].Sequence })
	got, err = s.Records(ctx, f.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Records: %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !recordEqual(got[i], want[i]) {
			t.Errorf("Records[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func testSealRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	g := seed(t, s, "beta")
	mustAppend(t, s, f.org.ID, MakeRecord(f.run.ID, 0, "rec-0", 600))
	v := store.VPEC{ID: "vpec-1", RunID: f.run.ID, OrgID: f.org.ID, IssuedAt: T0.Add(time.Hour + time.Microsecond), Body: []byte(`{"id":"vpec-1"}`)}
	seals := []struct {
		name       string
		org, run   string
		vpec       store.VPEC
		want       error
		wantNonNil bool // an error that is none of the sentinels
	}{
		{"another org's run", g.org.ID, f.run.ID, store.VPEC{ID: "vpec-x", IssuedAt: T0}, store.ErrNotFound, false},
		{"unknown run", f.org.ID, "run_nobody", store.VPEC{ID: "vpec-x", IssuedAt: T0}, store.ErrNotFound, false},
		{"vpec of another run", f.org.ID, f.run.ID, store.VPEC{ID: "vpec-x", RunID: g.run.ID, IssuedAt: T0}, nil, true},
		{"vpec of another org", f.org.ID, f.run.ID, store.VPEC{ID: "vpec-x", OrgID: g.org.ID, IssuedAt: T0}, nil, true},
		{"seal", f.org.ID, f.run.ID, v, nil, false},
		{"seal again", f.org.ID, f.run.ID, store.VPEC{ID: "vpec-2", IssuedAt: T0}, store.ErrSealed, false},
		{"seal again, same vpec", f.org.ID, f.run.ID, v, store.ErrSealed, false},
		{"seal the other org's run, ids left empty", g.org.ID, g.run.ID, store.VPEC{ID: "vpec-g", IssuedAt: T0, Body: []byte("{}")}, nil, false},
	}
	for _, c := range seals {
		err := s.SealRun(ctx, c.org, c.run, c.vpec)
		if c.wantNonNil {
			if err == nil {
				t.Errorf("SealRun %s: err = nil, want an error", c.name)
			}
			continue
		}
		wantErr(t, "SealRun "+c.name, err, c.want)
	}
	want := f.run
	want.Sealed, want.ClosedAt, want.VPECID = true, v.IssuedAt, v.ID
	if got, err := s.Run(ctx, f.org.ID, f.run.ID); err != nil || !runEqual(got, want) {
		t.Errorf("Run after SealRun = %+v, %v; want %+v", got, err, want)
	}
	if got, err := s.VPEC(ctx, f.org.ID, v.ID); err != nil || !vpecEqual(got, v) {
		t.Errorf("VPEC = %+v, %v; want %+v", got, err, v)
	}
	wantG := store.VPEC{ID: "vpec-g", RunID: g.run.ID, OrgID: g.org.ID, IssuedAt: T0, Body: []byte("{}")}
	if got, err := s.VPEC(ctx, g.org.ID, "vpec-g"); err != nil || !vpecEqual(got, wantG) {
		t.Errorf("VPEC(vpec-g) = %+v, %v; want %+v", got, err, wantG)
	}
	for _, c := range []struct{ name, org, id string }{
		{"another org's", g.org.ID, v.ID},
		{"unknown", f.org.ID, "vpec-nobody"},
		{"never stored (lost the seal)", f.org.ID, "vpec-2"},
		{"unknown org", "org_nobody", v.ID},
	} {
		if _, err := s.VPEC(ctx, c.org, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("VPEC %s: err = %v, want ErrNotFound", c.name, err)
		}
	}
}

// testSealRunVPECIDTaken: a VPEC id already issued for another run gives
// ErrExists and leaves the run open.
func testSealRunVPECIDTaken(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	second := newRun(f.org.ID, f.key.ID, "run_second")
	if err := s.CreateRun(ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	err := s.SealRun(ctx, f.org.ID, second.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")})
	wantErr(t, "SealRun with a taken vpec id", err, store.ErrExists)
	if got, err := s.Run(ctx, f.org.ID, second.ID); err != nil || !runEqual(got, second) {
		t.Errorf("Run after a failed SealRun = %+v, %v; want it unchanged and open", got, err)
	}
	mustAppend(t, s, f.org.ID, MakeRecord(second.ID, 0, "rec-0", 100))
}

func testSealedRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	r0 := MakeRecord(f.run.ID, 0, "rec-0", 600)
	mustAppend(t, s, f.org.ID, r0)
	if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	appends := []struct {
		name string
		org  string
		rec  store.Record
		want error
	}{
		{"new record", f.org.ID, MakeRecord(f.run.ID, 1, "rec-1", 600), store.ErrSealed},
		{"a duplicate of a stored record", f.org.ID, r0, nil},
		{"a conflicting record", f.org.ID, MakeRecord(f.run.ID, 0, "rec-x", 600), store.ErrSealed},
		{"another org", "org_nobody", MakeRecord(f.run.ID, 1, "rec-1", 600), store.ErrNotFound},
	}
	for _, c := range appends {
		dup, err := s.AppendRecord(ctx, c.org, c.rec, store.Limits{})
		wantErr(t, "AppendRecord "+c.name, err, c.want)
		if dup != (c.want == nil) {
			t.Errorf("AppendRecord %s: duplicate = %v", c.name, dup)
		}
	}
	got, err := s.Records(ctx, f.run.ID)
	if err != nil || len(got) != 1 || !recordEqual(got[0], r0) {
		t.Errorf("Records of the sealed run = %+v, %v; want only rec-0", got, err)
	}
}

// testOrgIsolation: two organisations with runs, VPECs and manifests of
// the same ids see only their own.
func testOrgIsolation(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	for _, f := range []fixture{a, b} {
		if _, err := s.PutManifest(ctx, store.Manifest{OrgID: f.org.ID, ID: "sha256:same", Name: f.org.Name, Body: []byte(f.org.Name), CreatedAt: T0}); err != nil {
			t.Fatal(err)
		}
		if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-" + f.org.Name, IssuedAt: T0, Body: []byte(f.org.Name)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ me, other fixture }{{a, b}, {b, a}} {
		if m, err := s.Manifest(ctx, c.me.org.ID, "sha256:same"); err != nil || string(m.Body) != c.me.org.Name || m.OrgID != c.me.org.ID {
			t.Errorf("Manifest of %s = %+v, %v", c.me.org.Name, m, err)
		}
		checks := []struct {
			name string
			err  error
		}{
			{"Run", func() error { _, err := s.Run(ctx, c.me.org.ID, c.other.run.ID); return err }()},
			{"VPEC", func() error { _, err := s.VPEC(ctx, c.me.org.ID, "vpec-"+c.other.org.Name); return err }()},
			{"AppendRecord", func() error {
				_, err := s.AppendRecord(ctx, c.me.org.ID, MakeRecord(c.other.run.ID, 9, "rec-9", 10), store.Limits{})
				return err
			}()},
			{"SealRun", s.SealRun(ctx, c.me.org.ID, c.other.run.ID, store.VPEC{ID: "vpec-z", IssuedAt: T0})},
		}
		for _, ch := range checks {
			if !errors.Is(ch.err, store.ErrNotFound) {
				t.Errorf("%s of %s's resource as %s: err = %v, want ErrNotFound", ch.name, c.other.org.Name, c.me.org.Name, ch.err)
			}
		}
	}
}

func testManifests(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	m := store.Manifest{OrgID: a.org.ID, ID: "sha256:" + strings.Repeat("0f", 32), Name: "pii-scan", Body: []byte(`{"name":"pii-scan"}`), CreatedAt: T0}
	puts := []struct {
		name        string
		m           store.Manifest
		wantCreated bool
		wantErr     error
	}{
		{"new", m, true, nil},
		{"again", m, false, nil},
		{"again with another name and time", store.Manifest{OrgID: m.OrgID, ID: m.ID, Name: "renamed", Body: m.Body, CreatedAt: T0.Add(time.Hour)}, false, nil},
		{"same id, other org", store.Manifest{OrgID: b.org.ID, ID: m.ID, Name: "pii-scan", Body: m.Body, CreatedAt: T0}, true, nil},
		{"other id", store.Manifest{OrgID: a.org.ID, ID: "sha256:other", Name: "other", Body: []byte("{}"), CreatedAt: T0}, true, nil},
		{"unknown org", store.Manifest{OrgID: "org_nobody", ID: m.ID, Name: "x", Body: m.Body, CreatedAt: T0}, false, store.ErrNotFound},
	}
	for _, p := range puts {
		created, err := s.PutManifest(ctx, p.m)
		wantErr(t, "PutManifest "+p.name, err, p.wantErr)
		if created != p.wantCreated {
			t.Errorf("PutManifest %s: created = %v, want %v", p.name, created, p.wantCreated)
		}
	}
	if got, err := s.Manifest(ctx, a.org.ID, m.ID); err != nil || !manifestEqual(got, m) {
		t.Errorf("Manifest = %+v, %v; want the first one stored, %+v", got, err, m)
	}
	for _, c := range []struct{ name, org, id string }{
		{"unknown id", a.org.ID, "sha256:nobody"},
		{"another org's id", b.org.ID, "sha256:other"},
		{"unknown org", "org_nobody", m.ID},
	} {
		if _, err := s.Manifest(ctx, c.org, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Manifest %s: err = %v, want ErrNotFound", c.name, err)
		}
	}
}

func testProfiles(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got, err := s.Profiles(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Profiles of an empty store = %+v, %v", got, err)
	}
	pB := store.Profile{ID: "prof-b", ModelHashes: []string{"sha256:m2", "sha256:m1"}, Body: []byte(`{"profile_id":"prof-b"}`), PublishedAt: T0}
	pA := store.Profile{ID: "prof-a", ModelHashes: []string{"sha256:m2", "sha256:m3"}, Body: []byte(`{"profile_id":"prof-a"}`), PublishedAt: T0.Add(time.Minute)}
	pC := store.Profile{ID: "prof-c", ModelHashes: []string{}, Body: []byte(`{"profile_id":"prof-c"}`), PublishedAt: T0.Add(2 * time.Minute)}
	puts := []struct {
		name string
		p    store.Profile
		want error
	}{
		{"b", pB, nil},
		{"a", pA, nil},
		{"c, no models", pC, nil},
		{"b again", pB, store.ErrExists},
		{"a again, other content", store.Profile{ID: "prof-a", ModelHashes: []string{"sha256:m9"}, Body: []byte("{}"), PublishedAt: T0.Add(time.Hour)}, store.ErrExists},
	}
	for _, p := range puts {
		wantErr(t, "PutProfile "+p.name, s.PutProfile(ctx, p.p), p.want)
	}
	got, err := s.Profiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Profile{pA, pB, pC}
	if len(got) != len(want) {
		t.Fatalf("Profiles = %d profiles, want %d", len(got), len(want))
	}
	for i := range want {
		if !profileEqual(got[i], want[i]) {
			t.Errorf("Profiles[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	byID := []struct {
		id   string
		want *store.Profile
	}{{"prof-a", &pA}, {"prof-b", &pB}, {"prof-c", &pC}, {"prof-nobody", nil}, {"", nil}}
	for _, c := range byID {
		got, err := s.ProfileByID(ctx, c.id)
		if c.want == nil {
			wantErr(t, "ProfileByID "+c.id, err, store.ErrNotFound)
		} else if err != nil || !profileEqual(got, *c.want) {
			t.Errorf("ProfileByID(%s) = %+v, %v; want %+v", c.id, got, err, *c.want)
		}
	}
	byModel := []struct {
		model string
		want  *store.Profile
	}{
		{"sha256:m1", &pB},
		{"sha256:m2", &pA}, // covered by both: prof-a was published later
		{"sha256:m3", &pA},
		{"sha256:m9", nil}, // only in the rejected publication
		{"sha256:nobody", nil},
	}
	for _, c := range byModel {
		got, err := s.ProfileByModelHash(ctx, c.model)
		if c.want == nil {
			wantErr(t, "ProfileByModelHash "+c.model, err, store.ErrNotFound)
		} else if err != nil || !profileEqual(got, *c.want) {
			t.Errorf("ProfileByModelHash(%s) = %+v, %v; want %s", c.model, got, err, c.want.ID)
		}
	}
}

// testProfileLatestWins: a model's profile is the one of latest
// PublishedAt, the last published among equals; publishing a profile
// with an older PublishedAt does not take the model over.
func testProfileLatestWins(t *testing.T, s store.Store) {
	ctx := context.Background()
	steps := []struct {
		p    store.Profile
		want string // ProfileByModelHash("sha256:m") afterwards
	}{
		{store.Profile{ID: "v1", ModelHashes: []string{"sha256:m"}, Body: []byte("1"), PublishedAt: T0}, "v1"},
		{store.Profile{ID: "v2", ModelHashes: []string{"sha256:m", "sha256:m"}, Body: []byte("2"), PublishedAt: T0.Add(time.Hour)}, "v2"},
		{store.Profile{ID: "v0-backfill", ModelHashes: []string{"sha256:m"}, Body: []byte("0"), PublishedAt: T0.Add(-time.Hour)}, "v2"},
		{store.Profile{ID: "v3", ModelHashes: []string{"sha256:m"}, Body: []byte("3"), PublishedAt: T0.Add(time.Hour)}, "v3"},
		{store.Profile{ID: "a-v4", ModelHashes: []string{"sha256:m"}, Body: []byte("4"), PublishedAt: T0.Add(time.Hour + time.Microsecond)}, "a-v4"},
	}
	for _, st := range steps {
		if err := s.PutProfile(ctx, st.p); err != nil {
			t.Fatalf("PutProfile(%s): %v", st.p.ID, err)
		}
		got, err := s.ProfileByModelHash(ctx, "sha256:m")
		if err != nil || got.ID != st.want {
			t.Errorf("after publishing %s: ProfileByModelHash = %s, %v; want %s", st.p.ID, got.ID, err, st.want)
		}
	}
	got, err := s.ProfileByID(ctx, "v2")
	if err != nil || !slices.Equal(got.ModelHashes, []string{"sha256:m", "sha256:m"}) {
		t.Errorf("ProfileByID(v2) = %+v, %v; want its model hashes as published", got, err)
	}
}

// testCancelledContext: no method succeeds with a cancelled context.
func testCancelledContext(t *testing.T, s store.Store) {
	f := seed(t, s, "acme")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, 0, "rec-0", 100), store.Limits{}); err == nil {
		t.Errorf("AppendRecord with a cancelled context: err = nil")
	}
	if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "v", IssuedAt: T0}); err == nil {
		t.Errorf("SealRun with a cancelled context: err = nil")
	}
	if _, err := s.Run(ctx, f.org.ID, f.run.ID); err == nil {
		t.Errorf("Run with a cancelled context: err = nil")
	}
	if err := s.CreateSession(ctx, newSession(f, "chk_1")); err == nil {
		t.Errorf("CreateSession with a cancelled context: err = nil")
	}
	if _, err := s.Session(context.Background(), f.org.ID, "chk_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Session after CreateSession with a cancelled context: err = %v, want ErrNotFound", err)
	}
	if err := s.CreateSession(context.Background(), newSession(f, "chk_2")); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSession(ctx, f.org.ID, "chk_2", T0, "sha256:c", nil); err == nil {
		t.Errorf("CloseSession with a cancelled context: err = nil")
	}
	if got, err := s.Session(context.Background(), f.org.ID, "chk_2"); err != nil || !got.ClosedAt.IsZero() {
		t.Errorf("Session after CloseSession with a cancelled context = %+v, %v; want it open", got, err)
	}
	if err := s.CreateCalibrationRequest(ctx, newCal(f.org.ID, "cal_req_1", "sha256:m", T0)); err == nil {
		t.Errorf("CreateCalibrationRequest with a cancelled context: err = nil")
	}
	got, err := s.Run(context.Background(), f.org.ID, f.run.ID)
	if err != nil || got.Sealed {
		t.Errorf("Run = %+v, %v; want it open", got, err)
	}
	if recs, err := s.Records(context.Background(), f.run.ID); err != nil || len(recs) != 0 {
		t.Errorf("Records = %d, %v; want none", len(recs), err)
	}
}

// testConcurrentAppendDistinct: 200 distinct records from 8 goroutines are
// all stored exactly once.
func testConcurrentAppendDistinct(t *testing.T, s store.Store) {
	const n, workers = 200, 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				rec := MakeRecord(f.run.ID, int64(i), fmt.Sprintf("rec-%d", i), 600)
				dup, err := s.AppendRecord(ctx, f.org.ID, rec, store.Limits{})
				if err != nil || dup {
					errs <- fmt.Errorf("AppendRecord(%d) = %v, %v", i, dup, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.Records(ctx, f.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("Records: %d, want %d", len(got), n)
	}
	for i, r := range got {
		if want := MakeRecord(f.run.ID, int64(i), fmt.Sprintf("rec-%d", i), 600); !recordEqual(r, want) {
			t.Fatalf("Records[%d] = %s/%d, want %s/%d", i, r.RecordID, r.Sequence, want.RecordID, want.Sequence)
		}
	}
}

// testConcurrentAppendSame: one record appended by 8 goroutines at once is
// stored once; the others are told it is a duplicate.
func testConcurrentAppendSame(t *testing.T, s store.Store) {
	const workers = 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	for round := range 5 {
		rec := MakeRecord(f.run.ID, int64(round), fmt.Sprintf("rec-%d", round), 600)
		var stored, dups atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range workers {
			wg.Go(func() {
				<-start
				dup, err := s.AppendRecord(ctx, f.org.ID, rec, store.Limits{})
				switch {
				case err != nil:
					t.Errorf("round %d: AppendRecord: %v", round, err)
				case dup:
					dups.Add(1)
				default:
					stored.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if stored.Load() != 1 || dups.Load() != workers-1 {
			t.Errorf("round %d: %d stored, %d duplicates; want 1 and %d", round, stored.Load(), dups.Load(), workers-1)
		}
	}
	got, err := s.Records(ctx, f.run.ID)
	if err != nil || len(got) != 5 {
		t.Fatalf("Records = %d, %v; want 5", len(got), err)
	}
}

// testConcurrentSealRun: of 8 goroutines sealing one run, exactly one
// succeeds; the others get ErrSealed and their VPECs are not stored.
func testConcurrentSealRun(t *testing.T, s store.Store) {
	const workers = 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	for round := range 3 {
		run := newRun(f.org.ID, f.key.ID, fmt.Sprintf("run_seal_%d", round))
		if err := s.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []string
		start := make(chan struct{})
		for w := range workers {
			wg.Go(func() {
				id := fmt.Sprintf("vpec-%d-%d", round, w)
				<-start
				err := s.SealRun(ctx, f.org.ID, run.ID, store.VPEC{ID: id, IssuedAt: T0.Add(time.Duration(w) * time.Second), Body: []byte(id)})
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, id)
					mu.Unlock()
				case !errors.Is(err, store.ErrSealed):
					t.Errorf("round %d: SealRun(%s): %v, want nil or ErrSealed", round, id, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: %d SealRun calls succeeded (%v), want 1", round, len(winners), winners)
		}
		got, err := s.Run(ctx, f.org.ID, run.ID)
		if err != nil || !got.Sealed || got.VPECID != winners[0] {
			t.Errorf("round %d: Run = %+v, %v; want sealed with %s", round, got, err, winners[0])
		}
		v, err := s.VPEC(ctx, f.org.ID, winners[0])
		if err != nil || !got.ClosedAt.Equal(v.IssuedAt) || string(v.Body) != winners[0] {
			t.Errorf("round %d: VPEC = %+v, %v; run closed at %v", round, v, err, got.ClosedAt)
		}
		for w := range workers {
			if id := fmt.Sprintf("vpec-%d-%d", round, w); id != winners[0] {
				if _, err := s.VPEC(ctx, f.org.ID, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("round %d: the losing VPEC %s: err = %v, want ErrNotFound", round, id, err)
				}
			}
		}
	}
}

// testConcurrentAppendAndSeal: appends racing a seal either land before it
// (and are kept) or fail with ErrSealed; none lands after it.
func testConcurrentAppendAndSeal(t *testing.T, s store.Store) {
	const n, workers = 120, 4
	ctx := context.Background()
	f := seed(t, s, "acme")
	var wg sync.WaitGroup
	var ok, atSeal atomic.Int32
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				_, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, int64(i), fmt.Sprintf("rec-%d", i), 300), store.Limits{})
				switch {
				case err == nil:
					ok.Add(1)
				case !errors.Is(err, store.ErrSealed):
					t.Errorf("AppendRecord(%d): %v", i, err)
				}
			}
		})
	}
	wg.Go(func() {
		for deadline := time.Now().Add(30 * time.Second); ok.Load() < n/4 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
			t.Errorf("SealRun: %v", err)
		}
		recs, err := s.Records(ctx, f.run.ID)
		if err != nil {
			t.Errorf("Records: %v", err)
		}
		atSeal.Store(int32(len(recs)))
	})
	wg.Wait()
	got, err := s.Records(ctx, f.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != int(atSeal.Load()) {
		t.Errorf("Records: %d when SealRun returned, %d later: appends landed in the sealed run", atSeal.Load(), len(got))
	}
	if len(got) != int(ok.Load()) {
		t.Errorf("Records: %d stored, but %d appends succeeded", len(got), ok.Load())
	}
	if len(got) < n/4 {
		t.Errorf("Records: %d stored, want at least %d", len(got), n/4)
	}
}
