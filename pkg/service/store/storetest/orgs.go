package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunOrgs tests the accounts role (store.OrgStore): organisations, API
// keys and their revocation, reviewer keys.
func RunOrgs(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"Orgs", testOrgs},
		{"APIKeys", testAPIKeys},
		{"RevokeAPIKey", testRevokeAPIKey},
		{"ReviewerKeys", testReviewerKeys},
	})
}

func orgEqual(a, b store.Org) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Tier == b.Tier && utcEqual(a.CreatedAt, b.CreatedAt)
}

func keyEqual(a, b store.APIKey) bool {
	return a.ID == b.ID && a.OrgID == b.OrgID && a.Environment == b.Environment &&
		bytes.Equal(a.Hash, b.Hash) && utcEqual(a.CreatedAt, b.CreatedAt)
}

func reviewerKeyEqual(a, b store.ReviewerKey) bool {
	return a.OrgID == b.OrgID && a.KeyID == b.KeyID && bytes.Equal(a.PublicKey, b.PublicKey) && a.Name == b.Name &&
		utcEqual(a.CreatedAt, b.CreatedAt)
}

func testOrgs(t *testing.T, s store.Store) {
	ctx := context.Background()
	acme := store.Org{ID: "org_acme", Name: "acme", Tier: "enterprise", CreatedAt: T0}
	if err := s.CreateOrg(ctx, acme); err != nil {
		t.Fatalf("CreateOrg: %v", err)
	}
	creates := []struct {
		name string
		org  store.Org
		want error
	}{
		{"name taken", store.Org{ID: "org_other", Name: "acme", Tier: "standard", CreatedAt: T0}, store.ErrExists},
		{"id taken", store.Org{ID: "org_acme", Name: "acme-2", Tier: "standard", CreatedAt: T0}, store.ErrExists},
		{"second org", store.Org{ID: "org_beta", Name: "beta", Tier: "standard", CreatedAt: T0.Add(time.Nanosecond * 1000)}, nil},
	}
	for _, c := range creates {
		wantErr(t, "CreateOrg "+c.name, s.CreateOrg(ctx, c.org), c.want)
	}
	lookups := []struct {
		name   string
		lookup func() (store.Org, error)
		want   store.Org
		err    error
	}{
		{"by name", func() (store.Org, error) { return s.OrgByName(ctx, "acme") }, acme, nil},
		{"by id", func() (store.Org, error) { return s.OrgByID(ctx, "org_acme") }, acme, nil},
		{"by name unknown", func() (store.Org, error) { return s.OrgByName(ctx, "nobody") }, store.Org{}, store.ErrNotFound},
		{"by id unknown", func() (store.Org, error) { return s.OrgByID(ctx, "org_nobody") }, store.Org{}, store.ErrNotFound},
		{"by name is exact", func() (store.Org, error) { return s.OrgByName(ctx, "ACME") }, store.Org{}, store.ErrNotFound},
		{"by id of a name", func() (store.Org, error) { return s.OrgByID(ctx, "acme") }, store.Org{}, store.ErrNotFound},
	}
	for _, c := range lookups {
		got, err := c.lookup()
		wantErr(t, c.name, err, c.err)
		if c.err == nil && !orgEqual(got, c.want) {
			t.Errorf("%s = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func testAPIKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	other := sha256.Sum256([]byte("other"))
	creates := []struct {
		name string
		key  store.APIKey
		want error
	}{
		{"id taken", store.APIKey{ID: f.key.ID, OrgID: f.org.ID, Environment: "sandbox", Hash: other[:], CreatedAt: T0}, store.ErrExists},
		{"hash taken", store.APIKey{ID: "pk_test_000000000000", OrgID: f.org.ID, Environment: "sandbox", Hash: f.key.Hash, CreatedAt: T0}, store.ErrExists},
		{"unknown org", store.APIKey{ID: "pk_test_111111111111", OrgID: "org_nobody", Environment: "sandbox", Hash: other[:], CreatedAt: T0}, store.ErrNotFound},
		{"second key", store.APIKey{ID: "pk_test_222222222222", OrgID: f.org.ID, Environment: "sandbox", Hash: other[:], CreatedAt: T0}, nil},
	}
	for _, c := range creates {
		wantErr(t, "CreateAPIKey "+c.name, s.CreateAPIKey(ctx, c.key), c.want)
	}
	got, err := s.APIKeyByHash(ctx, f.key.Hash)
	if err != nil || !keyEqual(got, f.key) {
		t.Errorf("APIKeyByHash = %+v, %v; want %+v", got, err, f.key)
	}
	got, err = s.APIKeyByHash(ctx, other[:])
	if err != nil || got.ID != "pk_test_222222222222" || got.Environment != "sandbox" {
		t.Errorf("APIKeyByHash(second) = %+v, %v", got, err)
	}
	unknown := sha256.Sum256([]byte("unknown"))
	for _, h := range [][]byte{unknown[:], f.key.Hash[:31], nil, {}} {
		if _, err := s.APIKeyByHash(ctx, h); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("APIKeyByHash(%x): err = %v, want ErrNotFound", h, err)
		}
	}
}

// testRevokeAPIKey: revocation is listed, refused by APIKeyByHash with
// ErrRevoked (the key returned with it), idempotent (the first time stays)
// and scoped to the one key.
func testRevokeAPIKey(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "bravo")
	h := sha256.Sum256([]byte("acme sandbox"))
	sb := store.APIKey{ID: "pk_sb_0123456789ab", OrgID: a.org.ID, Environment: "sandbox", Hash: h[:], CreatedAt: T0.Add(time.Minute)}
	if err := s.CreateAPIKey(ctx, sb); err != nil {
		t.Fatal(err)
	}
	list := func(org string) []store.APIKey {
		t.Helper()
		ks, err := s.APIKeys(ctx, org)
		if err != nil {
			t.Fatalf("APIKeys(%q): %v", org, err)
		}
		return ks
	}
	if ks := list(a.org.ID); len(ks) != 2 || !keyEqual(ks[0], a.key) || !keyEqual(ks[1], sb) || !ks[0].RevokedAt.IsZero() {
		t.Fatalf("APIKeys(acme) = %+v; want its two keys, oldest first, none revoked", ks)
	}
	if ks := list(""); len(ks) != 3 {
		t.Fatalf("APIKeys(all) = %+v; want 3 keys", ks)
	}
	if ks := list("org_nobody"); ks == nil || len(ks) != 0 {
		t.Fatalf("APIKeys(unknown org) = %#v; want empty, non-nil", ks)
	}

	at := T0.Add(time.Hour)
	k, err := s.RevokeAPIKey(ctx, a.key.ID, at)
	if err != nil || k.ID != a.key.ID || !utcEqual(k.RevokedAt, at) {
		t.Fatalf("RevokeAPIKey = %+v, %v; want the key revoked at %s", k, err, at)
	}
	got, err := s.APIKeyByHash(ctx, a.key.Hash)
	if !errors.Is(err, store.ErrRevoked) || got.ID != a.key.ID || !utcEqual(got.RevokedAt, at) {
		t.Fatalf("APIKeyByHash(revoked) = %+v, %v; want the key and ErrRevoked", got, err)
	}
	// Idempotent: the first revocation time stays.
	if k, err := s.RevokeAPIKey(ctx, a.key.ID, at.Add(time.Hour)); err != nil || !utcEqual(k.RevokedAt, at) {
		t.Fatalf("RevokeAPIKey again = %+v, %v; want the first time %s", k, err, at)
	}
	if _, err := s.RevokeAPIKey(ctx, "pk_live_nonexistent0", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RevokeAPIKey(unknown) = %v; want ErrNotFound", err)
	}
	// The other keys still work.
	for _, k := range []store.APIKey{sb, b.key} {
		if got, err := s.APIKeyByHash(ctx, k.Hash); err != nil || !keyEqual(got, k) {
			t.Errorf("APIKeyByHash(%s) after revoking another key = %+v, %v", k.ID, got, err)
		}
	}
	if ks := list(a.org.ID); len(ks) != 2 || ks[0].ID != a.key.ID || !utcEqual(ks[0].RevokedAt, at) || !ks[1].RevokedAt.IsZero() {
		t.Fatalf("APIKeys(acme) after revocation = %+v", ks)
	}
}

func testReviewerKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	k := store.ReviewerKey{OrgID: a.org.ID, KeyID: "9c1e4b7a2f301d5e", PublicKey: []byte{0x30, 0x2a, 0, 0xff, '\''}, Name: "Dr. Reviewer", CreatedAt: T0}
	noKey := store.ReviewerKey{OrgID: a.org.ID, KeyID: "0000000000000000", Name: "", CreatedAt: T0.Add(time.Microsecond)}
	creates := []struct {
		name string
		k    store.ReviewerKey
		want error
	}{
		{"new", k, nil},
		{"same key id again", k, store.ErrExists},
		{"same key id, other name and key", store.ReviewerKey{OrgID: a.org.ID, KeyID: k.KeyID, PublicKey: []byte("other"), Name: "x", CreatedAt: T0}, store.ErrExists},
		{"same key id, other org", store.ReviewerKey{OrgID: b.org.ID, KeyID: k.KeyID, PublicKey: []byte("beta's"), Name: "B", CreatedAt: T0}, nil},
		{"nil public key and empty name", noKey, nil},
		{"unknown org", store.ReviewerKey{OrgID: "org_nobody", KeyID: "1111111111111111", PublicKey: []byte("k"), CreatedAt: T0}, store.ErrNotFound},
	}
	for _, c := range creates {
		wantErr(t, "CreateReviewerKey "+c.name, s.CreateReviewerKey(ctx, c.k), c.want)
	}
	lookups := []struct {
		name, org, id string
		want          *store.ReviewerKey
	}{
		{"own", a.org.ID, k.KeyID, &k},
		{"nil public key reads back empty", a.org.ID, noKey.KeyID, &store.ReviewerKey{OrgID: a.org.ID, KeyID: noKey.KeyID, PublicKey: []byte{}, CreatedAt: noKey.CreatedAt}},
		{"other org's with the same id", b.org.ID, k.KeyID, &store.ReviewerKey{OrgID: b.org.ID, KeyID: k.KeyID, PublicKey: []byte("beta's"), Name: "B", CreatedAt: T0}},
		{"other org's", b.org.ID, noKey.KeyID, nil},
		{"unknown id", a.org.ID, "ffffffffffffffff", nil},
		{"unknown org", "org_nobody", k.KeyID, nil},
		{"never stored (unknown org)", "org_nobody", "1111111111111111", nil},
	}
	for _, c := range lookups {
		got, err := s.ReviewerKey(ctx, c.org, c.id)
		if c.want == nil {
			wantErr(t, "ReviewerKey "+c.name, err, store.ErrNotFound)
		} else if err != nil || !reviewerKeyEqual(got, *c.want) {
			t.Errorf("ReviewerKey %s = %+v, %v; want %+v", c.name, got, err, *c.want)
		}
	}
}
