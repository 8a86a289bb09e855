package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

func openTemp(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openTemp(t, filepath.Join(t.TempDir(), "svc.db"))
	})
}

func TestPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc.db")
	storetest.RunPersistence(t, func(t *testing.T) store.Store {
		return openTemp(t, path)
	})
}

// TestReopenDoesNotReapplyMigrations: a second Open finds the schema
// current and leaves schema_migrations as it was.
func TestReopenDoesNotReapplyMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	type row struct {
		version         int
		name, appliedAt string
	}
	read := func(db *DB) []row {
		rows, err := db.r.QueryContext(ctx, "SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.version, &r.name, &r.appliedAt); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	db := openTemp(t, path)
	first := read(db)
	if len(first) == 0 || first[0].version != 1 || first[0].name != "init" {
		t.Fatalf("schema_migrations after the first Open = %+v", first)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil || v != len(first) {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(first))
	}
	db.Close()
	time.Sleep(2 * time.Millisecond) // a re-applied migration would get a later applied_at
	db = openTemp(t, path)
	if again := read(db); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("schema_migrations after reopening = %+v, want %+v", again, first)
	}
}

// TestNewerSchemaRefused: a binary does not open a database migrated by a
// newer one.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	db := openTemp(t, path)
	if _, err := db.w.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', '')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err := Open(ctx, path)
	if db != nil {
		db.Close()
	}
	// The refusal names both versions and is matchable, so svc serve can
	// say what to do (run the newer svc, or restore a backup).
	var tooNew *store.SchemaTooNewError
	if !errors.Is(err, store.ErrSchemaTooNew) || !errors.As(err, &tooNew) || tooNew.Database != 999 || tooNew.Binary != KnownSchemaVersion() ||
		!strings.Contains(err.Error(), "version 999") {
		t.Fatalf("Open of a newer schema: err = %v", err)
	}
}

func TestPragmas(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, filepath.Join(t.TempDir(), "svc.db"))
	for _, c := range []struct {
		pool *DB
		name string
		want string
	}{
		{db, "journal_mode", "wal"},
		{db, "synchronous", "2"}, // FULL
		{db, "foreign_keys", "1"},
		{db, "busy_timeout", "5000"},
	} {
		var got string
		if err := c.pool.w.QueryRowContext(ctx, "PRAGMA "+c.name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("writer PRAGMA %s = %s, want %s", c.name, got, c.want)
		}
	}
	var fk, busy, qo string
	if err := db.r.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRowContext(ctx, "PRAGMA query_only").Scan(&qo); err != nil {
		t.Fatal(err)
	}
	if fk != "1" || busy != "5000" || qo != "1" {
		t.Errorf("reader pragmas: foreign_keys=%s busy_timeout=%s query_only=%s", fk, busy, qo)
	}
}

// TestNanoseconds: SQLite keeps a timestamp's nanoseconds.
func TestNanoseconds(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, filepath.Join(t.TempDir(), "svc.db"))
	at := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", -7*3600))
	if err := db.CreateOrg(ctx, store.Org{ID: "o", Name: "o", Tier: "standard", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	o, err := db.OrgByID(ctx, "o")
	if err != nil || !o.CreatedAt.Equal(at) || o.CreatedAt.Location() != time.UTC {
		t.Fatalf("CreatedAt = %v, %v; want %v in UTC", o.CreatedAt, err, at)
	}
}

func TestOpenRefusesMemory(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file::memory:?cache=shared", "a?b"} {
		if db, err := Open(context.Background(), p); err == nil {
			db.Close()
			t.Errorf("Open(%q): err = nil", p)
		}
	}
}

