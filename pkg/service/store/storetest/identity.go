package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunIdentity tests a store's service identity (store.IdentityStore): none
// at first; the first InitIdentity records it; later ones, with the same or
// another identity, return the recorded one unchanged; racing first calls
// (each with its own identity, as servers with different key material
// starting at once) agree on one winner.
func RunIdentity(t *testing.T, open func(t *testing.T) store.IdentityStore) {
	ctx := context.Background()
	ident := func(i int) store.Identity {
		return store.Identity{
			SigningKeyID: fmt.Sprintf("%016x", i+1),
			SigningKey:   []byte{0x30, byte(i), 0x01},
			TSACert:      "sha256:" + hex64("0123456789abcdef"[i%16]),
			TSARoot:      "sha256:" + hex64("fedcba9876543210"[i%16]),
			RecordedAt:   T0.Add(time.Duration(i) * time.Second),
		}
	}
	t.Run("FirstWins", func(t *testing.T) {
		st := open(t)
		if _, err := st.Identity(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("empty database: Identity = %v, want ErrNotFound", err)
		}
		a, b := ident(0), ident(1)
		got, created, err := st.InitIdentity(ctx, a)
		if err != nil || !created || !got.Equal(a) || !utcEqual(got.RecordedAt, a.RecordedAt) {
			t.Fatalf("first InitIdentity = %+v, %v, %v; want %+v, created", got, created, err, a)
		}
		for _, try := range []store.Identity{a, b} {
			got, created, err := st.InitIdentity(ctx, try)
			if err != nil || created || !got.Equal(a) || !utcEqual(got.RecordedAt, a.RecordedAt) {
				t.Fatalf("InitIdentity(%s) again = %+v, %v, %v; want the first one, not created", try.SigningKeyID, got, created, err)
			}
		}
		if got, err := st.Identity(ctx); err != nil || !got.Equal(a) {
			t.Fatalf("Identity = %+v, %v; want %+v", got, err, a)
		}
		if a.Equal(b) {
			t.Fatal("Equal: two different identities are equal")
		}
		c := a
		c.TSARoot = b.TSARoot
		if a.Equal(c) {
			t.Fatal("Equal ignores the TSA root")
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		st := open(t)
		const n = 8
		var wg sync.WaitGroup
		got := make([]store.Identity, n)
		created := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], created[i], errs[i] = st.InitIdentity(ctx, ident(i))
			}()
		}
		wg.Wait()
		winners := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("InitIdentity %d: %v", i, errs[i])
			}
			if !got[i].Equal(got[0]) {
				t.Fatalf("racing InitIdentity disagree: %d got %s, 0 got %s", i, got[i].SigningKeyID, got[0].SigningKeyID)
			}
			if created[i] {
				winners++
				if !got[i].Equal(ident(i)) {
					t.Fatalf("call %d created the identity but returned %s", i, got[i].SigningKeyID)
				}
			}
		}
		if winners != 1 {
			t.Fatalf("%d calls created the identity, want exactly 1", winners)
		}
	})
}
