// Package pgtest gives a test a PostgreSQL schema of its own in the
// database SVC_TEST_POSTGRES_DSN names (scripts/postgres.sh start prints
// the line; make unit sets it), dropped when the test ends. Without the
// variable the test is skipped. A database records one service identity,
// so tests with key material of their own need a schema of their own.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvDSN is the environment variable naming the test database.
const EnvDSN = "SVC_TEST_POSTGRES_DSN"

// Schema is a fresh schema of the test database.
type Schema struct {
	// Name is the schema's name: the prefix and 12 random hex digits.
	Name string
	// DSN is the test database's DSN with search_path set to the schema.
	DSN string
	// Admin is a pool on the database itself (search_path unchanged),
	// closed at cleanup: for statements on the schema from outside.
	Admin *pgxpool.Pool
}

// New makes a schema named prefix and random hex digits, or skips tb when
// SVC_TEST_POSTGRES_DSN is not set. The schema is dropped at cleanup.
func New(tb testing.TB, prefix string) *Schema {
	tb.Helper()
	base := os.Getenv(EnvDSN)
	if base == "" {
		tb.Skipf("%s is not set: run scripts/postgres.sh start and export the line it prints (make unit does)", EnvDSN)
	}
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, base)
	if err != nil {
		tb.Fatalf("connect to %s: %v", EnvDSN, err)
	}
	tb.Cleanup(admin.Close)
	b := make([]byte, 6)
	rand.Read(b)
	s := &Schema{Name: prefix + hex.EncodeToString(b), Admin: admin}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+s.Name); err != nil {
		tb.Fatalf("create schema %s: %v", s.Name, err)
	}
	tb.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP SCHEMA "+s.Name+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", s.Name, err)
		}
	})
	s.DSN = WithSearchPath(tb, base, s.Name)
	return s
}

// WithSearchPath returns dsn (a URL or keyword/value DSN) with its
// search_path set to schema.
func WithSearchPath(tb testing.TB, dsn, schema string) string {
	tb.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			tb.Fatalf("%s is not a valid URL: %v", EnvDSN, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}
