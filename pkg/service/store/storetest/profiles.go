package storetest

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunProfiles tests the profile registry (store.ProfileStore); profiles
// belong to no organisation, so open may return the role alone.
func RunProfiles(t *testing.T, open func(t *testing.T) store.ProfileStore) {
	run(t, open, []test[store.ProfileStore]{
		{"Profiles", testProfiles},
		{"ProfileLatestWins", testProfileLatestWins},
	})
}

func profileEqual(a, b store.Profile) bool {
	return a.ID == b.ID && slices.Equal(a.ModelHashes, b.ModelHashes) && bytes.Equal(a.Body, b.Body) &&
		utcEqual(a.PublishedAt, b.PublishedAt)
}

func testProfiles(t *testing.T, s store.ProfileStore) {
	ctx := context.Background()
	if got, err := s.Profiles(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Profiles of an empty store = %+v, %v", got, err)
	}
	pB := store.Profile{ID: "prof-b", ModelHashes: []string{"sha256:m2", "sha256:m1"}, Body: []byte(`{"profile_id":"prof-b"}`), PublishedAt: T0}
	pA := store.Profile{ID: "prof-a", ModelHashes: []string{"sha256:m2", "sha256:m3"}, Body: []byte(`{"profile_id":"prof-a"}`), PublishedAt: T0.Add(time.Minute)}
	pC := store.Profile{ID: "prof-c", ModelHashes: []string{}, Body: []byte(`{"profile_id":"prof-c"}`), PublishedAt: T0.Add(2 * time.Minute)}
	puts := []struct {
		name string
		p    store.Profile
		want error
	}{
		{"b", pB, nil},
		{"a", pA, nil},
		{"c, no models", pC, nil},
		{"b again", pB, store.ErrExists},
		{"a again, other content", store.Profile{ID: "prof-a", ModelHashes: []string{"sha256:m9"}, Body: []byte("{}"), PublishedAt: T0.Add(time.Hour)}, store.ErrExists},
	}
	for _, p := range puts {
		wantErr(t, "PutProfile "+p.name, s.PutProfile(ctx, p.p), p.want)
	}
	got, err := s.Profiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Profile{pA, pB, pC}
	if len(got) != len(want) {
		t.Fatalf("Profiles = %d profiles, want %d", len(got), len(want))
	}
	for i := range want {
		if !profileEqual(got[i], want[i]) {
			t.Errorf("Profiles[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	byID := []struct {
		id   string
		want *store.Profile
	}{{"prof-a", &pA}, {"prof-b", &pB}, {"prof-c", &pC}, {"prof-nobody", nil}, {"", nil}}
	for _, c := range byID {
		got, err := s.ProfileByID(ctx, c.id)
		if c.want == nil {
			wantErr(t, "ProfileByID "+c.id, err, store.ErrNotFound)
		} else if err != nil || !profileEqual(got, *c.want) {
			t.Errorf("ProfileByID(%s) = %+v, %v; want %+v", c.id, got, err, *c.want)
		}
	}
	byModel := []struct {
		model string
		want  *store.Profile
	}{
		{"sha256:m1", &pB},
		{"sha256:m2", &pA}, // covered by both: prof-a was published later
		{"sha256:m3", &pA},
		{"sha256:m9", nil}, // only in the rejected publication
		{"sha256:nobody", nil},
	}
	for _, c := range byModel {
		got, err := s.ProfileByModelHash(ctx, c.model)
		if c.want == nil {
			wantErr(t, "ProfileByModelHash "+c.model, err, store.ErrNotFound)
		} else if err != nil || !profileEqual(got, *c.want) {
			t.Errorf("ProfileByModelHash(%s) = %+v, %v; want %s", c.model, got, err, c.want.ID)
		}
	}
}

// testProfileLatestWins: a model's profile is the one of latest
// PublishedAt, the last published among equals; publishing a profile
// with an older PublishedAt does not take the model over.
func testProfileLatestWins(t *testing.T, s store.ProfileStore) {
	ctx := context.Background()
	steps := []struct {
		p    store.Profile
		want string // ProfileByModelHash("sha256:m") afterwards
	}{
		{store.Profile{ID: "v1", ModelHashes: []string{"sha256:m"}, Body: []byte("1"), PublishedAt: T0}, "v1"},
		{store.Profile{ID: "v2", ModelHashes: []string{"sha256:m", "sha256:m"}, Body: []byte("2"), PublishedAt: T0.Add(time.Hour)}, "v2"},
		{store.Profile{ID: "v0-backfill", ModelHashes: []string{"sha256:m"}, Body: []byte("0"), PublishedAt: T0.Add(-time.Hour)}, "v2"},
		{store.Profile{ID: "v3", ModelHashes: []string{"sha256:m"}, Body: []byte("3"), PublishedAt: T0.Add(time.Hour)}, "v3"},
		{store.Profile{ID: "a-v4", ModelHashes: []string{"sha256:m"}, Body: []byte("4"), PublishedAt: T0.Add(time.Hour + time.Microsecond)}, "a-v4"},
	}
	for _, st := range steps {
		if err := s.PutProfile(ctx, st.p); err != nil {
			t.Fatalf("PutProfile(%s): %v", st.p.ID, err)
		}
		got, err := s.ProfileByModelHash(ctx, "sha256:m")
		if err != nil || got.ID != st.want {
			t.Errorf("after publishing %s: ProfileByModelHash = %s, %v; want %s", st.p.ID, got.ID, err, st.want)
		}
	}
	got, err := s.ProfileByID(ctx, "v2")
	if err != nil || !slices.Equal(got.ModelHashes, []string{"sha256:m", "sha256:m"}) {
		t.Errorf("ProfileByID(v2) = %+v, %v; want its model hashes as published", got, err)
	}
}
