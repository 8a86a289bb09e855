package tlog

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// LogKey is a log's public key with its origin: the C2SP signed-note
// verifier key "<origin>+<8 hex key hash>+<base64 of 0x01 || Ed25519 key>"
// (what golang.org/x/mod/sumdb/note calls a verifier key). The key's name
// is the log's origin, the first line of each of its checkpoints.
type LogKey struct {
	vkey string
	v    note.Verifier
	pub  ed25519.PublicKey
}

// ParseLogKey reads a C2SP note verifier key for an Ed25519 log key.
func ParseLogKey(vkey string) (LogKey, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return LogKey{}, fmt.Errorf("%w log key %q: %v (want <origin>+<key hash>+<base64 key>, as svc serve prints it)", ErrMalformed, clip(vkey), err)
	}
	// One accepted spelling: what NewEd25519VerifierKey writes.
	_, rest, _ := strings.Cut(vkey, "+")
	_, b64, _ := strings.Cut(rest, "+")
	raw, err := decodeBase64(b64)
	if err != nil || len(raw) != 1+ed25519.PublicKeySize {
		return LogKey{}, fmt.Errorf("%w log key %q: the key is not base64 of an Ed25519 key", ErrMalformed, clip(vkey))
	}
	if again, err := note.NewEd25519VerifierKey(v.Name(), ed25519.PublicKey(raw[1:])); err != nil || again != vkey {
		return LogKey{}, fmt.Errorf("%w log key %q: not in its canonical form %q", ErrMalformed, clip(vkey), again)
	}
	return LogKey{vkey: vkey, v: v, pub: ed25519.PublicKey(raw[1:])}, nil
}

// NewLogKey returns the log key of an Ed25519 public key for a log with
// the given origin.
func NewLogKey(origin string, pub ed25519.PublicKey) (LogKey, error) {
	vkey, err := note.NewEd25519VerifierKey(origin, pub)
	if err != nil {
		return LogKey{}, fmt.Errorf("%w: log origin %q or key: %v (an origin is a schema-less URL such as svc.example.com/log, without spaces or +)", ErrMalformed, clip(origin), err)
	}
	return ParseLogKey(vkey)
}

// Origin returns the log's origin.
func (k LogKey) Origin() string { return k.v.Name() }

// String returns the C2SP note verifier key.
func (k LogKey) String() string { return k.vkey }

// PublicKey returns the log's Ed25519 public key (a copy).
func (k LogKey) PublicKey() ed25519.PublicKey { return slices.Clone(k.pub) }

// Verifier returns the key as a note verifier.
func (k LogKey) Verifier() note.Verifier { return k.v }

// IsZero reports whether k is the zero LogKey.
func (k LogKey) IsZero() bool { return k.v == nil }

// noteSigner signs checkpoints with a crypto.Signer holding an Ed25519
// key, such as an ed25519.PrivateKey or a key in an HSM.
type noteSigner struct {
	name string
	hash uint32
	s    crypto.Signer
	pub  ed25519.PublicKey
}

// NewNoteSigner returns a signed-note signer for a log with the given
// origin whose key s holds: an ed25519.PrivateKey, or any crypto.Signer
// whose public key is Ed25519 and which signs with crypto.Hash(0) as
// Ed25519 does (pure Ed25519, RFC 8032), such as a PKCS#11 or KMS key.
// Each signature is checked against the public key before it is used, so
// a faulty signer cannot publish a checkpoint that does not verify.
func NewNoteSigner(origin string, s crypto.Signer) (note.Signer, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: no checkpoint signing key", ErrMalformed)
	}
	pub, ok := s.Public().(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: the checkpoint signing key is %T, want an Ed25519 key", ErrMalformed, s.Public())
	}
	k, err := NewLogKey(origin, pub)
	if err != nil {
		return nil, err
	}
	hash, err := keyHash(k.vkey)
	if err != nil {
		return nil, err
	}
	return &noteSigner{name: origin, hash: hash, s: s, pub: pub}, nil
}

func (n *noteSigner) Name() string    { return n.name }
func (n *noteSigner) KeyHash() uint32 { return n.hash }
func (n *noteSigner) Sign(msg []byte) ([]byte, error) {
	sig, err := n.s.Sign(rand.Reader, msg, crypto.Hash(0))
	if err != nil {
		return nil, fmt.Errorf("sign checkpoint: %w", err)
	}
	if !ed25519.Verify(n.pub, msg, sig) {
		return nil, fmt.Errorf("sign checkpoint: the signing key returned a signature that does not verify with its public key")
	}
	return sig, nil
}

// keyHash reads the key hash field of a verifier key.
func keyHash(vkey string) (uint32, error) {
	_, rest, _ := strings.Cut(vkey, "+")
	h, _, _ := strings.Cut(rest, "+")
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil || len(h) != 8 {
		return 0, fmt.Errorf("%w verifier key %q: key hash %q is not 8 hex digits", ErrMalformed, clip(vkey), clip(h))
	}
	return uint32(v), nil
}
