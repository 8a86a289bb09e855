package server

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/tlog"
)

// Files of the transparency log in a data directory
// (docs/TRANSPARENCY.md): LogDir holds the log's key, its origin, the
// monitoring-key secret and (on the POSIX backend) the log itself.
const (
	LogDir           = "transparency"
	LogKeyFile       = "log-key.pem"       // the log's Ed25519 key, PKCS #8 PEM
	LogOriginFile    = "log-origin"        // the log's origin, one line
	LogSecretFile    = "monitoring-secret" // 32 random bytes in hex, one line
	LogTilesDir      = "tiles"             // the POSIX log (tlog-tiles layout)
	logSecretBytes   = 32
	maxLogOriginSize = 256
)

// ErrLogOrigin reports a log origin that differs from the one the data
// directory's log was created with: a log keeps its name.
var ErrLogOrigin = errors.New("the transparency log's origin cannot change")

// LogMaterial is a transparency log's key material.
type LogMaterial struct {
	// Signer signs checkpoints (an ed25519.PrivateKey from LogKeyFile; a
	// KMS or HSM signer can replace it: logwriter takes any crypto.Signer
	// over an Ed25519 key).
	Signer crypto.Signer
	// Key is the log's public key with its origin, for the trust bundle.
	Key tlog.LogKey
	// Secret derives organisations' monitoring keys.
	Secret []byte
	// TilesDir is the POSIX log's directory.
	TilesDir string
}

// LoadOrCreateLogMaterial reads the transparency log's key material in
// dataDir/LogDir, creating what is missing: a new key and secret, and the
// origin (origin, or defaultOrigin when origin is ""). signer, when not
// nil, is the log's key (Material.LogSigner: a file, HSM or KMS key chosen
// by svc serve --log-key) and no key file is read or made. An origin given
// that differs from the stored one is ErrLogOrigin. created is true when
// the key was created now (the trust bundle changes: say so).
func LoadOrCreateLogMaterial(dataDir, origin, defaultOrigin string, signer crypto.Signer) (m *LogMaterial, created bool, err error) {
	dir := filepath.Join(dataDir, LogDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("transparency log directory: %w", err)
	}
	want := origin
	if want == "" {
		want = defaultOrigin
	}
	stored, err := createOnce(filepath.Join(dir, LogOriginFile), func() ([]byte, error) { return []byte(want + "\n"), nil })
	if err != nil {
		return nil, false, fmt.Errorf("transparency log origin: %w", err)
	}
	have := strings.TrimSuffix(string(stored), "\n")
	if len(stored) > maxLogOriginSize || strings.ContainsAny(have, "\n\r") || have == "" {
		return nil, false, fmt.Errorf("%s: not one line naming the log", filepath.Join(dir, LogOriginFile))
	}
	if origin != "" && origin != have {
		return nil, false, fmt.Errorf("%w: the log in %s is %q, --log-origin says %q", ErrLogOrigin, dir, have, origin)
	}
	var made bool
	if signer == nil {
		keyPEM, err := createOnce(filepath.Join(dir, LogKeyFile), func() ([]byte, error) {
			_, priv, err := signing.GenerateKey()
			if err != nil {
				return nil, err
			}
			made = true
			return signing.MarshalPrivateKeyPEM(priv)
		})
		if err != nil {
			return nil, false, fmt.Errorf("transparency log key: %w", err)
		}
		priv, err := signing.ParsePrivateKeyPEM(keyPEM)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", filepath.Join(dir, LogKeyFile), err)
		}
		signer = priv
	}
	pub, ok := signer.Public().(ed25519.PublicKey)
	if !ok {
		return nil, false, fmt.Errorf("transparency log key: %T is not an Ed25519 key", signer.Public())
	}
	secretHex, err := createOnce(filepath.Join(dir, LogSecretFile), func() ([]byte, error) {
		b := make([]byte, logSecretBytes)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(b) + "\n"), nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("monitoring secret: %w", err)
	}
	secret, err := hex.DecodeString(string(bytes.TrimSuffix(secretHex, []byte("\n"))))
	if err != nil || len(secret) < logSecretBytes {
		return nil, false, fmt.Errorf("%s: not %d bytes in hex", filepath.Join(dir, LogSecretFile), logSecretBytes)
	}
	key, err := tlog.NewLogKey(have, pub)
	if err != nil {
		return nil, false, fmt.Errorf("transparency log: %w", err)
	}
	return &LogMaterial{Signer: signer, Key: key, Secret: secret, TilesDir: filepath.Join(dir, LogTilesDir)}, made, nil
}

// createOnce returns the file at path, creating it with make's bytes (mode
// 0600) if it does not exist; of two processes racing, both read the one
// that won.
func createOnce(path string, make func() ([]byte, error)) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		return data, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	data, err = make()
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteNew(path, data, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return os.ReadFile(path)
}

// ReadLogKey returns the transparency log's public key from dataDir
// without creating anything; found is false when the data directory has
// no log yet. signer, when not nil, is the log's key (Material.LogSigner);
// otherwise the key file of dataDir/LogDir is read.
func ReadLogKey(dataDir string, signer crypto.Signer) (key tlog.LogKey, found bool, err error) {
	dir := filepath.Join(dataDir, LogDir)
	origin, err := os.ReadFile(filepath.Join(dir, LogOriginFile))
	if errors.Is(err, fs.ErrNotExist) {
		return tlog.LogKey{}, false, nil
	}
	if err != nil {
		return tlog.LogKey{}, false, fmt.Errorf("transparency log origin: %w", err)
	}
	if signer == nil {
		keyPEM, err := os.ReadFile(filepath.Join(dir, LogKeyFile))
		if errors.Is(err, fs.ErrNotExist) {
			return tlog.LogKey{}, false, nil
		}
		if err != nil {
			return tlog.LogKey{}, false, fmt.Errorf("transparency log key: %w", err)
		}
		if signer, err = signing.ParsePrivateKeyPEM(keyPEM); err != nil {
			return tlog.LogKey{}, false, fmt.Errorf("%s: %w", filepath.Join(dir, LogKeyFile), err)
		}
	}
	pub, ok := signer.Public().(ed25519.PublicKey)
	if !ok {
		return tlog.LogKey{}, false, fmt.Errorf("transparency log key: %T is not an Ed25519 key", signer.Public())
	}
	key, err = tlog.NewLogKey(strings.TrimSuffix(string(origin), "\n"), pub)
	if err != nil {
		return tlog.LogKey{}, false, fmt.Errorf("transparency log: %w", err)
	}
	return key, true, nil
}
