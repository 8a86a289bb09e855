package server_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/service/server"
)

// Key material is created only when asked (the first serve) and never by
// a command that reads it (issue 10: `svc serve trust-bundle --data-dir
// <typo>` silently created a new signing key and TSA).
func TestMaterialExplicit(t *testing.T) {
	root := t.TempDir()
	typo := filepath.Join(root, "typo")
	if _, err := server.ReadMaterial(typo); !errors.Is(err, server.ErrNoMaterial) {
		t.Fatalf("ReadMaterial of a missing directory: %v, want ErrNoMaterial", err)
	}
	if _, err := os.Stat(typo); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadMaterial created %s: %v", typo, err)
	}
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o700)
	if _, err := server.ReadMaterial(empty); !errors.Is(err, server.ErrNoMaterial) {
		t.Fatalf("ReadMaterial of an empty directory: %v", err)
	}
	if names, _ := os.ReadDir(empty); len(names) != 0 {
		t.Fatalf("ReadMaterial wrote into %s: %v", empty, names)
	}

	dir := filepath.Join(root, "data")
	m, created, err := server.LoadOrCreateMaterial(dir)
	if err != nil || created.SigningKey != filepath.Join(dir, server.SigningKeyFile) || created.TSA != filepath.Join(dir, server.TSADir) || !created.Any() {
		t.Fatalf("first start: %v %+v", err, created)
	}
	st, err := os.Stat(created.SigningKey)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("signing key mode: %v %v", st, err)
	}
	again, created, err := server.LoadOrCreateMaterial(dir)
	if err != nil || created.Any() || again.Signer.KeyID() != m.Signer.KeyID() {
		t.Fatalf("second start: %v %+v", err, created)
	}
	read, err := server.ReadMaterial(dir)
	if err != nil || read.Signer.KeyID() != m.Signer.KeyID() || string(read.Trust.Marshal()) != string(m.Trust.Marshal()) {
		t.Fatalf("ReadMaterial: %v", err)
	}

	// Half of the material is never completed: a new TSA (or key) would
	// silently change the trust bundle.
	noTSA := filepath.Join(root, "no-tsa")
	if _, err := server.LoadMaterial(noTSA); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(noTSA, server.TSADir))
	noKey := filepath.Join(root, "no-key")
	if _, err := server.LoadMaterial(noKey); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(noKey, server.SigningKeyFile))
	for _, d := range []string{noTSA, noKey} {
		if _, err := server.ReadMaterial(d); !errors.Is(err, server.ErrPartialMaterial) {
			t.Errorf("ReadMaterial %s: %v, want ErrPartialMaterial", d, err)
		}
		if _, c, err := server.LoadOrCreateMaterial(d); !errors.Is(err, server.ErrPartialMaterial) || c.Any() {
			t.Errorf("LoadOrCreateMaterial %s: %v %+v, want ErrPartialMaterial and nothing created", d, err, c)
		}
	}
	if _, err := os.Stat(filepath.Join(noTSA, server.TSADir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a TSA was created beside an existing key: %v", err)
	}
}
