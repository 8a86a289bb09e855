// Package disclosure builds and checks what a record of visibility
// transparent or selective discloses (docs/FORMATS.md, "Disclosures").
//
// Transparent: the raw input (and output) travel as standard base64 of the
// bytes; the commitment stays "sha256:" of the same bytes.
//
// Selective: the input is a JSON object; each top-level member becomes a
// salted disclosure [salt, field, value] in the style of SD-JWT (RFC 9901),
// its digest is "sha256:" + hex of SHA-256 over the RFC 8785 form of that
// array, and the input commitment is "sha256:" + hex of SHA-256 over the
// RFC 8785 form of the sorted array of every member's digest. A record
// carries the digests of all members and the disclosures of the declared
// ones only: a verifier recomputes each disclosed digest, finds it in the
// list, and recomputes the commitment, learning nothing about the other
// members but their number.
package disclosure

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
)

// Salt sizes in bytes: the client draws SaltBytes from crypto/rand; a
// verifier accepts MinSaltBytes to MaxSaltBytes.
const (
	SaltBytes    = 16
	MinSaltBytes = 16
	MaxSaltBytes = 64
)

// MaxInputDepth is the deepest nesting a selective input may have: its
// top-level object is depth 1. A disclosed value sits 4 levels deeper in
// a VPEC (records, record, disclosures, disclosure), whose limit is 64.
const MaxInputDepth = 60

// Sentinel errors; every error of this package is an *Error wrapping one.
var (
	// ErrMalformed: a disclosure, digest, salt or encoding that is not in
	// its one accepted form, or an input that cannot be disclosed.
	ErrMalformed = errors.New("malformed disclosure")
	// ErrMismatch: a disclosed value that does not match its commitment
	// (the value, field or salt was changed).
	ErrMismatch = errors.New("disclosure does not match its commitment")
	// ErrUndeclared: a disclosed field the record's manifest does not
	// declare.
	ErrUndeclared = errors.New("undeclared field disclosed")
	// ErrSaltReused: a salt (or digest) that appears twice.
	ErrSaltReused = errors.New("salt reused")
	// ErrNotAllowed: a disclosure in a record whose visibility does not
	// allow it (opaque, or the other mode's members).
	ErrNotAllowed = errors.New("disclosure not allowed by the record's visibility")
)

// Error names the member at fault (such as "disclosures[1].value") and
// wraps one of the sentinel errors.
type Error struct {
	Field string
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func errf(sentinel error, field, format string, a ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, a...), Err: sentinel}
}

// Disclosure is one disclosed member of a selective input: a salt, the
// member's name and its value (any JSON value).
type Disclosure struct {
	Salt  string `json:"salt"`
	Field string `json:"field"`
	Value any    `json:"value"`
}

