// Package commitment computes, parses and checks commitment hash strings.
//
// A commitment hash string binds a document to its exact bytes. Two
// algorithms are defined, both with a 32-byte digest written as 64 lowercase
// hex digits:
//
//	sha256:<64 hex>     SHA-256 over the raw bytes, [Length] (71) characters
//	poseidon2:<64 hex>  Poseidon2 over BN254 (see [SumPoseidon2]), 74 characters
//
// The poseidon2 encoding of bytes and of int8 vectors into field elements is
// specified in poseidon2.go and docs/FORMATS.md ("Poseidon2 commitments").
//
// All functions are safe on arbitrary (untrusted) input and never panic.
package commitment

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Algorithm names the hash function of a commitment; it is the text before
// the colon in a commitment string.
type Algorithm string

const (
	// SHA256 is SHA-256 (FIPS 180-4) over the raw bytes.
	SHA256 Algorithm = "sha256"
	// Poseidon2 is gnark-crypto's Poseidon2 Merkle–Damgård hash over the
	// BN254 scalar field of a tagged, length-suffixed packing of the bytes
	// ([SumPoseidon2], [SumPoseidon2Int8]).
	Poseidon2 Algorithm = "poseidon2"
)

// Length is the length in bytes of a sha256 commitment string:
// len("sha256:") + 64 hex digits.
const Length = 71

// bufSize is the read buffer used when streaming into the hash.
const bufSize = 1 << 20

var (
	// ErrMalformed reports a commitment string that is not well formed.
	ErrMalformed = errors.New("commitment: malformed commitment hash")
	// ErrUnsupported reports an algorithm that cannot be computed or checked
	// here (or, in other packages, a hash form a field does not accept).
	ErrUnsupported = errors.New("commitment: unsupported algorithm")
	// ErrMismatch reports that data does not match the expected commitment.
	ErrMismatch = errors.New("commitment: hash mismatch")
)

// Hash is a parsed or computed commitment: an algorithm and its digest.
type Hash struct {
	// Algorithm is the hash function that produced Digest.
	Algorithm Algorithm
	// Digest is the raw digest (32 bytes for both algorithms; for Poseidon2
	// a big-endian field element below the BN254 scalar modulus).
	Digest []byte
}

// String returns the commitment string "<algorithm>:<lowercase hex digest>".
func (h Hash) String() string {
	var b strings.Builder
	b.Grow(len(h.Algorithm) + 1 + 2*len(h.Digest))
	b.WriteString(string(h.Algorithm))
	b.WriteByte(':')
	b.WriteString(hex.EncodeToString(h.Digest))
	return b.String()
}

// Sum returns the SHA-256 commitment of data.
func Sum(data []byte) Hash {
	d := sha256.Sum256(data)
	return Hash{Algorithm: SHA256, Digest: d[:]}
}

// String returns the SHA-256 commitment string of data; it is
// Sum(data).String().
func String(data []byte) string {
	return Sum(data).String()
}

// SumReader streams r into SHA-256 in constant memory and returns the
// commitment and the number of bytes read. Read errors are wrapped.
func SumReader(r io.Reader) (Hash, int64, error) {
	if r == nil {
		return Hash{}, 0, errors.New("commitment: nil reader")
	}
	h := sha256.New()
	buf := make([]byte, bufSize)
	// Hide any WriterTo (e.g. *os.File) so that io.CopyBuffer uses our 1 MiB
	// buffer rather than a small internal one.
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, buf)
	if err != nil {
		return Hash{}, n, fmt.Errorf("commitment: read after %d bytes: %w", n, err)
	}
	return Hash{Algorithm: SHA256, Digest: h.Sum(nil)}, n, nil
}

// SumFile returns the SHA-256 commitment of the file at path and its size,
// streaming it in constant memory.
func SumFile(path string) (Hash, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Hash{}, 0, fmt.Errorf("commitment: %w", err)
	}
	defer f.Close()
	h, n, err := SumReader(f)
	if err != nil {
		return Hash{}, n, fmt.Errorf("commitment: hash %s: %w", path, err)
	}
	return h, n, nil
}

// Parse parses a commitment string.
//
// "sha256:" and "poseidon2:" must each be followed by exactly 64 lowercase
// hex digits; a poseidon2 digest must also be a canonical BN254 scalar field
// element (below the modulus), since no other value can be a Poseidon2
// digest. Any other form (missing or unknown prefix, wrong length, uppercase
// or non-hex digits, a non-canonical poseidon2 digest) returns an error
// wrapping [ErrMalformed] that names the problem.
func Parse(s string) (Hash, error) {
	var digest [32]byte
	alg, n, err := parseInto(&digest, s)
	if err != nil {
		return Hash{}, err
	}
	return Hash{Algorithm: alg, Digest: append([]byte(nil), digest[:n]...)}, nil
}

// ParseAlgorithm is Parse without the digest: s's algorithm, or Parse's
// error. It allocates nothing for a well-formed s (a VPEC holds several
// per record).
func ParseAlgorithm(s string) (Algorithm, error) {
	var digest [32]byte
	alg, _, err := parseInto(&digest, s)
	return alg, err
}

