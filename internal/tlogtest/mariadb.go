package tlogtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDB returns a fresh, empty database on the MariaDB (or MySQL) server
// of $SVC_TEST_MARIADB_DSN (scripts/mariadb.sh starts one; make unit sets
// it), dropped when the test ends, and its DSN. Without the variable the
// test is skipped, unless SVC_REQUIRE_MARIADB=1, when it fails.
func MariaDB(t testing.TB) (*sql.DB, string) {
	t.Helper()
	dsn := os.Getenv("SVC_TEST_MARIADB_DSN")
	if dsn == "" {
		if os.Getenv("SVC_REQUIRE_MARIADB") == "1" {
			t.Fatal("SVC_TEST_MARIADB_DSN is not set: run scripts/mariadb.sh start (SVC_REQUIRE_MARIADB=1)")
		}
		t.Skip("SVC_TEST_MARIADB_DSN is not set: eval \"export $(scripts/mariadb.sh start)\" to run the MySQL backend's tests (make unit does)")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("SVC_TEST_MARIADB_DSN: %v", err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	b := make([]byte, 6)
	rand.Read(b)
	name := "svc_tlog_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database on %s: %v", cfg.Addr, err)
	}
	cfg.DBName = name
	own := cfg.FormatDSN()
	db, err := sql.Open("mysql", own)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		a, err := sql.Open("mysql", dsn)
		if err == nil {
			a.Exec("DROP DATABASE " + name)
			a.Close()
		}
	})
	return db, own
}
