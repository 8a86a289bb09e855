package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// openAtVersion opens a new database at path with this binary's first
// version migrations only: an older binary's schema, written through the
// current code where its statements still apply.
func openAtVersion(t *testing.T, path string, version int) *DB {
	t.Helper()
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	db, err := open(context.Background(), path, ms[:version])
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestMigrateRecordsArrivalOrder: 0010 moves the records of an older
// database (a WITHOUT ROWID table keyed by run and sequence) into arrival
// order, with every record intact and the same uniqueness rules; the new
// table has the arrival rowid and the two unique indexes.
func TestMigrateRecordsArrivalOrder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	old := openAtVersion(t, path, 9)
	storetest.WriteArrivalRecords(t, old)
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

// TestMigrateRecordsKilled: a process killed (SIGKILL) while 0010 copies
// the records leaves the database whole at version 9 (the migration is one
// transaction), and the next Open migrates it with every record intact.
func TestMigrateRecordsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	old := openAtVersion(t, path, 9)
	const runs, each, batch = 32, 2000, 500
	runIDs := make([]string, runs)
	for r := range runs {
		runIDs[r] = fmt.Sprintf("run_%d", r)
	}
	storetest.SeedRuns(t, old, runIDs...)
	for from := 0; from < each; from += batch {
		for r := range runs {
			recs := make([]store.Record, 0, batch)
			for i := from; i < from+batch; i++ {
				recs = append(recs, storetest.MakeRecord(fmt.Sprintf("run_%d", r), int64(i), fmt.Sprintf("rec_%d_%d", r, i), 650))
			}
			if _, err := old.AppendRecords(ctx, "org_a", recs, store.Limits{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	// Kill the migrating process once its uncommitted copy has reached the
	// WAL (SQLite spills the transaction's pages there as its cache fills).
	cmd := exec.Command(os.Args[0], "-test.run=^TestMigrateHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SVC_SQLITE_MIGRATE_HELPER="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := false
poll:
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		select {
		case err := <-exited:
			t.Logf("the migration ended before it could be killed (%v)", err)
			break poll
		default:
		}
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 1<<20 {
			cmd.Process.Kill()
			<-exited
			killed = true
			break
		}
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var version int
	if err := raw.QueryRowContext(ctx, migrate.VersionQuery).Scan(&version); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	switch {
	case killed && version == 9:
		t.Logf("killed during the copy: the database is at version 9")
	case killed:
		t.Logf("killed after the migration committed (version %d)", version)
	}
	if version != 9 && version != KnownSchemaVersion() {
		t.Fatalf("after the kill the database is at version %d: neither 9 nor %d", version, KnownSchemaVersion())
	}

	db := openTemp(t, path)
	if v, err := db.SchemaVersion(ctx); err != nil || v != KnownSchemaVersion() {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, KnownSchemaVersion())
	}
	for _, r := range []int{0, 17, runs - 1} {
		run := fmt.Sprintf("run_%d", r)
		recs, err := db.Records(ctx, run)
		if err != nil || len(recs) != each {
			t.Fatalf("Records(%s) = %d, %v; want %d", run, len(recs), err, each)
		}
		for i, got := range recs {
			if want := storetest.MakeRecord(run, int64(i), fmt.Sprintf("rec_%d_%d", r, i), 650); got.RecordID != want.RecordID || got.Sequence != want.Sequence || string(got.Body) != string(want.Body) {
				t.Fatalf("Records(%s)[%d] = %s@%d, want %s@%d", run, i, got.RecordID, got.Sequence, want.RecordID, want.Sequence)
			}
		}
	}
	var n int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM records").Scan(&n); err != nil || n != runs*each {
		t.Fatalf("%d records, %v; want %d", n, err, runs*each)
	}
}

// TestMigrateHelperProcess is TestMigrateRecordsKilled's child process:
// it opens (so migrates) the database; it does nothing in a normal test
// run.
func TestMigrateHelperProcess(t *testing.T) {
	path := os.Getenv("SVC_SQLITE_MIGRATE_HELPER")
	if path == "" {
		t.Skip("only run by TestMigrateRecordsKilled")
	}
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}
