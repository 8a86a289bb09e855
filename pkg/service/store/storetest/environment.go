package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// sandboxKey adds a sandbox key to f's organisation.
func sandboxKey(t *testing.T, s store.Store, f fixture) store.APIKey {
	t.Helper()
	h := sha256.Sum256([]byte("sk_sb_" + f.org.Name))
	k := store.APIKey{ID: fmt.Sprintf("pk_sb_%x", h[:6]), OrgID: f.org.ID, Environment: "sandbox", Hash: h[:], CreatedAt: T0.Add(time.Second)}
	if err := s.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return k
}

// testVPECInfo: VPECInfo gives a VPEC's size and its run's environment,
// scoped to the organisation like VPEC.
func testVPECInfo(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	sb := sandboxKey(t, s, a)
	run := newRun(a.org.ID, sb.ID, "run_sb")
	run.Environment = "sandbox"
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("v"), 70000) // past a page: the size must not need the body
	for _, c := range []struct {
		run, vpec, env string
		body           []byte
	}{{a.run.ID, "vpec_prod", "production", []byte(`{"v":1}`)}, {run.ID, "vpec_sb", "sandbox", body}} {
		if err := s.SealRun(ctx, a.org.ID, c.run, store.VPEC{ID: c.vpec, RunID: c.run, OrgID: a.org.ID, IssuedAt: T0.Add(time.Hour), Body: c.body}); err != nil {
			t.Fatal(err)
		}
		got, err := s.VPECInfo(ctx, a.org.ID, c.vpec)
		if err != nil || got.ID != c.vpec || got.RunID != c.run || got.OrgID != a.org.ID || got.Environment != c.env ||
			got.Size != int64(len(c.body)) || !got.IssuedAt.Equal(T0.Add(time.Hour)) || got.IssuedAt.Location() != time.UTC {
			t.Errorf("VPECInfo(%s) = %+v, %v; want environment %s, size %d", c.vpec, got, err, c.env, len(c.body))
		}
	}
	for _, c := range []struct{ org, vpec string }{{b.org.ID, "vpec_prod"}, {a.org.ID, "vpec_nope"}} {
		if _, err := s.VPECInfo(ctx, c.org, c.vpec); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("VPECInfo(%s, %s): %v, want ErrNotFound", c.org, c.vpec, err)
		}
	}
}

// testWebEnvironment: RunsOfOrg filters by environment, and WebSession
// carries its key's environment.
func testWebEnvironment(t *testing.T, s store.Store, w store.WebStore) {
	ctx := context.Background()
	a := seed(t, s, "acme") // run_acme: production
	sb := sandboxKey(t, s, a)
	run := newRun(a.org.ID, sb.ID, "run_sb")
	run.Environment, run.OpenedAt = "sandbox", T0.Add(time.Minute)
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    store.RunFilter
		want []string
	}{
		{store.RunFilter{}, []string{"run_sb", "run_acme"}},
		{store.RunFilter{Environment: "sandbox"}, []string{"run_sb"}},
		{store.RunFilter{Environment: "production"}, []string{"run_acme"}},
		{store.RunFilter{Environment: "sandbox", State: "sealed"}, nil},
	} {
		got, err := w.RunsOfOrg(ctx, a.org.ID, c.f)
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if err != nil || fmt.Sprint(ids) != fmt.Sprint(c.want) {
			t.Errorf("RunsOfOrg(%+v) = %v, %v; want %v", c.f, ids, err, c.want)
		}
	}
	for _, k := range []store.APIKey{a.key, sb} {
		tok := tokenHash("tok-" + k.ID)
		if err := w.CreateWebSession(ctx, store.WebSession{IDHash: tok, OrgID: a.org.ID, APIKeyID: k.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if got, err := w.WebSession(ctx, tok, T0.Add(time.Minute)); err != nil || got.Environment != k.Environment {
			t.Errorf("WebSession of key %s: environment %q, %v; want %q", k.ID, got.Environment, err, k.Environment)
		}
	}
}
