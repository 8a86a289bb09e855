package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
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

// Errors of key material, matchable with errors.Is.
var (
	// ErrNoMaterial: the data directory holds no signing key and no
	// built-in TSA. Only the first `svc serve` creates them.
	ErrNoMaterial = errors.New("no service key material")
	// ErrPartialMaterial: the data directory holds the signing key or the
	// built-in TSA but not both. Creating the missing half would silently
	// change the trust bundle, so it is never done.
	ErrPartialMaterial = errors.New("incomplete service key material")
)

// Created says what LoadOrCreateMaterial created.
type Created struct {
	// SigningKey is the path of a signing key created now, or "".
	SigningKey string
	// TSA is the directory of a built-in TSA created now, or "".
	TSA string
}

// Any reports whether anything was created.
func (c Created) Any() bool { return c.SigningKey != "" || c.TSA != "" }

// materialState reports whether the signing key and the built-in TSA of
// dir exist.
func materialState(dir string) (key, tsa bool, err error) {
	_, kerr := os.Lstat(filepath.Join(dir, SigningKeyFile))
	if kerr != nil && !errors.Is(kerr, fs.ErrNotExist) {
		return false, false, fmt.Errorf("signing key: %w", kerr)
	}
	_, terr := os.Lstat(filepath.Join(dir, TSADir, timestamp.KeyFile))
	if terr != nil && !errors.Is(terr, fs.ErrNotExist) {
		return false, false, fmt.Errorf("built-in timestamp authority: %w", terr)
	}
	return kerr == nil, terr == nil, nil
}

// ReadMaterial reads the key material of the data directory dir and never
// creates anything: a directory without it (a typo in --data-dir, say) is
// ErrNoMaterial, one with half of it ErrPartialMaterial. Every command
// that only uses the keys (printing the trust bundle, publishing a
// profile) reads them with ReadMaterial.
func ReadMaterial(dir string) (*Material, error) {
	key, tsa, err := materialState(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case !key && !tsa:
		return nil, fmt.Errorf("%w in %s (no %s, no %s/): check --data-dir; the first 'svc serve --data-dir %s' creates them", ErrNoMaterial, dir, SigningKeyFile, TSADir, dir)
	case !key || !tsa:
		return nil, partial(dir, key)
	}
	return readMaterial(dir)
}

func partial(dir string, key bool) error {
	have, missing := filepath.Join(dir, SigningKeyFile), filepath.Join(dir, TSADir)
	if !key {
		have, missing = missing, have
	}
	return fmt.Errorf("%w in %s: %s exists but %s is missing; restore it from a backup (a new one would silently change the trust bundle of this service)", ErrPartialMaterial, dir, have, missing)
}

// LoadOrCreateMaterial reads the key material of dir, creating it when the
// directory holds none: an Ed25519 signing key (mode 0600) and a built-in
// TSA. It reports what it created so the caller says so. Half of the
// material (a key without its TSA or the reverse) is ErrPartialMaterial:
// existing key material is never replaced or completed.
func LoadOrCreateMaterial(dir string) (*Material, Created, error) {
	var created Created
	key, tsa, err := materialState(dir)
	if err != nil {
		return nil, created, err
	}
	if key != tsa {
		return nil, created, partial(dir, key)
	}
	if !key {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, created, fmt.Errorf("data directory: %w", err)
		}
		keyPath := filepath.Join(dir, SigningKeyFile)
		_, priv, err := signing.GenerateKey()
		if err != nil {
			return nil, created, err
		}
		pemBytes, err := signing.MarshalPrivateKeyPEM(priv)
		if err != nil {
			return nil, created, err
		}
		switch err := fsutil.WriteNew(keyPath, pemBytes, 0o600); {
		case err == nil:
			created.SigningKey = keyPath
		case errors.Is(err, fs.ErrExist):
			// Another process won the race: read what is on disk.
		default:
			return nil, created, fmt.Errorf("create signing key: %w", err)
		}
		tsaDir := filepath.Join(dir, TSADir)
		switch _, err := timestamp.InitAuthority(tsaDir, timestamp.AuthorityOptions{Name: "svc built-in TSA"}); {
		case err == nil:
			created.TSA = tsaDir
		case errors.Is(err, fs.ErrExist):
		default:
			return nil, created, fmt.Errorf("built-in timestamp authority: %w", err)
		}
	}
	m, err := readMaterial(dir)
	return m, created, err
}

// LoadMaterial is LoadOrCreateMaterial without the report: it creates the
// key material of a new data directory silently, which suits tests and
// throw-away directories (the quickstart). A service start uses
// LoadOrCreateMaterial and says what it created; commands that only read
// keys use ReadMaterial.
func LoadMaterial(dir string) (*Material, error) {
	m, _, err := LoadOrCreateMaterial(dir)
	return m, err
}

func readMaterial(dir string) (*Material, error) {
	keyPath := filepath.Join(dir, SigningKeyFile)
	data, err := os.ReadFile(keyPath)
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
	tsa, err := timestamp.LoadAuthority(filepath.Join(dir, TSADir))
	if err != nil {
		return nil, fmt.Errorf("built-in timestamp authority: %w", err)
	}
	trust := signing.NewBundle()
	trust.AddKey(signer.PublicKey())
	trust.AddRoot(tsa.Root())
	return &Material{Signer: signer, TSA: tsa, Trust: trust}, nil
}
