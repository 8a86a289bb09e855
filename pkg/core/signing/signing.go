// Package signing holds svc's Ed25519 key handling: key generation, PEM
// encoding that openssl reads and writes (PKCS#8 private keys, SPKI public
// keys), key ids, the "Ed25519:" signature string, and trust bundles.
package signing

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
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
	// ErrBase64 reports a string that is not in the one accepted base64
	// form (see DecodeBase64).
	ErrBase64 = errors.New("not canonical base64")
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

// DecodeBase64 decodes s in the one form svc accepts for binary values in
// documents (signatures, public keys, RFC 3161 tokens): the standard
// alphabet of RFC 4648 section 4 with = padding, nothing else (no line
// breaks, spaces or URL-safe characters), and canonical: the unused bits
// of the last character are zero, so encoding the result gives s again.
// (encoding/base64 skips CR and LF even in Strict mode, which let
// byte-different copies of a signed document verify.) Errors match
// ErrBase64 and name the offset of the first offending character.
func DecodeBase64(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return nil, fmt.Errorf("%w: character %s at offset %d is not in the standard base64 alphabet", ErrBase64, quoteByte(c), i)
		}
	}
	if len(s)%4 != 0 {
		return nil, fmt.Errorf("%w: length %d is not a multiple of 4 (padding with = is required)", ErrBase64, len(s))
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase64, err)
	}
	if base64.StdEncoding.EncodeToString(b) != s {
		return nil, fmt.Errorf("%w: not the canonical encoding of its bytes", ErrBase64)
	}
	return b, nil
}

func quoteByte(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("0x%02x", c)
	}
	return fmt.Sprintf("%q", c)
}

// ParseSignature decodes a signature string written by FormatSignature:
// "Ed25519:" and the canonical base64 (see DecodeBase64) of 64 bytes.
func ParseSignature(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, SignaturePrefix)
	if !ok {
		return nil, fmt.Errorf("%w: must start with %q", ErrMalformedSignature, SignaturePrefix)
	}
	sig, err := DecodeBase64(rest)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedSignature, err)
	}
	if len(sig) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrMalformedSignature, len(sig), ed25519.SignatureSize)
	}
	return sig, nil
}

// Signer signs with one Ed25519 key and names it by key id. The key is a
// crypto.Signer: an ed25519.PrivateKey in memory (NewSigner), or a key held
// elsewhere, in an HSM or a cloud key-management service
// (NewCryptoSigner with a pkg/service/keys signer). A Signer is safe for
// concurrent use when its crypto.Signer is.
type Signer struct {
	key   crypto.Signer
	pub   ed25519.PublicKey
	keyID string
}

// ErrSign reports a signing operation that failed (an HSM that went away,
// a KMS that refused).
var ErrSign = errors.New("signing failed")

// NewSigner returns a Signer for priv.
func NewSigner(priv ed25519.PrivateKey) (*Signer, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: private key has %d bytes, want %d", ErrMalformedKey, len(priv), ed25519.PrivateKeySize)
	}
	pub := priv.Public().(ed25519.PublicKey)
	return &Signer{key: priv, pub: pub, keyID: KeyID(pub)}, nil
}

// NewCryptoSigner returns a Signer for key, which must hold an Ed25519 key
// and sign whole messages with crypto.Hash(0) (pure Ed25519).
func NewCryptoSigner(key crypto.Signer) (*Signer, error) {
	if priv, ok := key.(ed25519.PrivateKey); ok {
		return NewSigner(priv)
	}
	pub, ok := key.Public().(ed25519.PublicKey)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: the key is %T, want Ed25519", ErrMalformedKey, key.Public())
	}
	return &Signer{key: key, pub: slices.Clone(pub), keyID: KeyID(pub)}, nil
}

// KeyID returns the id of the signer's public key.
func (s *Signer) KeyID() string { return s.keyID }

// PublicKey returns the signer's public key.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.pub }

// CryptoSigner returns the signer's key as a crypto.Signer.
func (s *Signer) CryptoSigner() crypto.Signer { return s.key }

// Sign returns the raw 64-byte Ed25519 signature of msg. A key held in
// memory never fails; one held elsewhere may, and then the error wraps
// ErrSign (and the key provider's error). The signature is not verified
// here: pkg/service/keys verifies every signature a key outside the
// process returns.
func (s *Signer) Sign(msg []byte) ([]byte, error) {
	if priv, ok := s.key.(ed25519.PrivateKey); ok {
		return ed25519.Sign(priv, msg), nil
	}
	sig, err := s.key.Sign(rand.Reader, msg, crypto.Hash(0))
	if err != nil {
		return nil, fmt.Errorf("%w with key %s: %w", ErrSign, s.keyID, err)
	}
	return sig, nil
}

// Verify checks a raw Ed25519 signature of msg by pub.
func Verify(pub ed25519.PublicKey, msg, sig []byte) error {
	if len(pub) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, msg, sig) {
		return ErrBadSignature
	}
	return nil
}
