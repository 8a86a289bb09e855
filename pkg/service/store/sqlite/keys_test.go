package sqlite

import (
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/migrate"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

// A key stored before 0004 (no revoked_at column) is valid after the
// upgrade, listed, and can be revoked.
func TestMigrateKeysTo0004(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 4 || ms[3].Name != "key_revocation_session_claim" {
		t.Fatalf("migration 4 is %+v", ms[3])
	}
	old, err := open(ctx, path, ms[:3])
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte("pk_live_old"))
	if err := old.CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	if err := old.CreateAPIKey(ctx, store.APIKey{ID: "pk_live_0123456789ab", OrgID: "org_a", Environment: "production", Hash: h[:], CreatedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	if v, err := old.SchemaVersion(ctx); err != nil || v != 3 {
		t.Fatalf("old database at version %d, %v", v, err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := openTemp(t, path)
	if k, err := db.APIKeyByHash(ctx, h[:]); err != nil || k.ID != "pk_live_0123456789ab" || !k.RevokedAt.IsZero() {
		t.Fatalf("APIKeyByHash after the upgrade = %+v, %v", k, err)
	}
	if ks, err := db.APIKeys(ctx, "org_a"); err != nil || len(ks) != 1 {
		t.Fatalf("APIKeys after the upgrade = %+v, %v", ks, err)
	}
	if _, err := db.RevokeAPIKey(ctx, "pk_live_0123456789ab", storetest.T0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.APIKeyByHash(ctx, h[:]); !errors.Is(err, store.ErrRevoked) {
		t.Fatalf("APIKeyByHash after revocation: %v, want ErrRevoked", err)
	}
}

// Two processes' handles on one file: of concurrent claims of a session by
// distinct records, exactly one wins, and both handles see it.
func TestClaimSessionTwoHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	dbs := [2]*DB{openTemp(t, path), openTemp(t, path)}
	a := dbs[0]
	if err := a.CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "standard", CreatedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateRun(ctx, store.Run{ID: "run_1", OrgID: "org_a", Environment: "production", OpenedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	storetest.RaceClaims(t, []store.SessionStore{dbs[0], dbs[1]}, "org_a", "run_1")
}
