package server

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/service/keys"
)

// Files of a data directory.
const (
	// SigningKeyFile is the VPEC signing key (and, in a data directory
	// made before profile keys were separate, the profile key too).
	SigningKeyFile = "signing-key.pem"
	// ProfileKeyFile signs profiles and circuit entries; a new data
	// directory gets one.
	ProfileKeyFile = "profile-key.pem"
	// LogKeyPath (LogDir/LogKeyFile) signs the transparency log's
	// checkpoints.
	LogKeyPath = LogDir + "/" + LogKeyFile
	// TSADir is the built-in TSA with a file key.
	TSADir = "tsa"
)

// Material is a service's signing keys, its built-in timestamp authority
// and the trust bundle that verifies what it issues. Each key is a
// crypto.Signer opened from a key URI (pkg/service/keys): a file in the
// data directory by default, or a key in an HSM or a cloud KMS.
type Material struct {
	// Signer signs VPECs (purpose vpec-signing).
	Signer *signing.Signer
	// NextSigners are the next VPEC keys (KeyConfig.NextVPEC), in the
	// order configured: Keys puts them in a KeyRing after Signer.
	NextSigners []*signing.Signer
	// ProfileSigner signs profiles and circuit entries (purposes
	// profile-signing and circuit-signing). In a data directory made
	// before profile keys were separate it is Signer's key.
	ProfileSigner *signing.Signer
	// LogSigner signs the transparency log's checkpoints (an Ed25519
	// crypto.Signer); nil when no log key is configured or present and
	// none was created (ReadMaterial).
	LogSigner crypto.Signer
	// TSA is the built-in timestamp authority; its key may be in an HSM.
	TSA *timestamp.Authority
	// Trust holds every VPEC and profile key of the data directory and
	// the configured ones, and the TSA roots.
	Trust *signing.Bundle

	closers []*keys.Signer
}

// Keys returns the VPEC keys of the material, the current one and the
// next ones configured, under root (nil: no windows).
func (m *Material) Keys(root *trustroot.Root) *KeyRing {
	signers := append([]*signing.Signer{m.Signer}, m.NextSigners...)
	k, _ := NewKeyRing(root, signers...) // m.Signer is set by OpenMaterial
	return k
}

// isNext reports whether keyID is one of the next VPEC keys.
func (m *Material) isNext(keyID string) bool {
	for _, ns := range m.NextSigners {
		if ns.KeyID() == keyID {
			return true
		}
	}
	return false
}

// Close releases the keys held outside the process (PKCS#11 sessions).
func (m *Material) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c.Close())
	}
	m.closers = nil
	return errors.Join(errs...)
}

// KeyConfig names a service's keys by key URI (docs/KEYS.md: file:,
// pkcs11:, hashivault:, awskms:, gcpkms:). An empty URI is the file key of
// the data directory, created by the first serve.
type KeyConfig struct {
	// VPEC, Profile, TSA and Log are the key URIs of the VPEC key, the
	// profile and circuit key, the built-in TSA's P-256 key and the log's
	// checkpoint key.
	VPEC, Profile, TSA, Log string
	// NextVPEC are the key URIs of the next VPEC keys (svc serve
	// --next-signing-key, repeatable): opened at start like the others,
	// each signs from the instant a rotation of the trust root makes it
	// valid (KeyRing).
	NextVPEC []string
	// Options configures the providers (PKCS#11 module and PIN, cloud
	// endpoints and credentials).
	Options keys.Options
}

// ErrKey reports a configured key that cannot be used (unreachable, not
// found, of the wrong algorithm). It comes with the keys package's
// *keys.KeyError naming the URI and the reason.
var ErrKey = errors.New("service key unusable")

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
	// ProfileKey is the path of a profile key created now, or "".
	ProfileKey string
	// LogKey is the path of a log key created now, or "".
	LogKey string
	// TSA is the directory of a built-in TSA created now, or "".
	TSA string
}

// Any reports whether anything was created.
func (c Created) Any() bool {
	return c.SigningKey != "" || c.ProfileKey != "" || c.LogKey != "" || c.TSA != ""
}

// materialState reports whether the signing key and the built-in TSA of
// dir exist.
func materialState(dir string) (key, tsa bool, err error) {
	key, err = exists(filepath.Join(dir, SigningKeyFile))
	if err != nil {
		return false, false, fmt.Errorf("signing key: %w", err)
	}
	tsa, err = exists(filepath.Join(dir, TSADir, timestamp.KeyFile))
	if err != nil {
		return false, false, fmt.Errorf("built-in timestamp authority: %w", err)
	}
	return key, tsa, nil
}

