package signing

import (
	"crypto/ed25519"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"
	"hash"

	"filippo.io/edwards25519"
)

// VerifyParts is Verify of the message made of parts joined in order,
// without joining them: a large document's signed bytes are mostly
// windows of the file as read, and copying them into one slice costs as
// much as hashing them.
//
// The check is crypto/ed25519's (RFC 8032 Ed25519, with its decisions on
// the cases the RFC leaves open: a signature scalar S must be reduced, the
// public key may be any encoding of a point on the curve, R is compared
// as encoded), with SHA-512 fed the parts in turn.
// TestVerifyPartsAgainstStdlib and FuzzVerifyParts compare the two.
func VerifyParts(pub ed25519.PublicKey, parts [][]byte, sig []byte) error {
	if len(parts) == 1 {
		return Verify(pub, parts[0], sig)
	}
	v := NewVerifier(pub, sig)
	for _, p := range parts {
		v.Write(p)
	}
	return v.Verify()
}

// Verifier is VerifyParts for a message whose parts become known one after
// another: Write gives the next part, Verify checks the signature over all
// of them. The message is hashed as it is written, so a caller can hash
// the first parts while it still reads the rest.
type Verifier struct {
	pub ed25519.PublicKey
	sig []byte
	h   hash.Hash
}

// NewVerifier returns a Verifier of sig by pub over the message to be
// written.
func NewVerifier(pub ed25519.PublicKey, sig []byte) *Verifier {
	v := &Verifier{pub: pub, sig: sig, h: sha512.New()}
	if len(pub) == ed25519.PublicKeySize && len(sig) == ed25519.SignatureSize {
		v.h.Write(sig[:32])
		v.h.Write(pub)
	}
	return v
}

// Write adds p to the message. It never fails.
func (v *Verifier) Write(p []byte) (int, error) { return v.h.Write(p) }

// Verify reports whether the signature is valid over the message written
// so far (ErrBadSignature when not).
func (v *Verifier) Verify() error {
	pub, sig := v.pub, v.sig
	if len(pub) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize || sig[63]&224 != 0 {
		return ErrBadSignature
	}
	A, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return ErrBadSignature
	}
	var digest [sha512.Size]byte
	k, err := edwards25519.NewScalar().SetUniformBytes(v.h.Sum(digest[:0]))
	if err != nil {
		return ErrBadSignature // not reached: the digest is 64 bytes
	}
	S, err := edwards25519.NewScalar().SetCanonicalBytes(sig[32:])
	if err != nil {
		return ErrBadSignature
	}
	minusA := new(edwards25519.Point).Negate(A)
	R := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(k, minusA, S)
	if subtle.ConstantTimeCompare(sig[:32], R.Bytes()) != 1 {
		return ErrBadSignature
	}
	return nil
}

// VerifyParts is Verify of the message made of parts joined in order
// (VerifyParts, the function).
func (b *Bundle) VerifyParts(keyID string, parts [][]byte, sig string) error {
	raw, err := ParseSignature(sig)
	if err != nil {
		return err
	}
	pub, err := b.Key(keyID)
	if err != nil {
		return err
	}
	if err := VerifyParts(pub, parts, raw); err != nil {
		return fmt.Errorf("key %s: %w", keyID, err)
	}
	return nil
}
