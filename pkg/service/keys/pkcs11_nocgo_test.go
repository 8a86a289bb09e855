//go:build !cgo

package keys

import (
	"context"
	"errors"
	"testing"
)

// TestPKCS11WithoutCgo: a binary built with CGO_ENABLED=0 refuses pkcs11:
// keys with a clear error naming the key, for opening and generating.
func TestPKCS11WithoutCgo(t *testing.T) {
	const uri = "pkcs11:token=svc;object=vpec?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=env:PIN"
	_, err := Open(context.Background(), uri, Options{})
	var ke *KeyError
	if !errors.Is(err, ErrPKCS11Unavailable) || !errors.As(err, &ke) || ke.URI != uri {
		t.Fatalf("Open = %v", err)
	}
	if _, err := Generate(context.Background(), uri, Ed25519, Options{}); !errors.Is(err, ErrPKCS11Unavailable) {
		t.Fatalf("Generate = %v", err)
	}
}
