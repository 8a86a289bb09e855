package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
)

// Upgrade tests: a backend writes rows with the SQL of an older schema
// version (its current code needs the current schema), opens the database
// with the current binary, which migrates it, and checks the result with
// these.

// CheckUpgradeFrom0001 checks a store migrated from schema version 1,
// whose database held org_a, its open run run_1 holding r0 at sequence 0,
// and its run run_sealed sealed with vpec-1: the old rows read back, and
// the tables and rules of later versions apply to them.
func CheckUpgradeFrom0001(t *testing.T, s store.Store, r0 store.Record) {
	t.Helper()
	ctx := context.Background()
	if got, err := s.RecordBySequence(ctx, "run_1", 0); err != nil || string(got.Body) != string(r0.Body) {
		t.Errorf("the record stored at version 1 = %+v, %v", got, err)
	}
	if err := s.CreateReviewerKey(ctx, store.ReviewerKey{OrgID: "org_a", KeyID: "k", PublicKey: []byte("pk"), CreatedAt: T0}); err != nil {
		t.Errorf("CreateReviewerKey: %v", err)
	}
	if err := s.CreateSession(ctx, store.Session{ID: "chk_1", OrgID: "org_a", RunID: "run_1", Kind: "check", OpenedAt: T0}); err != nil {
		t.Errorf("CreateSession in a run created at version 1: %v", err)
	}
	if err := s.CreateSession(ctx, store.Session{ID: "chk_2", OrgID: "org_a", RunID: "run_sealed", Kind: "check", OpenedAt: T0}); !errors.Is(err, store.ErrSealed) {
		t.Errorf("CreateSession in a run sealed at version 1: err = %v, want ErrSealed", err)
	}
	if err := s.CreateCalibrationRequest(ctx, store.CalibrationRequest{ID: "cal_req_1", OrgID: "org_a", ModelHash: "sha256:m", CreatedAt: T0, UpdatedAt: T0}); err != nil {
		t.Errorf("CreateCalibrationRequest: %v", err)
	}
}

// UpgradeRecords are the records an upgrade test writes into run_1 of
// org_a with the SQL of schema version 2 (no run metadata yet), out of
// sequence order; run_empty of org_a has none.
func UpgradeRecords() []store.Record {
	var recs []store.Record
	for _, seq := range []int64{1, 2, 5, 3} {
		recs = append(recs, MakeRecord("run_1", seq, fmt.Sprintf("rec-%d", seq), 100+int(seq)))
	}
	return recs
}

// CheckRunMetadataUpgrade checks a store migrated from schema version 2
// with UpgradeRecords in run_1: migration 0003 filled the runs' metadata
// (record count, bytes, last sequence and chain hash), and an append after
// the upgrade continues from it.
func CheckRunMetadataUpgrade(t *testing.T, s store.RunStore) {
	t.Helper()
	ctx := context.Background()
	recs := UpgradeRecords()
	var bytes int64
	for _, r := range recs {
		bytes += int64(len(r.Body))
	}
	run, err := s.Run(ctx, "org_a", "run_1")
	if err != nil {
		t.Fatal(err)
	}
	if run.RecordCount != 4 || run.RecordBytes != bytes || run.LastSequence != 5 || run.LastChainHash != recs[2].ChainHash {
		t.Errorf("run after 0003 = count %d bytes %d last %d %s; want 4 %d 5 %s", run.RecordCount, run.RecordBytes, run.LastSequence, run.LastChainHash, bytes, recs[2].ChainHash)
	}
	empty, err := s.Run(ctx, "org_a", "run_empty")
	if err != nil || empty.RecordCount != 0 || empty.RecordBytes != 0 || empty.LastSequence != 0 || empty.LastChainHash != "" {
		t.Errorf("empty run after 0003 = %+v, %v", empty, err)
	}
	r6 := MakeRecord("run_1", 6, "rec-6", 50)
	if _, err := s.AppendRecord(ctx, "org_a", r6, store.Limits{}); err != nil {
		t.Fatal(err)
	}
	run, err = s.Run(ctx, "org_a", "run_1")
	if err != nil || run.RecordCount != 5 || run.RecordBytes != bytes+int64(len(r6.Body)) || run.LastSequence != 6 || run.LastChainHash != r6.ChainHash {
		t.Errorf("run after an append = %+v, %v", run, err)
	}
}

