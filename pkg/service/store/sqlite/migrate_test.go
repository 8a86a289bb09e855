package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/migrate"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

// oldDatabase creates the database file path at the schema of migrations
// ms (an older binary's), without this binary's statements, which need the
// current schema: the caller writes its rows with that version's SQL.
func oldDatabase(t *testing.T, path string, ms []migrate.Migration) *sql.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", path+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if _, err := db.ExecContext(ctx, m.SQL); err != nil {
			t.Fatalf("%04d_%s: %v", m.Version, m.Name, err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO schema_migrations VALUES (?, ?, '')", m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestMigrateRunMetadata: 0003 fills the metadata of the runs an older
// binary stored (record count, bytes, last sequence and chain hash), and
// appends after the upgrade continue from it.
func TestMigrateRunMetadata(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	old := oldDatabase(t, path, ms[:2])
	for _, q := range []string{
		"INSERT INTO orgs VALUES ('org_a', 'a', 'standard', '2025-03-14T15:09:26.535897000Z')",
		"INSERT INTO runs (id, org_id, workflow_id, surface_id, policy_pack_id, policy_snapshot_hash, process_context_hash, environment, api_key_id, sealed, opened_at) VALUES ('run_1', 'org_a', '', '', '', '', '', '', '', 0, '2025-03-14T15:09:26.535897000Z')",
		"INSERT INTO runs (id, org_id, workflow_id, surface_id, policy_pack_id, policy_snapshot_hash, process_context_hash, environment, api_key_id, sealed, opened_at) VALUES ('run_empty', 'org_a', '', '', '', '', '', '', '', 0, '2025-03-14T15:09:26.535897000Z')",
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var recs []store.Record
	var bytes int64
	for _, seq := range []int64{1, 2, 5, 3} {
		r := storetest.MakeRecord("run_1", seq, "rec-"+string(rune('0'+seq)), 100+int(seq))
		recs = append(recs, r)
		bytes += int64(len(r.Body))
		if _, err := old.ExecContext(ctx, "INSERT INTO records VALUES (?, ?, ?, ?, ?)", r.RunID, r.Sequence, r.RecordID, r.ChainHash, r.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := openTemp(t, path)
	run, err := db.Run(ctx, "org_a", "run_1")
	if err != nil {
		t.Fatal(err)
	}
	if run.RecordCount != 4 || run.RecordBytes != bytes || run.LastSequence != 5 || run.LastChainHash != recs[2].ChainHash {
		t.Errorf("run after 0003 = count %d bytes %d last %d %s; want 4 %d 5 %s", run.RecordCount, run.RecordBytes, run.LastSequence, run.LastChainHash, bytes, recs[2].ChainHash)
	}
	empty, err := db.Run(ctx, "org_a", "run_empty")
	if err != nil || empty.RecordCount != 0 || empty.RecordBytes != 0 || empty.LastSequence != 0 || empty.LastChainHash != "" {
		t.Errorf("empty run after 0003 = %+v, %v", empty, err)
	}
	r6 := storetest.MakeRecord("run_1", 6, "rec-6", 50)
	if _, err := db.AppendRecord(ctx, "org_a", r6, store.Limits{}); err != nil {
		t.Fatal(err)
	}
	run, err = db.Run(ctx, "org_a", "run_1")
	if err != nil || run.RecordCount != 5 || run.RecordBytes != bytes+int64(len(r6.Body)) || run.LastSequence != 6 || run.LastChainHash != r6.ChainHash {
		t.Errorf("run after an append = %+v, %v", run, err)
	}
}