// parseInto is Parse, decoding the digest into dst; it returns its length.
func parseInto(dst *[32]byte, s string) (Algorithm, int, error) {
	if s == "" {
		return "", 0, fmt.Errorf("%w: empty string", ErrMalformed)
	}
	alg, digest, ok := strings.Cut(s, ":")
	if !ok {
		return "", 0, fmt.Errorf("%w: %s: missing algorithm prefix (want \"sha256:<64 hex>\")", ErrMalformed, quote(s))
	}
	switch Algorithm(alg) {
	case SHA256:
		if len(digest) != 2*sha256.Size {
			return "", 0, fmt.Errorf("%w: %s: sha256 digest must be %d hex characters, got %d",
				ErrMalformed, quote(s), 2*sha256.Size, len(digest))
		}
	case Poseidon2:
		if len(digest) != 2*Poseidon2DigestBytes {
			return "", 0, fmt.Errorf("%w: %s: poseidon2 digest must be %d hex characters, got %d",
				ErrMalformed, quote(s), 2*Poseidon2DigestBytes, len(digest))
		}
	default:
		return "", 0, fmt.Errorf("%w: %s: unknown algorithm %s (want \"sha256\" or \"poseidon2\")", ErrMalformed, quote(s), quote(alg))
	}
	raw := dst[:len(digest)/2]
	if !decodeLowerHex(raw, digest) {
		return "", 0, fmt.Errorf("%w: %s: %s digest %v", ErrMalformed, quote(s), alg, checkLowerHex(digest))
	}
	if Algorithm(alg) == Poseidon2 {
		if err := checkPoseidon2Digest(raw); err != nil {
			return "", 0, fmt.Errorf("%w: %s: poseidon2 digest %v", ErrMalformed, quote(s), err)
		}
	}
	return Algorithm(alg), len(raw), nil
}

// ParseSHA256 reads a "sha256:<hex>" value (a chain hash, a Merkle root, a
// model hash) into its 32 digest bytes: Parse's rules, and an error
// wrapping ErrUnsupported for a well-formed hash of another algorithm.
func ParseSHA256(s string) ([32]byte, error) {
	var out [32]byte
	// The common case, decoded in place; anything else is Parse's.
	if len(s) == len(SHA256)+1+2*sha256.Size && s[:len(SHA256)+1] == string(SHA256)+":" &&
		decodeLowerHex(out[:], s[len(SHA256)+1:]) {
		return out, nil
	}
	h, err := Parse(s)
	if err != nil {
		return out, err
	}
	if h.Algorithm != SHA256 {
		return out, fmt.Errorf("%w: %s hashes cannot be used here", ErrUnsupported, h.Algorithm)
	}
	copy(out[:], h.Digest)
	return out, nil
}

// OfSHA256 is the Hash of a SHA-256 digest computed elsewhere (a chain
// value, a Merkle root): OfSHA256(d).String() is "sha256:<hex>".
func OfSHA256(digest [32]byte) Hash { return Hash{Algorithm: SHA256, Digest: digest[:]} }

// Short abbreviates a commitment string for a message: its algorithm and
// the first 12 digits of its digest, then "…" ("sha256:0123456789ab…");
// a string too short to abbreviate is returned as it is.
func Short(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 && len(s) > i+13 {
		return s[:i+13] + "…"
	}
	return s
}

// Validate reports whether s is a well-formed commitment string: Parse's
// error, allocating nothing for a well-formed s.
func Validate(s string) error {
	_, err := ParseAlgorithm(s)
	return err
}

// Equal reports whether a and b have the same algorithm and the same
// nonempty digest. The digests are compared in constant time; hashes with an
// empty digest (such as the zero Hash) never compare equal.
func Equal(a, b Hash) bool {
	if a.Algorithm != b.Algorithm || len(a.Digest) != len(b.Digest) || len(a.Digest) == 0 {
		return false
	}
	return subtle.ConstantTimeCompare(a.Digest, b.Digest) == 1
}

// Check verifies that data matches the expected commitment string,
// computing the algorithm the string names (poseidon2 commits to raw bytes,
// tag [Poseidon2TagBytes]). It returns an error wrapping [ErrMalformed] if
// expected does not parse, or [ErrMismatch] if the digest differs.
func Check(expected string, data []byte) error {
	want, err := Parse(expected)
	if err != nil {
		return err
	}
	got, err := SumAlgorithm(want.Algorithm, data)
	if err != nil {
		return err
	}
	return compare(want, got)
}

// CheckReader is like [Check] but streams the data from r in constant
// memory. The expected string is validated before anything is read.
func CheckReader(expected string, r io.Reader) error {
	want, err := Parse(expected)
	if err != nil {
		return err
	}
	got, _, err := SumAlgorithmReader(want.Algorithm, r)
	if err != nil {
		return err
	}
	return compare(want, got)
}

func compare(want, got Hash) error {
	if !Equal(want, got) {
		return fmt.Errorf("%w: expected %s, got %s", ErrMismatch, want, got)
	}
	return nil
}

// checkLowerHex returns an error describing the first character of s that is
// not a lowercase hex digit.
func checkLowerHex(s string) error {
	for i := 0; i < len(s); i++ {
		if !isLowerHex[s[i]] {
			c := s[i]
			if 'A' <= c && c <= 'F' {
				return fmt.Errorf("has uppercase character %q at position %d: hex must be lowercase", c, i)
			}
			return fmt.Errorf("has non-hex character %q at position %d", c, i)
		}
	}
	return nil
}

// decodeLowerHex decodes the lowercase hex digits s into dst (len(s) is
// 2*len(dst)) and reports whether every byte of s was one.
func decodeLowerHex(dst []byte, s string) bool {
	var bad byte
	for i := range dst {
		hi, lo := lowerHexValue[s[2*i]], lowerHexValue[s[2*i+1]]
		bad |= hi | lo
		dst[i] = hi<<4 | lo
	}
	return bad&0xf0 == 0
}

// lowerHexValue is the value of each byte 0-9 and a-f, 0xff for the others.
var lowerHexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	return t
}()

// isLowerHex marks the bytes 0-9 and a-f.
var isLowerHex = func() (t [256]bool) {
	for _, c := range "0123456789abcdef" {
		t[c] = true
	}
	return t
}()

// quote quotes s for an error message, truncating long input.
func quote(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
