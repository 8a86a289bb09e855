package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/timestamp"
)

// Files of a data directory.
const (
	SigningKeyFile = "signing-key.pem"
	TSADir         = "tsa"
)

// Material is a service's signing key, its built-in timestamp authority and
// the trust bundle that verifies what it issues.
type Material struct {
	Signer *signing.Signer
	TSA    *timestamp.Authority
	Trust  *signing.Bundle
}

// LoadMaterial reads the key material of the data directory dir, creating
// what is missing on first start: an Ed25519 signing key (mode 0600) and a
// built-in TSA. Existing key material is never replaced.
func LoadMaterial(dir string) (*Material, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	keyPath := filepath.Join(dir, SigningKeyFile)
	data, err := os.ReadFile(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		_, priv, gerr := signing.GenerateKey()
		if gerr != nil {
			return nil, gerr
		}
		pemBytes, merr := signing.MarshalPrivateKeyPEM(priv)
		if merr != nil {
			return nil, merr
		}
		if werr := fsutil.WriteNew(keyPath, pemBytes, 0o600); werr != nil && !errors.Is(werr, fs.ErrExist) {
			return nil, fmt.Errorf("create signing key: %w", werr)
		}
		// Another process may have won the race: read what is on disk.
		data, err = os.ReadFile(keyPath)
	}
	if err != nil {
		return nil, fmt.Errorf("read signing key: %w", err)
	}
	priv, err := signing.ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	signer, err := signing.NewSigner(priv)
	if err != nil {
		return nil, err
	}
	tsa, err := timestamp.LoadOrInitAuthority(filepath.Join(dir, TSADir), timestamp.AuthorityOptions{Name: "svc built-in TSA"})
	if err != nil {
		return nil, fmt.Errorf("built-in timestamp authority: %w", err)
	}
	trust := signing.NewBundle()
	trust.AddKey(signer.PublicKey())
	trust.AddRoot(tsa.Root())
	return &Material{Signer: signer, TSA: tsa, Trust: trust}, nil
}