// NewSalt returns SaltBytes fresh bytes from crypto/rand, base64url
// without padding (22 characters).
func NewSalt() (string, error) {
	var b [SaltBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("disclosure: salt: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// ParseSalt decodes a salt: base64url without padding, canonical (the
// unused bits of the last character are zero), MinSaltBytes to
// MaxSaltBytes bytes.
func ParseSalt(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || base64.RawURLEncoding.EncodeToString(b) != s {
		return nil, errf(ErrMalformed, "salt", "is not base64url without padding (RFC 4648 §5, canonical)")
	}
	if len(b) < MinSaltBytes || len(b) > MaxSaltBytes {
		return nil, errf(ErrMalformed, "salt", "is %d bytes, want %d to %d", len(b), MinSaltBytes, MaxSaltBytes)
	}
	return b, nil
}

// DigestOf returns the digest of the disclosure [salt, field, value]:
// "sha256:" + lowercase hex of SHA-256 over its RFC 8785 form, where
// valueJCS is the value's RFC 8785 form.
func DigestOf(salt, field string, valueJCS []byte) (string, error) {
	b := make([]byte, 0, len(salt)+len(field)+len(valueJCS)+8)
	b = append(b, '[')
	b, ok := canonical.AppendString(b, salt)
	if !ok {
		return "", errf(ErrMalformed, "salt", "is not valid UTF-8")
	}
	b = append(b, ',')
	if b, ok = canonical.AppendString(b, field); !ok {
		return "", errf(ErrMalformed, "field", "is not valid UTF-8")
	}
	b = append(append(append(b, ','), valueJCS...), ']')
	return commitment.String(b), nil
}

// Digest returns the disclosure's digest (DigestOf with the RFC 8785 form
// of its value).
func (d Disclosure) Digest() (string, error) {
	v, err := canonical.Marshal(d.Value)
	if err != nil {
		return "", errf(ErrMalformed, "value", "%v", err)
	}
	return DigestOf(d.Salt, d.Field, v)
}

// Commitment returns the input commitment of a selective record whose
// members have the given digests: "sha256:" + lowercase hex of SHA-256
// over the RFC 8785 form of the digests sorted in ascending byte order
// (a JSON array of strings, "[]" for an empty object).
func Commitment(digests []string) string {
	s := slices.Clone(digests)
	slices.Sort(s)
	b := []byte{'['}
	for i, d := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = canonical.AppendString(b, d)
	}
	b = append(b, ']')
	return commitment.String(b)
}

// EncodeBytes is the encoding of a transparent record's disclosed input
// and output: RFC 4648 §4 standard base64 with padding.
func EncodeBytes(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// DecodeBytes reads EncodeBytes' form strictly: standard alphabet,
// padding, no line breaks or spaces, canonical unused bits.
func DecodeBytes(s string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(b) != s {
		return nil, errf(ErrMalformed, "", "is not standard base64 with padding (RFC 4648 §4, canonical, no line breaks)")
	}
	return b, nil
}

// Split is the result of splitting a selective input.
type Split struct {
	// All holds one disclosure per member of the input, in input order:
	// the caller may keep them to open more members later (the salts are
	// secret until disclosed).
	All []Disclosure
	// Digests are every member's digest, sorted ascending.
	Digests []string
	// Disclosed are the disclosures of the declared members present in
	// the input, in the order of the declaration.
	Disclosed []Disclosure
	// Commitment is Commitment(Digests).
	Commitment string
}

// SplitInput splits a selective input: input must be an I-JSON object
// (RFC 7493: UTF-8, no duplicate member names, finite numbers) at most
// MaxInputDepth deep, whose numbers RFC 8785 writes without changing
// their value (a number such as 12345678901234567890, which no double
// holds, is refused: send it as a string). Each member gets a fresh salt
// from crypto/rand. declared names the members that may be disclosed; a
// declared member absent from the input is not disclosed.
func SplitInput(input []byte, declared []string) (*Split, error) {
	return splitInput(input, declared, NewSalt)
}

func splitInput(input []byte, declared []string, newSalt func() (string, error)) (*Split, error) {
	tree, err := canonical.ParseDepth(input, MaxInputDepth)
	if err != nil {
		return nil, &Error{Field: "input", Msg: "a selective input must be a JSON object: " + err.Error(), Err: errors.Join(ErrMalformed, err)}
	}
	if tree.Kind() != canonical.KindObject {
		return nil, errf(ErrMalformed, "input", "a selective input must be a JSON object, not a JSON %s", tree.Kind())
	}
	s := &Split{}
	for name, v := range tree.Members() {
		if n := lossyNumber(v); n != "" {
			return nil, errf(ErrMalformed, "input", "member %.80q: the number %.40s has no exact RFC 8785 form (it is not a double): send it as a string", name, n)
		}
		salt, err := newSalt()
		if err != nil {
			return nil, err
		}
		jcs := v.Canonical()
		dg, err := DigestOf(salt, name, jcs)
		if err != nil {
			return nil, err
		}
		d := Disclosure{Salt: salt, Field: name, Value: rawJSON(jcs)}
		s.All = append(s.All, d)
		s.Digests = append(s.Digests, dg)
	}
	if len(s.All) > MaxFields {
		return nil, errf(ErrMalformed, "input", "has %d members, more than %d", len(s.All), MaxFields)
	}
	size := 1
	for _, f := range declared {
		for _, d := range s.All {
			if d.Field == f {
				s.Disclosed = append(s.Disclosed, d)
				size += entrySize(d.Salt, d.Field, d.Value.(rawJSON))
			}
		}
	}
	if size > MaxDisclosureBytes {
		return nil, errf(ErrMalformed, "input", "the declared members take %d bytes disclosed (RFC 8785), more than %d", size, MaxDisclosureBytes)
	}
	slices.Sort(s.Digests)
	s.Commitment = Commitment(s.Digests)
	return s, nil
}

// entrySize is the length of one disclosure in the RFC 8785 form of a
// record's disclosures array, {"field":F,"salt":S,"value":V}, with its
// separator (the array's brackets, less one separator, are 1 byte).
func entrySize(salt, field string, valueJCS []byte) int {
	f, _ := canonical.AppendString(nil, field)
	sl, _ := canonical.AppendString(nil, salt)
	return len(`{"field":,"salt":,"value":}`) + len(f) + len(sl) + len(valueJCS) + 1
}

// rawJSON is a value's RFC 8785 bytes, written as they are.
type rawJSON []byte

// MarshalJSON returns the bytes.
func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// lossyNumber returns the text of the first number in v whose RFC 8785
// form denotes another value, or "".
func lossyNumber(v *canonical.Value) string {
	switch v.Kind() {
	case canonical.KindNumber:
		text, _ := v.Number()
		raw := string(v.Raw())
		if raw == text {
			return ""
		}
		if i := strings.IndexAny(raw, "eE"); i >= 0 {
			// No double has a decimal exponent beyond ±400 that RFC 8785
			// writes the same: refuse without building 10^exp.
			if e, err := strconv.Atoi(raw[i+1:]); err != nil || e > 400 || e < -400 {
				return raw
			}
		}
		a, ok1 := new(big.Rat).SetString(raw)
		b, ok2 := new(big.Rat).SetString(text)
		if !ok1 || !ok2 || a.Cmp(b) != 0 {
			return raw
		}
	case canonical.KindArray:
		for _, e := range v.Elements() {
			if n := lossyNumber(e); n != "" {
				return n
			}
		}
	case canonical.KindObject:
		for _, m := range v.Members() {
			if n := lossyNumber(m); n != "" {
				return n
			}
		}
	}
	return ""
}

// Limits of what one record discloses (docs/API.md, "Limits"): the client
// refuses to build more, the service refuses to take more, the verifier
// fails a record with more.
const (
	// MaxDisclosedBytes bounds a transparent record's raw input and raw
	// output, each (before base64).
	MaxDisclosedBytes = 64 << 10
	// MaxFields bounds the members of a selective input (field_digests).
	MaxFields = 256
	// MaxDisclosures bounds the disclosures of a record, and the fields a
	// manifest stage declares.
	MaxDisclosures = 64
	// MaxDisclosureBytes bounds the RFC 8785 form of a record's
	// disclosures array.
	MaxDisclosureBytes = 64 << 10
	// MaxFieldBytes bounds a declared field name.
	MaxFieldBytes = 128
)

// CheckBytes checks a transparent record's disclosed bytes (encoded with
// EncodeBytes; "" stands for empty bytes, as the member is then omitted)
// against their commitment, "sha256:" of the raw bytes. field names the
// member in errors.
func CheckBytes(field, encoded, commitmentHash string) error {
	b, err := DecodeBytes(encoded)
	if err != nil {
		return errf(ErrMalformed, field, "is not standard base64 with padding (RFC 4648 §4, canonical, no line breaks)")
	}
	if len(b) > MaxDisclosedBytes {
		return errf(ErrMalformed, field, "discloses %d bytes, more than %d", len(b), MaxDisclosedBytes)
	}
	if got := commitment.String(b); got != commitmentHash {
		if encoded == "" {
			return errf(ErrMismatch, field, "is absent, which discloses the empty byte string (%s), but the record commits to %s: a transparent record carries its bytes in this member", short(got), short(commitmentHash))
		}
		return errf(ErrMismatch, field, "the disclosed bytes hash to %s, not to the record's commitment %s", short(got), short(commitmentHash))
	}
	return nil
}

// CheckSelective checks a selective record: digests are "sha256:<64
// lowercase hex>" strings in strictly ascending order (a digest listed
// twice is a reused salt), at most MaxFields; commitmentHash is
// Commitment(digests); each disclosure has a valid salt (distinct within
// the record), a field declared (declared) and not disclosed twice, and a
// digest found in digests. Errors name the member at fault and match
// ErrMalformed, ErrMismatch, ErrUndeclared or ErrSaltReused.
func CheckSelective(commitmentHash string, digests []string, ds []Disclosure, declared []string) error {
	if len(digests) > MaxFields {
		return errf(ErrMalformed, "field_digests", "lists %d digests, more than %d", len(digests), MaxFields)
	}
	if len(ds) > MaxDisclosures {
		return errf(ErrMalformed, "disclosures", "holds %d disclosures, more than %d", len(ds), MaxDisclosures)
	}
	for i, d := range digests {
		f := fmt.Sprintf("field_digests[%d]", i)
		if !validDigest(d) {
			return errf(ErrMalformed, f, "%.80q is not sha256:<64 lowercase hex>", d)
		}
		if i > 0 && d == digests[i-1] {
			// A record lists each member's digest once: a repeated one is
			// a malformed list (SALT REUSED is one salt or digest in two
			// disclosures of other fields, or in two records).
			return errf(ErrMalformed, f, "digest %s is listed twice: field_digests holds each member's digest once", short(d))
		}
		if i > 0 && d < digests[i-1] {
			return errf(ErrMalformed, f, "field_digests must be sorted in ascending byte order")
		}
	}
	if got := Commitment(digests); got != commitmentHash {
		return errf(ErrMismatch, "field_digests", "the digests commit to %s, not to the record's commitment %s", short(got), short(commitmentHash))
	}
	salts := make(map[string]int, len(ds))
	fields := make(map[string]bool, len(ds))
	size := 1 // the RFC 8785 form of the disclosures array, as it grows
	for i, d := range ds {
		f := fmt.Sprintf("disclosures[%d]", i)
		if _, err := ParseSalt(d.Salt); err != nil {
			var e *Error
			errors.As(err, &e)
			return errf(ErrMalformed, f+".salt", "%s", e.Msg)
		}
		// A field disclosed twice is malformed whatever its salts (the
		// same disclosure repeated, or two digests under one name); a
		// salt shared by disclosures of two fields is reused.
		if fields[d.Field] {
			return errf(ErrMalformed, f+".field", "%.80q is disclosed twice", d.Field)
		}
		fields[d.Field] = true
		if j, ok := salts[d.Salt]; ok {
			return errf(ErrSaltReused, f+".salt", "the salt of disclosures[%d] is used again", j)
		}
		salts[d.Salt] = i
		if !slices.Contains(declared, d.Field) {
			return errf(ErrUndeclared, f+".field", "%.80q is not declared by the manifest stage (declared: %.200q)", d.Field, declared)
		}
		v, err := canonical.Marshal(d.Value)
		if err != nil {
			return errf(ErrMalformed, f+".value", "%v", err)
		}
		if size += entrySize(d.Salt, d.Field, v); size > MaxDisclosureBytes {
			return errf(ErrMalformed, "disclosures", "take more than %d bytes in RFC 8785 form", MaxDisclosureBytes)
		}
		dg, err := DigestOf(d.Salt, d.Field, v)
		if err != nil {
			var e *Error
			errors.As(err, &e)
			return errf(ErrMalformed, f+"."+e.Field, "%s", e.Msg)
		}
		if _, found := slices.BinarySearch(digests, dg); !found {
			return errf(ErrMismatch, f, "field %.80q: the disclosure's digest %s is not among field_digests (value, field or salt changed)", d.Field, short(dg))
		}
	}
	return nil
}

func validDigest(s string) bool {
	if len(s) != 71 || s[:7] != "sha256:" {
		return false
	}
	for i := 7; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19] + "…"
	}
	return h
}
