package keys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"github.com/svc-gov/svc/internal/fsutil"
)

// Generated describes a key Generate created.
type Generated struct {
	// URI names the new key (for a PKCS#11 key, the URI given).
	URI string `json:"uri"`
	// Algorithm is the key's algorithm.
	Algorithm Algorithm `json:"algorithm"`
	// KeyID is svc's key id of the public key.
	KeyID string `json:"key_id"`
	// PublicKey is ed25519.PublicKey or *ecdsa.PublicKey.
	PublicKey crypto.PublicKey `json:"-"`
	// PublicKeyPEM is the SPKI "PUBLIC KEY" PEM of PublicKey, for a trust
	// root or bundle.
	PublicKeyPEM string `json:"public_key_pem"`
}

// Generate creates a new key of algorithm alg where uri says and returns
// its public key and key id. It never replaces a key: a file that exists,
// or a token object with the same label or id, is ErrGenerate.
//
// file: writes a PKCS#8 PEM file (mode 0600, created whole or not at all).
// pkcs11: generates the key pair on the token (the private key is
// sensitive and not extractable: it never leaves the token). Vault, AWS
// and Cloud KMS keys are created with the provider's own tools (see
// docs/KEYS.md); for them Generate returns ErrGenerate.
func Generate(ctx context.Context, uri string, alg Algorithm, opts Options) (*Generated, error) {
	u, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	var pub crypto.PublicKey
	switch u.Scheme {
	case SchemeFile:
		pub, err = generateFile(u.Path, alg)
	case SchemePKCS11:
		pub, err = generatePKCS11(u, alg, opts)
	default:
		err = fmt.Errorf("%w: svc does not create %s keys; create an %s key with the provider's tools (docs/KEYS.md) and name it in the configuration", ErrGenerate, u.Scheme, alg)
	}
	if err != nil {
		return nil, keyErr(uri, "generate", err)
	}
	g, err := describe(uri, pub)
	if err != nil {
		return nil, keyErr(uri, "generate", err)
	}
	return g, nil
}

func describe(uri string, pub crypto.PublicKey) (*Generated, error) {
	alg, err := algorithmOf(pub)
	if err != nil {
		return nil, err
	}
	id, err := KeyID(pub)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: encode public key: %v", ErrAlgorithm, err)
	}
	return &Generated{URI: uri, Algorithm: alg, KeyID: id, PublicKey: pub,
		PublicKeyPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}, nil
}

func generateFile(path string, alg Algorithm) (crypto.PublicKey, error) {
	var priv crypto.Signer
	switch alg {
	case Ed25519:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrGenerate, err)
		}
		priv = k
	case ECDSAP256:
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrGenerate, err)
		}
		priv = k
	default:
		return nil, fmt.Errorf("%w: %q; svc keys are %s or %s", ErrAlgorithm, alg, Ed25519, ECDSAP256)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("%w: encode private key: %w", ErrGenerate, err)
	}
	if err := fsutil.WriteNew(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGenerate, err)
	}
	return priv.Public(), nil
}