func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// ReadMaterial reads the key material of the data directory dir and never
// creates anything: a directory without it (a typo in --data-dir, say) is
// ErrNoMaterial, one with half of it ErrPartialMaterial. Every command
// that only uses the keys (printing the trust bundle, publishing a
// profile) reads them with ReadMaterial or ReadMaterialKeys.
func ReadMaterial(dir string) (*Material, error) {
	m, _, err := OpenMaterial(context.Background(), dir, KeyConfig{}, false)
	return m, err
}

// ReadMaterialKeys is ReadMaterial with the keys kc configures.
func ReadMaterialKeys(ctx context.Context, dir string, kc KeyConfig) (*Material, error) {
	m, _, err := OpenMaterial(ctx, dir, kc, false)
	return m, err
}

func partial(dir string, key bool) error {
	have, missing := filepath.Join(dir, SigningKeyFile), filepath.Join(dir, TSADir)
	if !key {
		have, missing = missing, have
	}
	return fmt.Errorf("%w in %s: %s exists but %s is missing; restore it from a backup (a new one would silently change the trust bundle of this service)", ErrPartialMaterial, dir, have, missing)
}

// LoadOrCreateMaterial reads the key material of dir, creating it when the
// directory holds none: an Ed25519 VPEC signing key, a separate Ed25519
// profile key and log key (files, mode 0600) and a built-in TSA. It
// reports what it created so the caller says so. Half of the material (a
// key without its TSA or the reverse) is ErrPartialMaterial: existing key
// material is never replaced or completed.
func LoadOrCreateMaterial(dir string) (*Material, Created, error) {
	return OpenMaterial(context.Background(), dir, KeyConfig{}, true)
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

// OpenMaterial opens the keys of a service: each key kc names by URI
// (keys.Open, which checks it can sign: a key that cannot is an error
// matching ErrKey and naming the key and why, never replaced by a file
// key), the others from the files of dir. With create, a data directory
// without key material gets it (LoadOrCreateMaterial) and a missing log
// key or a configured TSA key's certificates are created; without it,
// nothing is written.
//
// Which file signs what: signing-key.pem signs VPECs; profile-key.pem
// signs profiles and circuit entries; a data directory made before
// profile keys were separate has no profile-key.pem and keeps signing
// profiles with signing-key.pem (docs/KEYS.md "Migrating a data
// directory"). A TSA key held outside the process gets its certificate
// and root in tsa-KEYID/ of dir. The trust bundle lists every VPEC and
// profile key (configured, and the files of dir, so that what older keys
// signed keeps verifying) and every TSA root of dir.
func OpenMaterial(ctx context.Context, dir string, kc KeyConfig, create bool) (m *Material, created Created, err error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, created, fmt.Errorf("data directory: %w", err)
	}
	m = &Material{}
	defer func() {
		if err != nil && m != nil {
			m.Close()
			m = nil
		}
	}()
	opened := map[string]*keys.Signer{}
	open := func(what, uri string, want keys.Algorithm) (*keys.Signer, error) {
		if ks := opened[uri]; ks != nil {
			return ks, nil
		}
		opts := kc.Options
		opts.Want = want
		ks, err := keys.Open(ctx, uri, opts)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrKey, what, err)
		}
		m.closers = append(m.closers, ks)
		opened[uri] = ks
		return ks, nil
	}
	// The configured keys first: a key that cannot sign stops everything
	// before a file is written.
	for _, c := range []struct {
		what, uri string
		want      keys.Algorithm
	}{{"VPEC signing key", kc.VPEC, keys.Ed25519}, {"profile signing key", kc.Profile, keys.Ed25519},
		{"built-in TSA key", kc.TSA, keys.ECDSAP256}, {"log checkpoint key", kc.Log, keys.Ed25519}} {
		if c.uri != "" {
			if _, err := open(c.what, c.uri, c.want); err != nil {
				return m, created, err
			}
		}
	}
	for _, uri := range kc.NextVPEC {
		if _, err := open("next VPEC signing key", uri, keys.Ed25519); err != nil {
			return m, created, err
		}
	}
	if err := prepareFiles(dir, kc, create, &created); err != nil {
		return m, created, err
	}
	fileURI := func(name string) string {
		// absDir is absolute: FileURI cannot fail.
		u, _ := keys.FileURI(filepath.Join(absDir, name))
		return u
	}
	vpecURI := kc.VPEC
	if vpecURI == "" {
		vpecURI = fileURI(SigningKeyFile)
	}
	ks, err := open("VPEC signing key", vpecURI, keys.Ed25519)
	if err != nil {
		return m, created, err
	}
	if m.Signer, err = signing.NewCryptoSigner(ks); err != nil {
		return m, created, err
	}
	profileURI := kc.Profile
	if profileURI == "" {
		profileURI = fileURI(ProfileKeyFile)
		if ok, err := exists(filepath.Join(dir, ProfileKeyFile)); err != nil {
			return m, created, fmt.Errorf("profile key: %w", err)
		} else if !ok {
			// A data directory from before separate profile keys.
			profileURI = fileURI(SigningKeyFile)
		}
	}
	if profileURI == vpecURI {
		m.ProfileSigner = m.Signer
	} else {
		if ks, err = open("profile signing key", profileURI, keys.Ed25519); err != nil {
			return m, created, err
		}
		if m.ProfileSigner, err = signing.NewCryptoSigner(ks); err != nil {
			return m, created, err
		}
	}
	logURI := kc.Log
	if logURI == "" {
		if ok, err := exists(filepath.Join(dir, LogKeyPath)); err != nil {
			return m, created, fmt.Errorf("log key: %w", err)
		} else if ok {
			logURI = fileURI(LogKeyPath)
		}
	}
	if logURI != "" {
		if m.LogSigner, err = open("log checkpoint key", logURI, keys.Ed25519); err != nil {
			return m, created, err
		}
	}
	if m.TSA, err = openTSA(ctx, dir, kc, create, &created, open); err != nil {
		return m, created, err
	}
	for _, uri := range kc.NextVPEC {
		if uri == vpecURI {
			continue
		}
		// Opened above (the configured keys come first).
		ns, err := signing.NewCryptoSigner(opened[uri])
		if err != nil {
			return m, created, err
		}
		m.NextSigners = append(m.NextSigners, ns)
	}
	trust := signing.NewBundle()
	trust.AddKey(m.Signer.PublicKey())
	for _, ns := range m.NextSigners {
		trust.AddKey(ns.PublicKey())
	}
	trust.AddKey(m.ProfileSigner.PublicKey())
	for _, name := range []string{SigningKeyFile, ProfileKeyFile} {
		pub, err := filePublicKey(filepath.Join(dir, name))
		if err != nil {
			return m, created, err
		}
		if pub != nil {
			trust.AddKey(pub)
		}
	}
	roots, err := tsaRoots(dir)
	if err != nil {
		return m, created, err
	}
	for _, c := range roots {
		trust.AddRoot(c)
	}
	// Keys of the trust root that are no longer configured (rotated
	// out) keep verifying what they signed in their window.
	switch r, _, err := ReadTrustRoot(dir); {
	case errors.Is(err, ErrNoTrustRoot):
	case err != nil:
		return m, created, err
	default:
		have := map[string]bool{}
		for _, c := range trust.Roots() {
			have[string(c.Raw)] = true
		}
		for _, k := range r.Keys {
			switch k.Purpose {
			case trustroot.PurposeVPEC, trustroot.PurposeProfile, trustroot.PurposeCircuit:
				trust.AddKey(k.PublicKey)
			case trustroot.PurposeTSARoot:
				if !have[string(k.Certificate.Raw)] {
					trust.AddRoot(k.Certificate)
					have[string(k.Certificate.Raw)] = true
				}
			}
		}
	}
	m.Trust = trust
	return m, created, nil
}

