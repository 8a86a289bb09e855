package cli_test

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite"

	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// TestOlderSvcRefusesNewerSchema: an svc older than the one that migrated
// its database (a downgrade, or an old server left running in a rolling
// upgrade and restarted) refuses to start, exit 4, naming the database's
// schema version and its own, and saying what to do; admin commands refuse
// the same way. The database is not touched. docs/OPERATIONS.md
// (Upgrades) says so.
func TestOlderSvcRefusesNewerSchema(t *testing.T) {
	newer := sqlite.KnownSchemaVersion() + 1
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) (flags []string, bump func(), version func() int)
	}{
		{"sqlite", func(t *testing.T) ([]string, func(), func() int) {
			data := t.TempDir()
			path := filepath.Join(data, "svc.db")
			exec1 := func(q string, args ...any) *sql.DB {
				db, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				if q != "" {
					if _, err := db.Exec(q, args...); err != nil {
						t.Fatal(err)
					}
				}
				return db
			}
			return []string{"--data-dir", data}, func() {
					exec1("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from_a_newer_svc', '')", newer).Close()
				}, func() int {
					db := exec1("")
					defer db.Close()
					var v int
					db.QueryRow("SELECT max(version) FROM schema_migrations").Scan(&v)
					return v
				}
		}},
		{"postgres", func(t *testing.T) ([]string, func(), func() int) {
			dsn := pgtest.New(t, "svc_cli_").DSN
			pool, err := pgxpool.New(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			return []string{"--data-dir", t.TempDir(), "--database", dsn}, func() {
					if _, err := pool.Exec(context.Background(), "INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_a_newer_svc')", newer); err != nil {
						t.Fatal(err)
					}
				}, func() int {
					var v int
					pool.QueryRow(context.Background(), "SELECT max(version) FROM schema_migrations").Scan(&v)
					return v
				}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags, bump, version := tc.store(t)
			svcOut(t, append([]string{"admin", "org", "create", "acme"}, flags...)...)
			bump()
			want := fmt.Sprintf("the database schema is at version %d but this svc knows versions up to %d", newer, newer-1)
			data := flags[1]
			out, code := serveOnce(t, data, flags[2:]...)
			if code != 4 || !strings.Contains(out, want) ||
				!strings.Contains(out, "hint: a newer svc migrated this database: run that svc version or a newer one, or restore the backup made before the upgrade") {
				t.Fatalf("svc serve on a newer schema: exit %d\n%s", code, out)
			}
			cmd := append([]string{"admin", "key", "list"}, flags...)
			if out, err := execSvc(cmd...); exitCode(err) != 4 || !strings.Contains(out, want) {
				t.Fatalf("svc admin key list on a newer schema: %v\n%s", err, out)
			}
			if v := version(); v != newer {
				t.Fatalf("the refused start changed the schema version to %d", v)
			}
		})
	}
}

func execSvc(args ...string) (string, error) {
	out, err := exec.Command("svc", args...).CombinedOutput()
	return string(out), err
}
