//go:build !cgo

package keys

import (
	"context"
	"crypto"
)

// Without cgo there is no PKCS#11: every pkcs11: URI is refused with
// ErrPKCS11Unavailable, naming the key.

func openPKCS11(context.Context, *URI, Options) (*Signer, error) {
	return nil, ErrPKCS11Unavailable
}

func generatePKCS11(*URI, Algorithm, Options) (crypto.PublicKey, error) {
	return nil, ErrPKCS11Unavailable
}