// prepareFiles checks (and with create, creates) the file keys of dir
// that kc leaves to files.
func prepareFiles(dir string, kc KeyConfig, create bool, created *Created) error {
	key, tsa, err := materialState(dir)
	if err != nil {
		return err
	}
	needKey, needTSA := kc.VPEC == "", kc.TSA == ""
	switch {
	case needKey && needTSA && key != tsa:
		return partial(dir, key)
	case !create && ((needKey && !key) || (needTSA && !tsa)):
		return fmt.Errorf("%w in %s (no %s, no %s/): check --data-dir; the first 'svc serve --data-dir %s' creates them", ErrNoMaterial, dir, SigningKeyFile, TSADir, dir)
	case !create:
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	// A new data directory gets a profile key of its own; one whose
	// signing key exists keeps its single key (see OpenMaterial).
	fresh := !key && !tsa
	if needKey && !key {
		if created.SigningKey, err = newKeyFile(filepath.Join(dir, SigningKeyFile)); err != nil {
			return fmt.Errorf("create signing key: %w", err)
		}
	}
	if fresh && kc.Profile == "" {
		if created.ProfileKey, err = newKeyFile(filepath.Join(dir, ProfileKeyFile)); err != nil {
			return fmt.Errorf("create profile key: %w", err)
		}
	}
	if kc.Log == "" {
		// The log key is new whatever the directory's age: nothing
		// signed by an earlier one exists.
		if err := os.MkdirAll(filepath.Join(dir, LogDir), 0o700); err != nil {
			return fmt.Errorf("create log key: %w", err)
		}
		if created.LogKey, err = newKeyFile(filepath.Join(dir, LogKeyPath)); err != nil {
			return fmt.Errorf("create log key: %w", err)
		}
	}
	if needTSA && !tsa {
		tsaDir := filepath.Join(dir, TSADir)
		switch _, err := timestamp.InitAuthority(tsaDir, timestamp.AuthorityOptions{Name: "svc built-in TSA"}); {
		case err == nil:
			created.TSA = tsaDir
		case errors.Is(err, fs.ErrExist):
		default:
			return fmt.Errorf("built-in timestamp authority: %w", err)
		}
	}
	return nil
}

// newKeyFile writes a new Ed25519 key to path (mode 0600) and returns
// path, or "" when the file exists (another process won the race, or it
// was there).
func newKeyFile(path string) (string, error) {
	uri, err := keys.FileURI(path)
	if err != nil {
		return "", err
	}
	_, err = keys.Generate(context.Background(), uri, keys.Ed25519, keys.Options{})
	switch {
	case err == nil:
		return path, nil
	case errors.Is(err, keys.ErrGenerate):
		if ok, serr := exists(path); serr == nil && ok {
			return "", nil
		}
	}
	return "", err
}

// openTSA opens the built-in TSA: with kc.TSA, the certificates in
// tsa-KEYID/ for that key (created with create); else tsa/.
func openTSA(ctx context.Context, dir string, kc KeyConfig, create bool, created *Created, open func(what, uri string, want keys.Algorithm) (*keys.Signer, error)) (*timestamp.Authority, error) {
	if kc.TSA == "" {
		a, err := timestamp.LoadAuthority(filepath.Join(dir, TSADir))
		if err != nil {
			return nil, fmt.Errorf("built-in timestamp authority: %w", err)
		}
		return a, nil
	}
	ks, err := open("built-in TSA key", kc.TSA, keys.ECDSAP256)
	if err != nil {
		return nil, err
	}
	tsaDir := filepath.Join(dir, TSADir+"-"+ks.KeyID())
	ok, err := exists(filepath.Join(tsaDir, timestamp.CertificateFile))
	if err != nil {
		return nil, fmt.Errorf("built-in timestamp authority: %w", err)
	}
	if !ok {
		if !create {
			return nil, fmt.Errorf("%w: the built-in TSA key %s has no certificate in %s yet: the first 'svc serve' with this key creates it", ErrNoMaterial, ks.KeyID(), tsaDir)
		}
		a, err := timestamp.InitAuthorityWithKey(tsaDir, ks, timestamp.AuthorityOptions{Name: "svc built-in TSA"})
		if err != nil {
			return nil, fmt.Errorf("built-in timestamp authority for key %s: %w", ks.KeyID(), err)
		}
		created.TSA = tsaDir
		return a, nil
	}
	a, err := timestamp.LoadAuthorityWithKey(tsaDir, ks)
	if err != nil {
		return nil, fmt.Errorf("built-in timestamp authority: %w", err)
	}
	return a, nil
}

// filePublicKey returns the public key of the Ed25519 key file path, or
// nil when there is none.
func filePublicKey(path string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	priv, err := signing.ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return priv.Public().(ed25519.PublicKey), nil
}

// tsaRoots returns the root certificates of every built-in TSA of dir
// (tsa/ and tsa-KEYID/), so tokens of a TSA key used before keep
// verifying.
func tsaRoots(dir string) ([]*x509.Certificate, error) {
	dirs, err := filepath.Glob(filepath.Join(dir, TSADir+"-*"))
	if err != nil {
		return nil, err
	}
	dirs = append([]string{filepath.Join(dir, TSADir)}, dirs...)
	var roots []*x509.Certificate
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, timestamp.RootFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("built-in timestamp authority: %w", err)
		}
		certs, err := timestamp.ParseCertificatesPEM(data)
		if err != nil || len(certs) != 1 {
			return nil, fmt.Errorf("built-in timestamp authority: %s: want one PEM certificate (%v)", filepath.Join(d, timestamp.RootFile), err)
		}
		roots = append(roots, certs[0])
	}
	return roots, nil
}
