package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/migrate"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

// dsnEnv names the environment variable holding the test server's DSN;
// scripts/postgres.sh start prints it.
const dsnEnv = "SVC_TEST_POSTGRES_DSN"

// testSchema creates a fresh schema in the test database and returns a DSN
// whose search_path is that schema; the schema is dropped when the test
// ends. Without SVC_TEST_POSTGRES_DSN the test is skipped.
func testSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(dsnEnv)
	if base == "" {
		t.Skipf("%s is not set: run scripts/postgres.sh start and export the line it prints to test the PostgreSQL store", dsnEnv)
	}
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, base)
	if err != nil {
		t.Fatalf("connecting to %s: %v", dsnEnv, err)
	}
	t.Cleanup(admin.Close)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "svc_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(t, base, schema)
}

func withSearchPath(t testing.TB, dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s is not a valid URL", dsnEnv)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

func openDSN(t testing.TB, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	if os.Getenv(dsnEnv) == "" {
		t.Skipf("%s is not set: run scripts/postgres.sh start and export the line it prints to test the PostgreSQL store", dsnEnv)
	}
	storetest.Run(t, func(t *testing.T) store.Store {
		return openDSN(t, testSchema(t))
	})
}

func TestPersistence(t *testing.T) {
	dsn := testSchema(t)
	storetest.RunPersistence(t, func(t *testing.T) store.Store {
		return openDSN(t, dsn)
	})
}

// TestConcurrentOpen: servers starting together on a new database apply
// each migration once, and a later Open applies none.
func TestConcurrentOpen(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	const n = 6
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			db, err := Open(ctx, dsn)
			if err != nil {
				t.Errorf("Open %d: %v", i, err)
				return
			}
			db.Close()
		})
	}
	wg.Wait()
	db := openDSN(t, dsn)
	read := func() string {
		rows, err := db.pool.Query(ctx, "SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var v int
			var name string
			var at any
			if err := rows.Scan(&v, &name, &at); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(v, name, at))
		}
		return strings.Join(out, "\n")
	}
	first := read()
	v, err := db.SchemaVersion(ctx)
	if err != nil || v < 1 || strings.Count(first, "\n")+1 != v {
		t.Fatalf("SchemaVersion = %d, %v; schema_migrations:\n%s", v, err, first)
	}
	db2 := openDSN(t, dsn)
	db2.Close()
	if again := read(); again != first {
		t.Fatalf("schema_migrations changed on reopen:\n%s\nwant\n%s", again, first)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	db := openDSN(t, dsn)
	if _, err := db.pool.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES (999, 'future')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err := Open(ctx, dsn)
	if db != nil {
		db.Close()
	}
	// The refusal names both versions and is matchable, so svc serve can
	// say what to do (run the newer svc, or restore a backup).
	var tooNew *store.SchemaTooNewError
	if !errors.Is(err, store.ErrSchemaTooNew) || !errors.As(err, &tooNew) || tooNew.Database != 999 || tooNew.Binary != len(mustMigrations(t)) ||
		!strings.Contains(err.Error(), "version 999") {
		t.Fatalf("Open of a newer schema: err = %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, dsn := range []string{"postgres://%zz", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"} {
		if db, err := Open(context.Background(), dsn); err == nil {
			db.Close()
			t.Errorf("Open(%q): err = nil", dsn)
		}
	}
}

// TestTwoServers: two DBs (two pools, as two svc servers) append records to
// one run concurrently, then both seal it at once: every record is stored
// once, exactly one seal wins, and later appends from either fail with
// ErrSealed.
func TestTwoServers(t *testing.T) {
	dsn := testSchema(t)
	storetest.RunHandles(t, []store.Store{openDSN(t, dsn), openDSN(t, dsn)})
}

// BenchmarkAppendRecord appends ~600-byte records one after another to one
// run, each a durable transaction (synchronous_commit=on).
func BenchmarkAppendRecord(b *testing.B) {
	storetest.BenchAppendRecord(b, openDSN(b, testSchema(b)))
}

// BenchmarkAppendRecordParallel appends ~600-byte records from
// 16×GOMAXPROCS goroutines, each to a run of its own, as an HTTP server
// under load does. It reports records/s and the p50, p99 and maximum
// latency.
func BenchmarkAppendRecordParallel(b *testing.B) {
	storetest.BenchAppendRecordParallel(b, openDSN(b, testSchema(b)), 16)
}

// TestMigrateFrom0001: a database created by a binary that knew only
// 0001_init (data included) is brought to the current schema by Open.
func TestMigrateFrom0001(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 2 {
		t.Fatalf("%d migrations, want at least 2", len(ms))
	}
	old, err := open(ctx, dsn, ms[:1])
	if err != nil {
		t.Fatal(err)
	}
	storetest.SeedRuns(t, old, "run_1", "run_sealed")
	// The current code's seal and append need the current schema: the old
	// rows are written with the SQL of version 1.
	if _, err := old.pool.Exec(ctx, "INSERT INTO vpecs VALUES ('vpec-1', 'run_sealed', 'org_a', $1, '{}')", storetest.T0); err != nil {
		t.Fatal(err)
	}
	if _, err := old.pool.Exec(ctx, "UPDATE runs SET sealed = true, closed_at = $1, vpec_id = 'vpec-1' WHERE id = 'run_sealed'", storetest.T0); err != nil {
		t.Fatal(err)
	}
	r0 := storetest.MakeRecord("run_1", 0, "rec-0", 100)
	if _, err := old.pool.Exec(ctx, "INSERT INTO records VALUES ($1, $2, $3, $4, $5)", r0.RunID, r0.Sequence, r0.RecordID, r0.ChainHash, r0.Body); err != nil {
		t.Fatal(err)
	}
	if v, err := old.SchemaVersion(ctx); err != nil || v != 1 {
		t.Fatalf("SchemaVersion of the old database = %d, %v; want 1", v, err)
	}
	if err := old.CreateReviewerKey(ctx, store.ReviewerKey{OrgID: "org_a", KeyID: "k", CreatedAt: storetest.T0}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("CreateReviewerKey at version 1: err = %v, want a missing table", err)
	}
	old.Close()

	db := openDSN(t, dsn)
	if v, err := db.SchemaVersion(ctx); err != nil || v != len(ms) {
		t.Fatalf("SchemaVersion after Open = %d, %v; want %d", v, err, len(ms))
	}
	storetest.CheckUpgradeFrom0001(t, db, r0)
	rows, err := db.pool.Query(ctx, "SELECT version || '_' || name FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range ms {
		want = append(want, fmt.Sprintf("%d_%s", m.Version, m.Name))
	}
	if got := strings.Join(names, ","); got != strings.Join(want, ",") {
		t.Errorf("schema_migrations = %s, want %s", got, strings.Join(want, ","))
	}
}

// TestMigrateRunMetadata: 0003 fills the metadata of the runs an older
// binary stored (record count, bytes, last sequence and chain hash), and
// appends after the upgrade continue from it.
func TestMigrateRunMetadata(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	old, err := open(ctx, dsn, ms[:2])
	if err != nil {
		t.Fatal(err)
	}
	storetest.SeedRuns(t, old, "run_1", "run_empty")
	for _, r := range storetest.UpgradeRecords() {
		if _, err := old.pool.Exec(ctx, "INSERT INTO records VALUES ($1, $2, $3, $4, $5)", r.RunID, r.Sequence, r.RecordID, r.ChainHash, r.Body); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	storetest.CheckRunMetadataUpgrade(t, openDSN(t, dsn))
}

func mustMigrations(t *testing.T) []migrate.Migration {
	t.Helper()
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestVPECBodyLZ4: a VPEC's body is compressed with LZ4 (migration 0009;
// pglz made storing a 5 MB VPEC four times slower), and reads back
// byte for byte.
func TestVPECBodyLZ4(t *testing.T) {
	ctx := context.Background()
	db := openDSN(t, testSchema(t))
	var lz4 bool
	if err := db.pool.QueryRow(ctx, "SELECT count(*) > 0 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)").Scan(&lz4); err != nil {
		t.Fatal(err)
	}
	if !lz4 {
		t.Skip("this PostgreSQL server has no LZ4 compression: vpecs.body keeps pglz")
	}
	var method string
	if err := db.pool.QueryRow(ctx, "SELECT attcompression::text FROM pg_attribute WHERE attrelid = 'vpecs'::regclass AND attname = 'body'").Scan(&method); err != nil {
		t.Fatal(err)
	}
	if method != "l" {
		t.Fatalf("vpecs.body compression %q, want l (lz4)", method)
	}
	if err := db.CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(ctx, store.Run{ID: "run_1", OrgID: "org_a", OpenedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.SealRecords(ctx, "org_a", "run_1", "key", storetest.T0); err != nil {
		t.Fatal(err)
	}
	body := []byte(strings.Repeat(`{"check":"pii","sequence":1},`, 1<<16)) // 1.9 MB: stored compressed, out of line
	if err := db.StoreVPEC(ctx, "org_a", "run_1", store.VPEC{ID: "vpec_1", RunID: "run_1", OrgID: "org_a", IssuedAt: storetest.T0, Body: body}); err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := db.pool.QueryRow(ctx, "SELECT coalesce(pg_column_compression(body), '') FROM vpecs WHERE id = 'vpec_1'").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != "lz4" {
		t.Fatalf("the stored body's compression is %q, want lz4", stored)
	}
	v, err := db.VPEC(ctx, "org_a", "vpec_1")
	if err != nil || !bytes.Equal(v.Body, body) {
		t.Fatalf("VPEC read back: %d bytes, %v; want the %d bytes stored", len(v.Body), err, len(body))
	}
}

// TestMigrateRecordsArrivalOrder: 0010 changes nothing on PostgreSQL (it
// keeps the stores' versions the same): the records of a version 9
// database read back intact, under the same uniqueness rules and keys.
func TestMigrateRecordsArrivalOrder(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	ms := mustMigrations(t)
	old, err := open(ctx, dsn, ms[:9])
	if err != nil {
		t.Fatal(err)
	}
	storetest.WriteArrivalRecords(t, old)
	old.Close()

	db := openDSN(t, dsn)
	rows, err := db.pool.Query(ctx, `SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'records'::regclass AND contype IN ('p', 'u') ORDER BY conname`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := "records_pkey PRIMARY KEY (run_id, sequence)|records_run_id_record_id_key UNIQUE (run_id, record_id)"; strings.Join(got, "|") != want {
		t.Errorf("records' keys after 0010: %q, want %q", got, want)
	}
	storetest.CheckArrivalOrderUpgrade(t, db)
}
