package signing

import (
	"crypto/ed25519"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"

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
	if len(pub) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize || sig[63]&224 != 0 {
		return ErrBadSignature
	}
	A, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return ErrBadSignature
	}
	h := sha512.New()
	h.Write(sig[:32])
	h.Write(pub)
	for _, p := range parts {
		h.Write(p)
	}
	var digest [sha512.Size]byte
	k, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(digest[:0]))
	if err != nil {
		return ErrBadSignature // not reached: the digest is 64 bytes
	}
	S, err := edwards25519.NewScalar().SetCanonicalBytes(sig[32:])
	if err != nil {
		return ErrBadSignature
	}
	// [S]B = R + [k]A, so R = [k](-A) + [S]B.
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
