package profile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
)

// Explicit profile files: a corrupt one is kept with its error (reported
// as PROFILE INVALID, not as a missing profile), two byte-identical ones
// are fine, two different ones with one profile_id are refused, and an
// explicit file wins over a cached one.
func TestSetExplicit(t *testing.T) {
	s, _ := testSigner(t)
	p := sample()
	if err := profile.Sign(p, s, "x/y"); err != nil {
		t.Fatal(err)
	}
	doc, _ := document.MarshalIndent(p)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.json", doc)
	same := write("same.json", doc)
	dup := write("dup.json", bytes.Replace(doc, []byte(`"schema": "svc.profile/v1",`), []byte(`"schema": "svc.profile/v1", "schema": "svc.profile/v1",`), 1))
	otherDoc := bytes.Replace(doc, []byte(`"safety_margin": 2`), []byte(`"safety_margin": 3`), 1)
	if bytes.Equal(doc, otherDoc) {
		t.Fatal("other.json is not different")
	}
	other := write("other.json", otherDoc)

	set := profile.NewSet()
	if err := set.AddExplicit(dup); err != nil {
		t.Fatalf("a corrupt explicit profile is kept, not refused: %v", err)
	}
	if err := set.AddExplicit(good); err != nil {
		t.Fatal(err)
	}
	if err := set.AddExplicit(same); err != nil {
		t.Fatalf("byte-identical duplicate: %v", err)
	}
	if err := set.AddExplicit(other); !errors.Is(err, profile.ErrAmbiguous) {
		t.Fatalf("two different files with one profile_id: %v, want ErrAmbiguous", err)
	}
	if err := set.AddExplicit(filepath.Join(dir, "missing.json")); err == nil || errors.Is(err, profile.ErrAmbiguous) {
		t.Fatalf("unreadable file: %v", err)
	}
	ex := set.Explicit()
	if len(ex) != 3 || ex[0].Err == nil || ex[0].Doc != nil || ex[1].ID != p.ProfileID || ex[1].Err != nil {
		t.Fatalf("Explicit() = %+v", ex)
	}
	if got, err := set.Profile(p.ProfileID); err != nil || !bytes.Equal(got, doc) {
		t.Fatalf("Profile: %v", err)
	}

	// An explicit file wins over a cached one of the same id.
	cache := t.TempDir()
	os.WriteFile(filepath.Join(cache, "c.json"), otherDoc, 0o600)
	set = profile.NewSet()
	set.AddDir(cache)
	if err := set.AddExplicit(good); err != nil {
		t.Fatal(err)
	}
	if got, _ := set.Profile(p.ProfileID); !bytes.Equal(got, doc) {
		t.Fatal("the cached profile won over the explicit one")
	}
}
