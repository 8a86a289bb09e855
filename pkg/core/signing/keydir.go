package signing

import (
	"crypto/x509"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/internal/fsutil"
)

// Files of a key directory written by CreateKeyDir (svc keygen).
const (
	SigningKeyFile  = "signing-key.pem"     // PKCS#8 PEM, mode 0600
	PublicKeyFile   = "signing-key.pub.pem" // SPKI PEM, mode 0644
	TrustBundleFile = "trust-bundle.pem"    // the public key and TSA roots, mode 0644
)

// ErrKeyExists: CreateKeyDir found a signing key in the directory; it also
// matches fs.ErrExist. An existing key is never overwritten.
var ErrKeyExists = fmt.Errorf("signing key exists: %w", fs.ErrExist)

// KeyDir is a key directory CreateKeyDir wrote.
type KeyDir struct {
	KeyID       string `json:"key_id"`
	PrivateKey  string `json:"private_key"`
	PublicKey   string `json:"public_key"`
	TrustBundle string `json:"trust_bundle"`
	// TSARoots counts the TSA root certificates in the trust bundle.
	TSARoots int `json:"tsa_roots"`
}

// CreateKeyDir generates an Ed25519 signing key and writes it to dir
// (created 0700 if missing) with its public key and a trust bundle holding
// the public key and tsaRoots. Each file is written new (synced, never
// over an existing file); a directory that already holds a signing key is
// ErrKeyExists before anything is generated.
func CreateKeyDir(dir string, tsaRoots ...*x509.Certificate) (*KeyDir, error) {
	keyPath := filepath.Join(dir, SigningKeyFile)
	if _, err := os.Stat(keyPath); err == nil {
		return nil, fmt.Errorf("%s: %w", keyPath, ErrKeyExists)
	}
	bundle := NewBundle()
	for _, r := range tsaRoots {
		bundle.AddRoot(r)
	}
	pub, priv, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	bundle.AddKey(pub)
	privPEM, err := MarshalPrivateKeyPEM(priv)
	if err != nil {
		return nil, err
	}
	pubPEM, err := MarshalPublicKeyPEM(pub)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create key directory: %w", err)
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{SigningKeyFile, privPEM, 0o600},
		{PublicKeyFile, pubPEM, 0o644},
		{TrustBundleFile, bundle.Marshal(), 0o644},
	}
	for _, f := range files {
		if err := fsutil.WriteNew(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return nil, err
		}
	}
	return &KeyDir{KeyID: KeyID(pub), PrivateKey: keyPath, PublicKey: filepath.Join(dir, PublicKeyFile),
		TrustBundle: filepath.Join(dir, TrustBundleFile), TSARoots: len(bundle.Roots())}, nil
}
