package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/core/tlog"
)

// TestBundleLogKey: a log key round-trips through the bundle's PEM (and is
// not a signing key); a block whose header does not match its key, has
// another header, or holds a bad verifier key makes the bundle invalid.
func TestBundleLogKey(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(nil)
	other, _, _ := ed25519.GenerateKey(nil)
	k, err := tlog.NewLogKey("svc.test/log", pub)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBundle()
	b.AddKey(other)
	b.AddLogKey(k)
	b.AddLogKey(k)
	got, err := ParseBundle(b.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if ks := got.LogKeys(); len(ks) != 1 || ks[0].String() != k.String() {
		t.Fatalf("LogKeys = %v, want [%s]", ks, k)
	}
	if ids := got.KeyIDs(); len(ids) != 1 || ids[0] != KeyID(other) {
		t.Fatalf("KeyIDs = %v: the log key must not be a signing key", ids)
	}
	der := func(p ed25519.PublicKey) []byte {
		d, err := x509.MarshalPKIXPublicKey(p)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name  string
		block pem.Block
	}{
		{"key mismatch", pem.Block{Type: LogKeyBlock, Headers: map[string]string{LogKeyHeader: k.String()}, Bytes: der(other)}},
		{"no header", pem.Block{Type: LogKeyBlock, Bytes: der(pub)}},
		{"extra header", pem.Block{Type: LogKeyBlock, Headers: map[string]string{LogKeyHeader: k.String(), "X": "y"}, Bytes: der(pub)}},
		{"bad verifier key", pem.Block{Type: LogKeyBlock, Headers: map[string]string{LogKeyHeader: "svc.test/log+00000000+AAAA"}, Bytes: der(pub)}},
		{"not a key", pem.Block{Type: LogKeyBlock, Headers: map[string]string{LogKeyHeader: k.String()}, Bytes: []byte("x")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := append(bytes.Clone(b.Marshal()), pem.EncodeToMemory(&c.block)...)
			if _, err := ParseBundle(data); !errors.Is(err, ErrMalformedBundle) {
				t.Errorf("ParseBundle: %v, want ErrMalformedBundle", err)
			}
		})
	}
}
