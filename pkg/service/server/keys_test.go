package server_test

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/postgres"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// twoServers is two service processes sharing one database: each has its
// own store handle and its own key cache.
type twoServers struct {
	stores [2]store.Store
	urls   [2]string
	exec   func(query string, args ...any) // runs SQL on the shared database
}

func startOn(t *testing.T, st store.Store, mat *server.Material) string {
	t.Helper()
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL
}

func sqliteTwo(t *testing.T) *twoServers {
	dir := t.TempDir()
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "svc.db")
	two := &twoServers{}
	for i := range two.stores {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		two.stores[i], two.urls[i] = st, startOn(t, st, mat)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	two.exec = func(q string, args ...any) {
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return two
}

// postgresTwo needs SVC_TEST_POSTGRES_DSN (scripts/postgres.sh start); the
// servers share a fresh schema, dropped at the end.
func postgresTwo(t *testing.T) *twoServers {
	ctx := context.Background()
	schema := pgtest.New(t, "svc_test_")
	mat, err := server.LoadMaterial(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	two := &twoServers{}
	for i := range two.stores {
		st, err := postgres.Open(ctx, schema.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		two.stores[i], two.urls[i] = st, startOn(t, st, mat)
	}
	two.exec = func(q string, args ...any) {
		if _, err := schema.Admin.Exec(ctx, strings.ReplaceAll(q, "api_keys", schema.Name+".api_keys"), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return two
}

// maxPolls bounds the wait for a revocation to reach the other server:
// polls pollEvery apart, so well past server.RevocationDelay (500 ms) of
// wall time even on a fast machine.
const (
	maxPolls  = 150
	pollEvery = 10 * time.Millisecond
)

// A key revoked (or deleted) through one process is refused by another
// process sharing the database within a bounded number of polls, with a
// 401 that says it was revoked; the organisation's other key still works.
func TestKeyRevocationReachesEveryServer(t *testing.T) {
	for _, db := range []struct {
		name string
		two  func(t *testing.T) *twoServers
	}{{"sqlite", sqliteTwo}, {"postgres", postgresTwo}} {
		t.Run(db.name, func(t *testing.T) {
			two := db.two(t)
			ctx := context.Background()
			st := two.stores[0]
			if _, err := server.CreateOrg(ctx, st, "acme", server.TierStandard, time.Now()); err != nil {
				t.Fatal(err)
			}
			var keys [3]string
			var ids [3]string
			for i := range keys {
				key, k, err := server.CreateAPIKey(ctx, st, "acme", vpec.Production, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				keys[i], ids[i] = key, k.ID
			}
			e := &env{t: t, url: two.urls[1]}
			// Server 1 has seen every key: they are in its cache.
			for _, key := range keys {
				if code, body := e.do("GET", "/api/v1/registry/profiles", key, nil, nil); code != 200 {
					t.Fatalf("before revocation: %d %s", code, body)
				}
			}
			// Revoke keys[0] through server 0's store (as svc admin key
			// revoke does), delete keys[1] from the database.
			if _, err := server.RevokeAPIKey(ctx, st, ids[0], time.Now()); err != nil {
				t.Fatal(err)
			}
			two.exec("DELETE FROM api_keys WHERE id = $1", ids[1])
			revokedAt := time.Now()
			for i, want := range []string{"revoked", "unknown API key"} {
				polls := 0
				for ; polls < maxPolls; polls++ {
					var eb api.ErrorBody
					code, _ := e.do("GET", "/api/v1/registry/profiles", keys[i], nil, &eb)
					if code == 401 {
						if !strings.Contains(eb.Error.Message, want) || eb.Error.Code != api.CodeUnauthorized {
							t.Fatalf("key %d refused with %+v; want unauthorized saying %q", i, eb.Error, want)
						}
						break
					}
					if code != 200 {
						t.Fatalf("key %d: %d", i, code)
					}
					time.Sleep(pollEvery)
				}
				if polls == maxPolls {
					t.Fatalf("key %d still accepted by the other server after %d polls %s apart", i, maxPolls, pollEvery)
				}
				t.Logf("key %d refused by the other server after %d polls, %s after the revocation", i, polls, time.Since(revokedAt).Round(time.Millisecond))
			}
			// Server 0 refuses the revoked key too, the third key works on both.
			e0 := &env{t: t, url: two.urls[0]}
			var eb api.ErrorBody
			if code, _ := e0.do("GET", "/api/v1/registry/profiles", keys[0], nil, &eb); code != 401 || !strings.Contains(eb.Error.Message, "revoked") {
				t.Fatalf("revoked key on server 0: %d %+v", code, eb)
			}
			for _, ee := range []*env{e, e0} {
				if code, body := ee.do("GET", "/api/v1/registry/profiles", keys[2], nil, nil); code != 200 {
					t.Fatalf("the other key: %d %s", code, body)
				}
			}
		})
	}
}
