package setup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
)

// TestCheckIdentity: the first CheckIdentity on a database records the key
// material; the same material passes later; another signing key, or the
// same key with another built-in TSA, is an *IdentityMismatchError naming
// what differs; a data directory without material on a database with an
// identity is refused before anything is created.
func TestCheckIdentity(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := setup.OpenStore(ctx, setup.StoreOptions{DataDir: filepath.Join(dir, "db"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	material := func(name string) (*server.Material, string) {
		d := filepath.Join(dir, name)
		m, err := server.LoadMaterial(d)
		if err != nil {
			t.Fatal(err)
		}
		return m, d
	}
	a, dirA := material("a")
	b, dirB := material("b")
	// c: a's signing key with b's TSA.
	dirC := filepath.Join(dir, "c")
	if err := os.CopyFS(dirC, os.DirFS(dirB)); err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(filepath.Join(dirA, server.SigningKeyFile))
	os.WriteFile(filepath.Join(dirC, server.SigningKeyFile), key, 0o600)
	c, err := server.ReadMaterial(dirC)
	if err != nil {
		t.Fatal(err)
	}

	if err := setup.CheckMaterialPresent(ctx, st, filepath.Join(dir, "empty")); err != nil {
		t.Fatalf("no identity recorded yet: CheckMaterialPresent = %v", err)
	}
	now := time.Now()
	for _, tc := range []struct {
		name     string
		m        *server.Material
		dir      string
		recorded bool
		want     string // "" for no error, else a part of the message
	}{
		{"first records", a, dirA, true, ""},
		{"same again", a, dirA, false, ""},
		{"other signing key", b, dirB, false, "signs with key " + a.Signer.KeyID() + ", this server with key " + b.Signer.KeyID()},
		{"same key, other TSA", c, dirC, false, "timestamps with the built-in TSA certificate " + strings.TrimPrefix(setup.CertID(a.TSA.Certificate()), "sha256:")[:16]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorded, err := setup.CheckIdentity(ctx, st, tc.m, tc.dir, now)
			if tc.want == "" {
				if err != nil || recorded != tc.recorded {
					t.Fatalf("CheckIdentity = %v, %v; want %v, nil", recorded, err, tc.recorded)
				}
				return
			}
			var mm *setup.IdentityMismatchError
			if !errors.Is(err, setup.ErrIdentityMismatch) || !errors.As(err, &mm) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckIdentity = %v; want an IdentityMismatchError containing %q", err, tc.want)
			}
			if mm.Recorded.SigningKeyID != a.Signer.KeyID() {
				t.Fatalf("recorded key id %s, want %s", mm.Recorded.SigningKeyID, a.Signer.KeyID())
			}
		})
	}
	empty := filepath.Join(dir, "empty")
	err = setup.CheckMaterialPresent(ctx, st, empty)
	var missing *setup.MissingMaterialError
	if !errors.Is(err, server.ErrNoMaterial) || !errors.As(err, &missing) || missing.Recorded.SigningKeyID != a.Signer.KeyID() {
		t.Fatalf("CheckMaterialPresent on an empty directory = %v", err)
	}
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("CheckMaterialPresent created %s", empty)
	}
	if err := setup.CheckMaterialPresent(ctx, st, dirB); err != nil {
		t.Fatalf("a directory with material is left to CheckIdentity: %v", err)
	}
}