// TestTwoProcesses simulates svc admin beside svc serve: two DBs opened on
// the same file at the same time (both migrating it) write concurrently
// (storetest.RunHandles), each with several goroutines. Nothing fails with
// SQLITE_BUSY, every record is stored once, and exactly one seal wins.
func TestTwoProcesses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	dbs := make([]*DB, 2)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Go(func() {
			db, err := Open(ctx, path)
			if err != nil {
				t.Errorf("Open %d: %v", i, err)
				return
			}
			dbs[i] = db
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, db := range dbs {
		t.Cleanup(func() { db.Close() })
	}
	storetest.RunHandles(t, []store.Store{dbs[0], dbs[1]})
}

// TestSeparateProcesses runs svc admin beside svc serve for real: three
// processes (this one and two copies of the test binary) open one new file
// at the same moment and append interleaved records to one run, with
// several goroutines each. Every record is stored once; no write fails
// with SQLITE_BUSY.
func TestSeparateProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const procs, n = 3, 300
	path := filepath.Join(t.TempDir(), "svc.db")
	ready := filepath.Join(t.TempDir(), "ready")
	var cmds []*exec.Cmd
	for p := 1; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SVC_SQLITE_HELPER="+strings.Join([]string{path, ready, strconv.Itoa(p), strconv.Itoa(procs), strconv.Itoa(n)}, "|"))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	errc := make(chan error, 1)
	go func() { errc <- helperAppend(path, ready, 0, procs, n) }()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process %d: %v", i+1, err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatalf("this process: %v", err)
	}
	db := openTemp(t, path)
	recs, err := db.Records(context.Background(), "run_1")
	if err != nil || len(recs) != n {
		t.Fatalf("Records = %d, %v; want %d", len(recs), err, n)
	}
	for j, r := range recs {
		if want := storetest.MakeRecord("run_1", int64(j), fmt.Sprintf("rec-%d", j), 600); r.RecordID != want.RecordID || string(r.Body) != string(want.Body) {
			t.Fatalf("Records[%d] = %s, want %s", j, r.RecordID, want.RecordID)
		}
	}
}

// TestHelperProcess is TestSeparateProcesses's child process; it does
// nothing in a normal test run.
func TestHelperProcess(t *testing.T) {
	arg := os.Getenv("SVC_SQLITE_HELPER")
	if arg == "" {
		t.Skip("only run by TestSeparateProcesses")
	}
	f := strings.Split(arg, "|")
	p, _ := strconv.Atoi(f[2])
	procs, _ := strconv.Atoi(f[3])
	n, _ := strconv.Atoi(f[4])
	if err := helperAppend(f[0], f[1], p, procs, n); err != nil {
		t.Fatal(err)
	}
}

// helperAppend opens the database, makes sure the org and run exist, waits
// for the other processes to have done the same, and appends records p, p+procs, p+2*procs... from 3 goroutines; every process
// also re-sends the first few records of the others (a retrying client).
func helperAppend(path, ready string, p, procs, n int) error {
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: storetest.T0}); err != nil && !errors.Is(err, store.ErrExists) {
		return err
	}
	if err := db.CreateRun(ctx, store.Run{ID: "run_1", OrgID: "org_a", OpenedAt: storetest.T0}); err != nil && !errors.Is(err, store.ErrExists) {
		return err
	}
	// Barrier: start appending when every process has opened the file.
	if err := os.WriteFile(fmt.Sprintf("%s.%d", ready, p), nil, 0o600); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		m, _ := filepath.Glob(ready + ".*")
		if len(m) == procs {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d: the other processes did not open the database", p)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range 3 {
		wg.Go(func() {
			for j := p + procs*g; j < n; j += 3 * procs {
				rec := storetest.MakeRecord("run_1", int64(j), fmt.Sprintf("rec-%d", j), 600)
				if _, err := db.AppendRecord(ctx, "org_a", rec, store.Limits{}); err != nil {
					errs <- fmt.Errorf("process %d: AppendRecord(%d): %w", p, j, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for j := range 2 * procs {
			rec := storetest.MakeRecord("run_1", int64(j), fmt.Sprintf("rec-%d", j), 600)
			if _, err := db.AppendRecord(ctx, "org_a", rec, store.Limits{}); err != nil {
				errs <- fmt.Errorf("process %d: resend AppendRecord(%d): %w", p, j, err)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	return <-errs
}

// BenchmarkAppendRecord appends ~600-byte records one after another to one
// run, each a durable transaction (WAL fsync per commit).
func BenchmarkAppendRecord(b *testing.B) {
	storetest.BenchAppendRecord(b, openTemp(b, filepath.Join(b.TempDir(), "svc.db")))
}

// BenchmarkAppendRecordParallel appends ~600-byte records from
// 16×GOMAXPROCS goroutines, each to a run of its own, as an HTTP server
// under load does; group commit shares each fsync among the waiting
// appends. It reports records/s, the p50, p99 and maximum latency, and the
// mean number of writes per commit.
func BenchmarkAppendRecordParallel(b *testing.B) {
	db := openTemp(b, filepath.Join(b.TempDir(), "svc.db"))
	storetest.BenchAppendRecordParallel(b, db, 16)
	if c := db.commits.Load(); c > 0 {
		b.ReportMetric(float64(db.committed.Load())/float64(c), "writes/commit")
	}
}
