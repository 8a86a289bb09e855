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
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// memoryBackend signs with a private key in this process: the file
// provider, and FromPrivateKey.
type memoryBackend struct {
	priv crypto.Signer
	alg  Algorithm
}

func newMemoryBackend(priv crypto.Signer) (*memoryBackend, error) {
	switch k := priv.(type) {
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("%w: Ed25519 private key of %d bytes", ErrAlgorithm, len(k))
		}
		return &memoryBackend{priv: k, alg: Ed25519}, nil
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%w: ECDSA key on %s; svc signs with P-256 only", ErrAlgorithm, k.Curve.Params().Name)
		}
		return &memoryBackend{priv: k, alg: ECDSAP256}, nil
	default:
		return nil, fmt.Errorf("%w: private key is %T; svc signs with Ed25519 or ECDSA P-256", ErrAlgorithm, priv)
	}
}

func (m *memoryBackend) sign(_ context.Context, msgOrDigest []byte) ([]byte, error) {
	if m.alg == Ed25519 {
		return ed25519.Sign(m.priv.(ed25519.PrivateKey), msgOrDigest), nil
	}
	return ecdsa.SignASN1(rand.Reader, m.priv.(*ecdsa.PrivateKey), msgOrDigest)
}

func (m *memoryBackend) close() error { return nil }

// openFile reads a PKCS#8 "PRIVATE KEY" PEM file (what `svc keygen`, the
// built-in TSA and `openssl genpkey` write).
func openFile(ctx context.Context, u *URI, opts Options) (*Signer, error) {
	data, err := os.ReadFile(u.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist (create it with svc keygen, or fix the path)", ErrKeyNotFound, u.Path)
		}
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	priv, err := ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Path, err)
	}
	b, err := newMemoryBackend(priv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Path, err)
	}
	return newSigner(ctx, u.Raw, "file", priv.Public(), b, false, opts)
}

// ParsePrivateKeyPEM decodes the first "PRIVATE KEY" (PKCS#8) block of
// data: an Ed25519 key or an ECDSA P-256 key.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("%w: no PEM \"PRIVATE KEY\" (PKCS#8) block found", ErrAlgorithm)
		}
		if block.Type != "PRIVATE KEY" {
			continue
		}
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: PKCS#8: %v", ErrAlgorithm, err)
		}
		s, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%w: private key is %T", ErrAlgorithm, key)
		}
		if _, err := newMemoryBackend(s); err != nil {
			return nil, err
		}
		return s, nil
	}
}
