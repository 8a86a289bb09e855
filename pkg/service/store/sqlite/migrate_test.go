package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
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
	for _, r := range storetest.UpgradeRecords() {
		if _, err := old.ExecContext(ctx, "INSERT INTO records VALUES (?, ?, ?, ?, ?)", r.RunID, r.Sequence, r.RecordID, r.ChainHash, r.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	storetest.CheckRunMetadataUpgrade(t, openTemp(t, path))
}

// TestMigrateRecordsArrivalOrder: 0010 moves the records of an older
// database (a WITHOUT ROWID table keyed by run and sequence) into arrival
// order, with every record intact and the same uniqueness rules; the new
// table has the arrival rowid and the two unique indexes.
func TestMigrateRecordsArrivalOrder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	old, err := open(ctx, path, ms[:9])
	if err != nil {
		t.Fatal(err)
	}
	if err := old.CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"run_1", "run_2"} {
		if err := old.CreateRun(ctx, store.Run{ID: id, OrgID: "org_a", OpenedAt: storetest.T0}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range storetest.ArrivalRecords() {
		if _, err := old.AppendRecord(ctx, "org_a", r, store.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	var withoutRowid int
	if err := old.r.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name = 'records' AND sql LIKE '%WITHOUT ROWID%'").Scan(&withoutRowid); err != nil || withoutRowid != 1 {
		t.Fatalf("the version 9 table: %d, %v", withoutRowid, err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := openTemp(t, path)
	if v, err := db.SchemaVersion(ctx); err != nil || v < 10 {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
	var got []string
	rows, err := db.r.QueryContext(ctx, `SELECT group_concat(ii.name, ',') FROM pragma_index_list('records') AS il, pragma_index_info(il.name) AS ii
		WHERE il."unique" GROUP BY il.name ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var cols string
		if err := rows.Scan(&cols); err != nil {
			t.Fatal(err)
		}
		got = append(got, cols)
	}
	rows.Close()
	if strings.Join(got, " ") != "record_id,run_id run_id,sequence" {
		t.Errorf("unique indexes of records: %q, want (record_id, run_id) and (run_id, sequence)", got)
	}
	var arrivals int
	if err := db.r.QueryRowContext(ctx, "SELECT count(DISTINCT arrival) FROM records").Scan(&arrivals); err != nil || arrivals != len(storetest.ArrivalRecords()) {
		t.Errorf("arrival numbers: %d, %v", arrivals, err)
	}
	storetest.CheckArrivalOrderUpgrade(t, db)
}
