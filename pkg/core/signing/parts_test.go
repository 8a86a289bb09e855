package signing_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
)

// split cuts msg at the given offsets (clamped, in any order) into parts.
func split(msg []byte, cuts ...int) [][]byte {
	var parts [][]byte
	at := 0
	for _, c := range cuts {
		c = min(max(c, at), len(msg))
		parts = append(parts, msg[at:c])
		at = c
	}
	return append(parts, msg[at:])
}

// sameAsStdlib fails t unless VerifyParts over parts decides as
// crypto/ed25519.Verify over the parts joined.
func sameAsStdlib(t testing.TB, pub, sig []byte, parts [][]byte) bool {
	t.Helper()
	msg := bytes.Join(parts, nil)
	want := len(pub) == ed25519.PublicKeySize && len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, msg, sig)
	err := signing.VerifyParts(pub, parts, sig)
	if (err == nil) != want {
		t.Fatalf("VerifyParts(%x, %d parts, %x) = %v; crypto/ed25519 says %v", pub, len(parts), sig, err, want)
	}
	if err != nil && !errors.Is(err, signing.ErrBadSignature) {
		t.Fatalf("VerifyParts error %v is not ErrBadSignature", err)
	}
	// A Verifier written the parts one at a time decides the same, even
	// for one part (which VerifyParts gives to Verify).
	v := signing.NewVerifier(pub, sig)
	for _, p := range parts {
		if n, err := v.Write(p); n != len(p) || err != nil {
			t.Fatalf("Verifier.Write = %d, %v", n, err)
		}
	}
	if err := v.Verify(); (err == nil) != want || err != nil && !errors.Is(err, signing.ErrBadSignature) {
		t.Fatalf("Verifier(%x, %d parts, %x) = %v; crypto/ed25519 says %v", pub, len(parts), sig, err, want)
	}
	return want
}

// TestVerifyPartsAgainstStdlib: on valid signatures cut every way, and on
// the cases RFC 8032 leaves to implementations (a scalar not reduced, high
// bits set, small-order and non-canonically encoded keys, points off the
// curve), VerifyParts decides as crypto/ed25519 does on the joined message.
func TestVerifyPartsAgainstStdlib(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	msg := []byte(`{"records":[{"a":1},{"b":2}],"vpec_id":"vpec_x"}`)
	sig := ed25519.Sign(priv, msg)

	// Every single cut, and every pair of cuts (with empty parts).
	for i := 0; i <= len(msg); i++ {
		if !sameAsStdlib(t, pub, sig, split(msg, i)) {
			t.Fatalf("valid signature refused, cut at %d", i)
		}
		for j := i; j <= len(msg); j += 5 {
			sameAsStdlib(t, pub, sig, split(msg, i, j, j))
		}
	}
	// A changed byte anywhere in the message, in any part, is refused.
	for i := range msg {
		bad := bytes.Clone(msg)
		bad[i] ^= 1
		if sameAsStdlib(t, pub, sig, split(bad, i, i+1)) {
			t.Fatalf("changed byte %d accepted", i)
		}
	}
	parts := split(msg, 10, 20)
	l := mustHex(t, "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010") // the group order, little-endian
	cases := map[string]struct{ pub, sig []byte }{
		"valid":             {pub, sig},
		"short signature":   {pub, sig[:63]},
		"long signature":    {pub, append(bytes.Clone(sig), 0)},
		"short key":         {pub[:31], sig},
		"high bits of S":    {pub, withByte(sig, 63, sig[63]|0x80)},
		"S plus the order":  {pub, withS(sig, addLE(sig[32:], l))},
		"S is the order":    {pub, withS(sig, l)},
		"R changed":         {pub, withByte(sig, 0, sig[0]^1)},
		"key off the curve": {mustHex(t, "0200000000000000000000000000000000000000000000000000000000000000"), sig},
	}
	// A small-order key (the identity) with R the identity and S zero:
	// [0]B = I + [k]I for every message. crypto/ed25519 accepts it (it
	// does not refuse small-order keys); so must VerifyParts.
	identity := mustHex(t, "0100000000000000000000000000000000000000000000000000000000000000")
	cases["identity key, identity R, S zero"] = struct{ pub, sig []byte }{identity, append(bytes.Clone(identity), make([]byte, 32)...)}
	// The identity again, with y = p + 1: an encoding that is not
	// canonical, which both decode.
	nonCanonical := mustHex(t, "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
	cases["identity key not canonical"] = struct{ pub, sig []byte }{nonCanonical, append(bytes.Clone(identity), make([]byte, 32)...)}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := sameAsStdlib(t, tc.pub, tc.sig, parts)
			if want := name == "valid" || name == "identity key, identity R, S zero" || name == "identity key not canonical"; got != want {
				t.Fatalf("crypto/ed25519 says %v; this test expected %v", got, want)
			}
		})
	}
	b := signing.NewBundle()
	id := b.AddKey(pub)
	if err := b.VerifyParts(id, parts, signing.FormatSignature(sig)); err != nil {
		t.Fatalf("Bundle.VerifyParts: %v", err)
	}
	if err := b.VerifyParts(id, split([]byte("other"), 2), signing.FormatSignature(sig)); !errors.Is(err, signing.ErrBadSignature) {
		t.Fatalf("Bundle.VerifyParts of another message: %v", err)
	}
	if err := b.VerifyParts("0000000000000000", parts, signing.FormatSignature(sig)); !errors.Is(err, signing.ErrUnknownKey) {
		t.Fatalf("Bundle.VerifyParts with an unknown key: %v", err)
	}
}

// FuzzVerifyParts: for any key, message, cuts and signature (a valid one
// changed in one byte, or any bytes), VerifyParts decides as
// crypto/ed25519.Verify on the joined message.
func FuzzVerifyParts(f *testing.F) {
	f.Add([]byte("seed"), []byte(`{"a":1}`), uint16(3), uint16(5), uint16(0), byte(0), []byte(nil))
	f.Add([]byte("seed"), []byte(`{"a":1}`), uint16(0), uint16(0), uint16(64), byte(1), []byte(nil))
	f.Add([]byte("k"), []byte{}, uint16(1), uint16(2), uint16(63), byte(0x80), []byte(nil))
	f.Add([]byte("k"), []byte("m"), uint16(1), uint16(2), uint16(0), byte(0), bytes.Repeat([]byte{1}, 96))
	f.Fuzz(func(t *testing.T, keySeed, msg []byte, c1, c2, at uint16, flip byte, raw []byte) {
		seed := make([]byte, ed25519.SeedSize)
		copy(seed, keySeed)
		priv := ed25519.NewKeyFromSeed(seed)
		pub := priv.Public().(ed25519.PublicKey)
		sig := ed25519.Sign(priv, msg)
		if at < ed25519.SignatureSize {
			sig[at] ^= flip
		}
		parts := split(msg, int(c1), int(c2))
		sameAsStdlib(t, pub, sig, parts)
		if len(raw) >= 96 { // any key and signature
			sameAsStdlib(t, raw[:32], raw[32:96], parts)
		}
	})
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func withByte(b []byte, i int, v byte) []byte {
	b = bytes.Clone(b)
	b[i] = v
	return b
}

func withS(sig, s []byte) []byte { return append(bytes.Clone(sig[:32]), s...) }

// addLE is a + b over 32-byte little-endian numbers, modulo 2^256.
func addLE(a, b []byte) []byte {
	out := make([]byte, 32)
	carry := 0
	for i := range out {
		v := int(a[i]) + int(b[i]) + carry
		out[i], carry = byte(v), v>>8
	}
	return out
}
