// Package storetest is the conformance suite of the store's roles, one
// file and one Run function per role (RunOrgs in orgs.go, RunRuns in
// runs.go, RunBatches in batch.go, ...), which every backend runs: Run runs them all. A backend's
// test calls Run with a function that opens a fresh, empty store (and
// registers its own cleanup with t.Cleanup), and RunPersistence with a
// function that opens the same database again and again. A role whose
// rows belong to an organisation needs one (and a run) to test with, so
// its suite opens a whole store.Store; the others (profiles, circuits,
// identity) take their role alone.
//
// Timestamps in the suite are whole microseconds, the finest precision
// every backend keeps (PostgreSQL's timestamptz keeps microseconds; SQLite
// keeps nanoseconds). Every time read back must be equal to the one written
// and in UTC.
package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// T0 is the base timestamp of the suite's rows: microsecond precision, not
// UTC (stores must return UTC).
var T0 = time.Date(2025, 3, 14, 16, 9, 26, 535897000, time.FixedZone("CET", 3600))

// Run runs the conformance suite of every role on stores open returns:
// each role's suite (RunOrgs, RunRuns, RunSeals, RunBatches, RunVPECs, RunManifests,
// RunProfiles, RunCircuits, RunCalibrations, RunSessions, RunWebSessions,
// RunIdentity) and RunLifecycle, each a subtest. open must return a fresh,
// empty store each time it is called and close it in a t.Cleanup.
//
// Beyond what the role interfaces' comments say, the suite holds every
// backend to these rules: a Create* naming an unknown organisation gives
// store.ErrNotFound; nil byte slices are stored (NOT NULL columns) and
// read back empty; lists of strings read back non-nil, empty for nil;
// listings of an unknown organisation are empty, not an error; ties in
// time are ordered by id (byte order).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	roles := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Lifecycle", func(t *testing.T) { RunLifecycle(t, open) }},
		{"Orgs", func(t *testing.T) { RunOrgs(t, open) }},
		{"Runs", func(t *testing.T) { RunRuns(t, open) }},
		{"Seals", func(t *testing.T) { RunSeals(t, open) }},
		{"Batches", func(t *testing.T) { RunBatches(t, open) }},
		{"VPECs", func(t *testing.T) { RunVPECs(t, open) }},
		{"VPECLog", func(t *testing.T) { RunVPECLog(t, open) }},
		{"Manifests", func(t *testing.T) { RunManifests(t, open) }},
		{"Profiles", func(t *testing.T) { RunProfiles(t, func(t *testing.T) store.ProfileStore { return open(t) }) }},
		{"Circuits", func(t *testing.T) { RunCircuits(t, func(t *testing.T) store.CircuitStore { return open(t) }) }},
		{"Calibrations", func(t *testing.T) { RunCalibrations(t, open) }},
		{"Sessions", func(t *testing.T) { RunSessions(t, open) }},
		{"WebSessions", func(t *testing.T) { RunWebSessions(t, open) }},
		{"Identity", func(t *testing.T) { RunIdentity(t, func(t *testing.T) store.IdentityStore { return open(t) }) }},
	}
	for _, r := range roles {
		t.Run(r.name, r.run)
	}
}

// A test is one case of a role's suite, on a fresh store of type S.
type test[S any] struct {
	name string
	fn   func(t *testing.T, s S)
}

// run runs each test as a subtest on a fresh store from open.
func run[S any](t *testing.T, open func(t *testing.T) S, tests []test[S]) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
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

// sandboxKey adds a sandbox key to f's organisation.
func sandboxKey(t *testing.T, s store.Store, f fixture) store.APIKey {
	t.Helper()
	h := sha256.Sum256([]byte("sk_sb_" + f.org.Name))
	k := store.APIKey{ID: fmt.Sprintf("pk_sb_%x", h[:6]), OrgID: f.org.ID, Environment: "sandbox", Hash: h[:], CreatedAt: T0.Add(time.Second)}
	if err := s.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return k
}
