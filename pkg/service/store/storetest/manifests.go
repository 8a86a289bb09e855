package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunManifests tests the manifests role (store.ManifestStore).
func RunManifests(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"Manifests", testManifests},
		{"ManifestsOfOrg", testManifestsOfOrg},
	})
}

func manifestEqual(a, b store.Manifest) bool {
	return a.OrgID == b.OrgID && a.ID == b.ID && a.Name == b.Name && bytes.Equal(a.Body, b.Body) &&
		utcEqual(a.CreatedAt, b.CreatedAt)
}

func testManifests(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	m := store.Manifest{OrgID: a.org.ID, ID: "sha256:" + strings.Repeat("0f", 32), Name: "pii-scan", Body: []byte(`{"name":"pii-scan"}`), CreatedAt: T0}
	puts := []struct {
		name        string
		m           store.Manifest
		wantCreated bool
		wantErr     error
	}{
		{"new", m, true, nil},
		{"again", m, false, nil},
		{"again with another name and time", store.Manifest{OrgID: m.OrgID, ID: m.ID, Name: "renamed", Body: m.Body, CreatedAt: T0.Add(time.Hour)}, false, nil},
		{"same id, other org", store.Manifest{OrgID: b.org.ID, ID: m.ID, Name: "pii-scan", Body: m.Body, CreatedAt: T0}, true, nil},
		{"other id", store.Manifest{OrgID: a.org.ID, ID: "sha256:other", Name: "other", Body: []byte("{}"), CreatedAt: T0}, true, nil},
		{"unknown org", store.Manifest{OrgID: "org_nobody", ID: m.ID, Name: "x", Body: m.Body, CreatedAt: T0}, false, store.ErrNotFound},
	}
	for _, p := range puts {
		created, err := s.PutManifest(ctx, p.m)
		wantErr(t, "PutManifest "+p.name, err, p.wantErr)
		if created != p.wantCreated {
			t.Errorf("PutManifest %s: created = %v, want %v", p.name, created, p.wantCreated)
		}
	}
	if got, err := s.Manifest(ctx, a.org.ID, m.ID); err != nil || !manifestEqual(got, m) {
		t.Errorf("Manifest = %+v, %v; want the first one stored, %+v", got, err, m)
	}
	for _, c := range []struct{ name, org, id string }{
		{"unknown id", a.org.ID, "sha256:nobody"},
		{"another org's id", b.org.ID, "sha256:other"},
		{"unknown org", "org_nobody", m.ID},
	} {
		if _, err := s.Manifest(ctx, c.org, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Manifest %s: err = %v, want ErrNotFound", c.name, err)
		}
	}
}

// testManifestsOfOrg: ManifestsOfOrg lists the organisation's manifests
// only.
func testManifestsOfOrg(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := seed(t, s, "acme"), seed(t, s, "beta")
	for _, f := range []fixture{a, b} {
		if _, err := s.PutManifest(ctx, store.Manifest{OrgID: f.org.ID, ID: "sha256:m-" + f.org.Name, Name: f.org.Name, Body: []byte("{}"), CreatedAt: T0}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []fixture{a, b} {
		ms, err := s.ManifestsOfOrg(ctx, f.org.ID)
		if err != nil || len(ms) != 1 || ms[0].ID != "sha256:m-"+f.org.Name || !utcEqual(ms[0].CreatedAt, T0) {
			t.Errorf("ManifestsOfOrg(%s) = %+v, %v", f.org.Name, ms, err)
		}
	}
	if ms, err := s.ManifestsOfOrg(ctx, "org_nope"); err != nil || len(ms) != 0 || ms == nil {
		t.Errorf("ManifestsOfOrg(unknown org) = %#v, %v; want an empty list", ms, err)
	}
}
