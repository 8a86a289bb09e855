package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

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

// testClaimSession: a session backs one record: the first claim wins, a
// retry by the same record succeeds, another record gets ErrConflict, in
// the caller's organisation only; of concurrent claims by distinct records
// exactly one wins.
func testClaimSession(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "bravo")
	sess := newSession(a, "chk_claim")
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "ClaimSession unknown session", s.ClaimSession(ctx, a.org.ID, "chk_nobody", "rec_1"), store.ErrNotFound)
	wantErr(t, "ClaimSession other org", s.ClaimSession(ctx, b.org.ID, sess.ID, "rec_1"), store.ErrNotFound)
	wantErr(t, "ClaimSession first", s.ClaimSession(ctx, a.org.ID, sess.ID, "rec_1"), nil)
	wantErr(t, "ClaimSession retry", s.ClaimSession(ctx, a.org.ID, sess.ID, "rec_1"), nil)
	wantErr(t, "ClaimSession other record", s.ClaimSession(ctx, a.org.ID, sess.ID, "rec_2"), store.ErrConflict)
	if got, err := s.Session(ctx, a.org.ID, sess.ID); err != nil || got.RecordID != "rec_1" {
		t.Fatalf("Session after claim: RecordID %q, %v; want rec_1", got.RecordID, err)
	}
	fresh := newSession(a, "chk_fresh")
	if err := s.CreateSession(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Session(ctx, a.org.ID, fresh.ID); err != nil || got.RecordID != "" {
		t.Fatalf("unclaimed Session: RecordID %q, %v; want empty", got.RecordID, err)
	}

	// Concurrent claims by distinct records: exactly one wins, the others
	// get ErrConflict, and the stored claim is the winner's.
	for trial := range 5 {
		id := fmt.Sprintf("chk_race_%d", trial)
		if err := s.CreateSession(ctx, newSession(a, id)); err != nil {
			t.Fatal(err)
		}
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.ClaimSession(ctx, a.org.ID, id, fmt.Sprintf("rec_%d", i))
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("trial %d: records %d and %d both claimed the session", trial, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("trial %d: claim %d: %v; want nil or ErrConflict", trial, i, err)
			}
		}
		got, err := s.Session(ctx, a.org.ID, id)
		if winner < 0 || err != nil || got.RecordID != fmt.Sprintf("rec_%d", winner) {
			t.Fatalf("trial %d: winner %d, stored claim %q, %v", trial, winner, got.RecordID, err)
		}
	}
}
