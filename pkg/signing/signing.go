// Package signing holds svc's Ed25519 key handling: key generation, PEM
// encoding that openssl reads and writes (PKCS#8 private keys, SPKI public
// keys), key ids, the "Ed25519:" signature string, and trust bundles.
package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// SignaturePrefix starts every signature string.
const SignaturePrefix = "Ed25519:"

// KeyIDLength is the number of hex characters in a key id.
const KeyIDLength = 16

// Sentinel errors, matchable with errors.Is.
var (
	// ErrMalformedKey reports PEM or DER that is not an Ed25519 key.
	ErrMalformedKey = errors.New("malformed key")
	// ErrMalformedSignature reports a signature string that is not "Ed25519:" + base64 of 64 bytes.
	ErrMalformedSignature = errors.New("malformed signature")
	// ErrBadSignature reports a signature that does not verify.
	ErrBadSignature = errors.New("signature does not verify")
	// ErrUnknownKey reports a key id that the trust bundle does not hold.
	ErrUnknownKey = errors.New("signing key not in trust bundle")
)

// GenerateKey returns a new Ed25519 key pair from crypto/rand.
func GenerateKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate Ed25519 key: %w", err)
	}
	return pub, priv, nil
}

// KeyID returns the key id of pub: the first 16 hex characters of SHA-256
// over the key's SubjectPublicKeyInfo DER.
func KeyID(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		// Only reachable for a public key of the wrong length.
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])[:KeyIDLength]
}

// MarshalPrivateKeyPEM encodes priv as a PKCS#8 "PRIVATE KEY" PEM block,
// the form `openssl genpkey -algorithm ed25519` writes.
func MarshalPrivateKeyPEM(priv ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKeyPEM decodes the first "PRIVATE KEY" block of data.
func ParsePrivateKeyPEM(data []byte) (ed25519.PrivateKey, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%w: no PRIVATE KEY PEM block found", ErrMalformedKey)
		}
		if block.Type != "PRIVATE KEY" {
			continue
		}
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformedKey, err)
		}
		priv, ok := key.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: private key is %T, want Ed25519", ErrMalformedKey, key)
		}
		return priv, nil
	}
}

// MarshalPublicKeyPEM encodes pub as an SPKI "PUBLIC KEY" PEM block, the
// form `openssl pkey -pubout` writes.
func MarshalPublicKeyPEM(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("encode public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParsePublicKeyDER decodes an SPKI DER Ed25519 public key.
func ParsePublicKeyDER(der []byte) (ed25519.PublicKey, error) {
	key, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedKey, err)
	}
	pub, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: public key is %T, want Ed25519", ErrMalformedKey, key)
	}
	return pub, nil
}

// ParsePublicKeyPEM decodes the first "PUBLIC KEY" block of data.
func ParsePublicKeyPEM(data []byte) (ed25519.PublicKey, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%w: no PUBLIC KEY PEM block found", ErrMalformedKey)
		}
		if block.Type == "PUBLIC KEY" {
			return ParsePublicKeyDER(block.Bytes)
		}
	}
}

// FormatSignature returns the signature string "Ed25519:" + standard base64.
func FormatSignature(sig []byte) string {
	return SignaturePrefix + base64.StdEncoding.EncodeToString(sig)
}

// ParseSignature decodes a signature string written by FormatSignature.
func ParseSignature(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, SignaturePrefix)
	if !ok {
		return nil, fmt.Errorf("%w: must start with %q", ErrMalformedSignature, SignaturePrefix)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("%w: base64: %v", ErrMalformedSignature, err)
	}
	if len(sig) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrMalformedSignature, len(sig), ed25519.SignatureSize)
	}
	return sig, nil
}

// Signer signs with one Ed25519 private key and names it by key id.
type Signer struct {
	key   ed25519.PrivateKey
	keyID string
}

// NewSigner returns a Signer for priv.
func NewSigner(priv ed25519.PrivateKey) (*Signer, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: private key has %d bytes, want %d", ErrMalformedKey, len(priv), ed25519.PrivateKeySize)
	}
	pub := priv.Public().(ed25519.PublicKey)
	return &Signer{key: priv, keyID: KeyID(pub)}, nil
}

// KeyID returns the id of the signer's public key.
func (s *Signer) KeyID() string { return s.keyID }

// PublicKey returns the signer's public key.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// Sign returns the raw 64-byte Ed25519 signature of msg.
func (s *Signer) Sign(msg []byte) []byte { return ed25519.Sign(s.key, msg) }

// Verify checks a raw Ed25519 signature of msg by pub.
func Verify(pub ed25519.PublicKey, msg, sig []byte) error {
	if len(pub) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, msg, sig) {
		return ErrBadSignature
	}
	return nil
}
