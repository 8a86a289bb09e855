package signing_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
)

// CreateKeyDir writes a key that signs what its public key and trust
// bundle verify, with the TSA roots asked for, and never overwrites a key.
func TestCreateKeyDir(t *testing.T) {
	tsa, err := timestamp.LoadOrInitAuthority(filepath.Join(t.TempDir(), "tsa"), timestamp.AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, roots := range [][]*x509.Certificate{nil, {tsa.Root()}} {
		dir := filepath.Join(t.TempDir(), "keys")
		kd, err := signing.CreateKeyDir(dir, roots...)
		if err != nil {
			t.Fatal(err)
		}
		if kd.TSARoots != len(roots) {
			t.Errorf("TSARoots %d, want %d", kd.TSARoots, len(roots))
		}
		for path, mode := range map[string]fs.FileMode{kd.PrivateKey: 0o600, kd.PublicKey: 0o644, kd.TrustBundle: 0o644, dir: 0o700 | fs.ModeDir} {
			if st, err := os.Stat(path); err != nil || st.Mode() != mode {
				t.Errorf("%s: mode %v, want %v (%v)", path, st.Mode(), mode, err)
			}
		}
		privPEM, _ := os.ReadFile(kd.PrivateKey)
		priv, err := signing.ParsePrivateKeyPEM(privPEM)
		if err != nil {
			t.Fatal(err)
		}
		pubPEM, _ := os.ReadFile(kd.PublicKey)
		pub, err := signing.ParsePublicKeyPEM(pubPEM)
		if err != nil || !pub.Equal(priv.Public()) || signing.KeyID(pub) != kd.KeyID {
			t.Fatalf("public key %v does not match (%v)", kd.KeyID, err)
		}
		b, err := signing.LoadBundle(kd.TrustBundle)
		if err != nil {
			t.Fatal(err)
		}
		msg := []byte("message")
		if err := b.Verify(kd.KeyID, msg, signing.FormatSignature(ed25519.Sign(priv, msg))); err != nil {
			t.Errorf("the bundle does not verify the key's signature: %v", err)
		}
		if len(b.Roots()) != len(roots) {
			t.Errorf("bundle roots %d, want %d", len(b.Roots()), len(roots))
		}

		_, err = signing.CreateKeyDir(dir)
		if !errors.Is(err, signing.ErrKeyExists) || !errors.Is(err, fs.ErrExist) {
			t.Fatalf("second create: %v", err)
		}
		if again, _ := os.ReadFile(kd.PrivateKey); !bytes.Equal(again, privPEM) {
			t.Fatal("the key was overwritten")
		}
	}
}