// ArrivalRecords are the records an upgrade test appends, at schema
// version 9, to run_1 and run_2 of org_a, in this order: the two runs
// interleaved, and the record id rec-shared in both.
func ArrivalRecords() []store.Record {
	var recs []store.Record
	for seq := int64(0); seq < 6; seq++ {
		for _, run := range []string{"run_1", "run_2"} {
			id := fmt.Sprintf("rec-%s-%d", run, seq)
			if seq == 3 {
				id = "rec-shared"
			}
			recs = append(recs, MakeRecord(run, seq, id, 200+37*int(seq)))
		}
	}
	return recs
}

// An UpgradeWriter is what an upgrade test writes its old rows through: a
// store opened at an older schema version whose statements for these
// methods are still the current ones.
type UpgradeWriter interface {
	CreateOrg(ctx context.Context, o store.Org) error
	CreateRun(ctx context.Context, r store.Run) error
}

// SeedRuns creates org_a and its open runs with the given ids in s.
func SeedRuns(t *testing.T, s UpgradeWriter, runIDs ...string) {
	t.Helper()
	ctx := context.Background()
	if err := s.CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: T0}); err != nil {
		t.Fatal(err)
	}
	for _, id := range runIDs {
		if err := s.CreateRun(ctx, store.Run{ID: id, OrgID: "org_a", OpenedAt: T0}); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteArrivalRecords creates org_a with run_1 and run_2 in s, a store at
// schema version 9, and appends ArrivalRecords to them.
func WriteArrivalRecords(t *testing.T, s interface {
	UpgradeWriter
	AppendRecord(ctx context.Context, orgID string, rec store.Record, lim store.Limits) (bool, error)
}) {
	t.Helper()
	SeedRuns(t, s, "run_1", "run_2")
	for _, r := range ArrivalRecords() {
		if _, err := s.AppendRecord(context.Background(), "org_a", r, store.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
}

// CheckArrivalOrderUpgrade checks a store migrated past version 10
// (SQLite: records moved into arrival order, record ids indexed by
// (record_id, run_id)) from a database holding ArrivalRecords: each run's
// records read back in
// sequence order, byte for byte; a record id is still unique within its
// run (the same record again is a duplicate, another record with its id a
// conflict) and free in another run.
func CheckArrivalOrderUpgrade(t *testing.T, s store.RunStore) {
	t.Helper()
	ctx := context.Background()
	recs := ArrivalRecords()
	for _, run := range []string{"run_1", "run_2"} {
		var want []store.Record
		for _, r := range recs {
			if r.RunID == run {
				want = append(want, r)
			}
		}
		got, err := s.Records(ctx, run)
		if err != nil || len(got) != len(want) {
			t.Fatalf("Records(%s) after 0010 = %d records, %v; want %d", run, len(got), err, len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.RunID != w.RunID || g.Sequence != w.Sequence || g.RecordID != w.RecordID || g.ChainHash != w.ChainHash || string(g.Body) != string(w.Body) {
				t.Errorf("Records(%s)[%d] after 0010 = %s@%d, want %s@%d (or another chain hash or body)", run, i, g.RecordID, g.Sequence, w.RecordID, w.Sequence)
			}
		}
	}
	for _, c := range []struct {
		name    string
		rec     store.Record
		dup     bool
		wantErr error
	}{
		{"a record stored before the upgrade, again", recs[5], true, nil},
		{"its record id on another record of its run", MakeRecord("run_1", 6, "rec-shared", 90), false, store.ErrConflict},
		{"its sequence under another record id", MakeRecord("run_2", 5, "rec-other", 90), false, store.ErrConflict},
		{"another run's record id", MakeRecord("run_2", 6, "rec-run_1-0", 90), false, nil},
		{"a new record id", MakeRecord("run_1", 6, "rec-new", 90), false, nil},
	} {
		dup, err := s.AppendRecord(ctx, "org_a", c.rec, store.Limits{})
		if dup != c.dup || !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
			t.Errorf("%s: AppendRecord = %v, %v; want %v, %v", c.name, dup, err, c.dup, c.wantErr)
		}
	}
	if got, err := s.RecordBySequence(ctx, "run_2", 6); err != nil || got.RecordID != "rec-run_1-0" {
		t.Errorf("run_2's record 6 = %+v, %v", got, err)
	}
}
