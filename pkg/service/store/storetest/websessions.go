package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunWebSessions tests the dashboard's sign-ins (store.WebSessionStore).
func RunWebSessions(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"WebSessions", testWebSessions},
		{"WebSessionRevokedKey", testWebSessionRevokedKey},
		{"WebSessionEnvironment", testWebSessionEnvironment},
	})
}

func tokenHash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func testWebSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	ws := store.WebSession{IDHash: tokenHash("tok-1"), OrgID: a.org.ID, APIKeyID: a.key.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}
	if err := s.CreateWebSession(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWebSession(ctx, ws); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateWebSession twice: %v, want ErrExists", err)
	}
	if err := s.CreateWebSession(ctx, store.WebSession{IDHash: tokenHash("tok-x"), OrgID: "org_nope", APIKeyID: a.key.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateWebSession of an unknown org: %v, want ErrNotFound", err)
	}
	got, err := s.WebSession(ctx, tokenHash("tok-1"), T0.Add(time.Minute))
	if err != nil || got.OrgID != a.org.ID || got.APIKeyID != a.key.ID || !got.CreatedAt.Equal(T0) || !got.ExpiresAt.Equal(T0.Add(time.Hour)) ||
		got.CreatedAt.Location() != time.UTC || got.ExpiresAt.Location() != time.UTC {
		t.Errorf("WebSession = %+v, %v", got, err)
	}
	if _, err := s.WebSession(ctx, tokenHash("tok-2"), T0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("WebSession of an unknown token: %v, want ErrNotFound", err)
	}
	// Expiry is server-side: at and after ExpiresAt the session is gone.
	for _, at := range []time.Time{T0.Add(time.Hour), T0.Add(2 * time.Hour)} {
		if _, err := s.WebSession(ctx, tokenHash("tok-1"), at); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("WebSession at %v (expires %v): %v, want ErrNotFound", at, ws.ExpiresAt, err)
		}
	}
	ws2 := store.WebSession{IDHash: tokenHash("tok-2"), OrgID: a.org.ID, APIKeyID: a.key.ID, CreatedAt: T0, ExpiresAt: T0.Add(3 * time.Hour)}
	if err := s.CreateWebSession(ctx, ws2); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteExpiredWebSessions(ctx, T0.Add(2*time.Hour))
	if err != nil || n != 1 {
		t.Errorf("DeleteExpiredWebSessions = %d, %v; want 1", n, err)
	}
	if err := s.DeleteWebSession(ctx, tokenHash("tok-2")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSession(ctx, tokenHash("tok-2"), T0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("WebSession after DeleteWebSession: %v, want ErrNotFound", err)
	}
	if err := s.DeleteWebSession(ctx, tokenHash("tok-2")); err != nil {
		t.Errorf("DeleteWebSession of an absent session: %v", err)
	}
}

func testWebSessionRevokedKey(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	if err := s.CreateWebSession(ctx, store.WebSession{IDHash: tokenHash("tok"), OrgID: a.org.ID, APIKeyID: a.key.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeAPIKey(ctx, a.key.ID, T0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSession(ctx, tokenHash("tok"), T0.Add(time.Minute)); !errors.Is(err, store.ErrRevoked) {
		t.Errorf("WebSession after its key was revoked: %v, want ErrRevoked", err)
	}
}

// testWebSessionEnvironment: WebSession carries its key's environment.
func testWebSessionEnvironment(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	sb := sandboxKey(t, s, a)
	for _, k := range []store.APIKey{a.key, sb} {
		tok := tokenHash("tok-" + k.ID)
		if err := s.CreateWebSession(ctx, store.WebSession{IDHash: tok, OrgID: a.org.ID, APIKeyID: k.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.WebSession(ctx, tok, T0.Add(time.Minute)); err != nil || got.Environment != k.Environment {
			t.Errorf("WebSession of key %s: environment %q, %v; want %q", k.ID, got.Environment, err, k.Environment)
		}
	}
}
