package trustroot

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/signing"
)

// MaxSize is the largest trust root Parse reads (8 MiB).
const MaxSize = 8 << 20

// Errors of Parse. Every one is carried by a *FormatError naming the
// field, and matches ErrMalformed as well as its own class.
var (
	// ErrMalformed matches every error of Parse.
	ErrMalformed = errors.New("malformed trust root")
	// ErrNotJSON: not a single I-JSON object (RFC 7493), or too large.
	ErrNotJSON = errors.New("not an I-JSON object")
	// ErrSchema: the schema member is not svc.trust-root/v1.
	ErrSchema = errors.New("unsupported trust root schema")
	// ErrUnknownMember: a member this version does not define.
	ErrUnknownMember = errors.New("unknown member")
	// ErrDuplicateMember: an object with two members of the same name.
	ErrDuplicateMember = errors.New("duplicate member")
	// ErrMissingMember: a required member is absent.
	ErrMissingMember = errors.New("missing member")
	// ErrBadTime: a time not in the one accepted form, or a window whose
	// end is not after its start.
	ErrBadTime = errors.New("bad time")
	// ErrBadValue: a member of the wrong type or outside its values.
	ErrBadValue = errors.New("bad value")
	// ErrKeyIDMismatch: a key_id that is not the id of its key.
	ErrKeyIDMismatch = errors.New("key_id does not match the key")
	// ErrDuplicateKey: the same key id listed twice for one purpose.
	ErrDuplicateKey = errors.New("key listed twice for one purpose")
	// ErrPurposeConflict: a root-signing key also listed for another
	// purpose (root keys sign roots only).
	ErrPurposeConflict = errors.New("root-signing key has another purpose")
	// ErrBadSignature: a signature that does not verify, or not by a
	// root-signing key of the root.
	ErrBadSignature = errors.New("bad trust root signature")
)

// FormatError is an error of Parse: which field, what is wrong.
type FormatError struct {
	// Field is the path of the member, e.g. "keys[2].valid_until"; empty
	// for the document as a whole.
	Field string
	// Reason says what is wrong and how to write it.
	Reason string
	// Err is the class: one of the Parse sentinels.
	Err error
}

// Error returns "trust root: FIELD: REASON".
func (e *FormatError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("trust root: %v: %s", e.Err, e.Reason)
	}
	return fmt.Sprintf("trust root: %s: %v: %s", e.Field, e.Err, e.Reason)
}

// Unwrap returns ErrMalformed and the class.
func (e *FormatError) Unwrap() []error { return []error{ErrMalformed, e.Err} }

func ferr(field string, class error, format string, args ...any) error {
	return &FormatError{Field: field, Err: class, Reason: fmt.Sprintf(format, args...)}
}

var (
	keyIDRE = regexp.MustCompile(`^[0-9a-f]{16}$`)
	uintRE  = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
)

const maxSafeInt = 1<<53 - 1

// Parse reads a trust root strictly: I-JSON, no unknown, duplicate or
// missing members, every value in its one accepted form (docs/KEYS.md),
// key ids matching their keys, entries in their one order, and every
// signature verifying over the root's signed bytes by one of its
// root-signing keys. It does not check the root_threshold of signatures:
// VerifyUpdate and CheckSelfSigned do.
func Parse(data []byte) (*Root, error) {
	if len(data) > MaxSize {
		return nil, ferr("", ErrNotJSON, "%d bytes, larger than %d", len(data), MaxSize)
	}
	tree, err := canonical.Parse(data)
	if err != nil {
		if errors.Is(err, canonical.ErrDuplicateKey) {
			if path := duplicatePath(data); path != "" {
				return nil, ferr(path, ErrDuplicateMember, "appears twice in its object")
			}
		}
		return nil, ferr("", ErrNotJSON, "%v", err)
	}
	if tree.Kind() != canonical.KindObject {
		return nil, ferr("", ErrNotJSON, "the document is a JSON %s, want an object", tree.Kind())
	}
	r := &Root{Source: SourceTrustRoot}
	m, err := members("", tree, []string{"schema", "version", "issued_at", "root_threshold", "keys"}, []string{"signatures"})
	if err != nil {
		return nil, err
	}
	schema, err := str("schema", m["schema"])
	if err != nil {
		return nil, err
	}
	if schema != Schema {
		return nil, ferr("schema", ErrSchema, "%q; this verifier reads %s", schema, Schema)
	}
	if r.Version, err = integer("version", m["version"], 1); err != nil {
		return nil, err
	}
	if r.IssuedAt, err = timeMember("issued_at", m["issued_at"]); err != nil {
		return nil, err
	}
	th, err := integer("root_threshold", m["root_threshold"], 1)
	if err != nil {
		return nil, err
	}
	r.Threshold = int(th)
	keys := m["keys"]
	if keys.Kind() != canonical.KindArray || keys.Len() == 0 {
		return nil, ferr("keys", ErrBadValue, "want a non-empty array of key entries")
	}
	for i, kv := range keys.Elements() {
		k, err := parseKey(fmt.Sprintf("keys[%d]", i), kv)
		if err != nil {
			return nil, err
		}
		r.Keys = append(r.Keys, k)
	}
	if err := r.checkKeys(); err != nil {
		return nil, err
	}
	r.signed = tree.Canonical("signatures")
	if sv, ok := m["signatures"]; ok {
		if sv.Kind() != canonical.KindArray || sv.Len() == 0 {
			return nil, ferr("signatures", ErrBadValue, "want a non-empty array (omit the member when unsigned)")
		}
		for i, e := range sv.Elements() {
			f := fmt.Sprintf("signatures[%d]", i)
			sm, err := members(f, e, []string{"key_id", "signature"}, nil)
			if err != nil {
				return nil, err
			}
			var s Signature
			if s.KeyID, err = str(f+".key_id", sm["key_id"]); err != nil {
				return nil, err
			}
			if s.Signature, err = str(f+".signature", sm["signature"]); err != nil {
				return nil, err
			}
			if n := len(r.Signatures); n > 0 && r.Signatures[n-1].KeyID >= s.KeyID {
				return nil, ferr(f+".key_id", ErrBadValue, "signatures must be sorted by key_id, each key once")
			}
			k := r.Key(PurposeRoot, s.KeyID)
			if k == nil {
				return nil, ferr(f+".key_id", ErrBadSignature, "%s is not a root-signing key of this root", s.KeyID)
			}
			if err := verifyEd25519(k.PublicKey, r.signed, s.Signature); err != nil {
				return nil, ferr(f+".signature", ErrBadSignature, "by key %s: %v", s.KeyID, err)
			}
			r.Signatures = append(r.Signatures, s)
		}
	}
	return r, nil
}

// checkKeys applies the rules across entries: order, uniqueness, purpose
// separation of root keys, the threshold.
func (r *Root) checkKeys() error {
	roots := 0
	for i, k := range r.Keys {
		f := fmt.Sprintf("keys[%d]", i)
		if i > 0 && compareKeys(r.Keys[i-1], k) >= 0 {
			if r.Keys[i-1].KeyID == k.KeyID && r.Keys[i-1].Purpose == k.Purpose {
				return ferr(f, ErrDuplicateKey, "key %s is listed twice for %s", k.KeyID, k.Purpose)
			}
			return ferr(f, ErrBadValue, "entries must be sorted by purpose (in the order %v), then valid_from, then key_id", purposes)
		}
		for _, o := range r.Keys[:i] {
			if o.KeyID != k.KeyID {
				continue
			}
			if o.Purpose == k.Purpose {
				return ferr(f, ErrDuplicateKey, "key %s is listed twice for %s", k.KeyID, k.Purpose)
			}
			if o.Purpose == PurposeRoot || k.Purpose == PurposeRoot {
				return ferr(f, ErrPurposeConflict, "key %s is listed for %s and %s; a root-signing key signs trust roots only", k.KeyID, o.Purpose, k.Purpose)
			}
		}
		if k.Purpose == PurposeRoot {
			roots++
		}
	}
	switch {
	case roots == 0 && r.Threshold != 1:
		return ferr("root_threshold", ErrBadValue, "%d, but the root has no root-signing keys (write 1)", r.Threshold)
	case roots > 0 && r.Threshold > roots:
		return ferr("root_threshold", ErrBadValue, "%d, more than the %d root-signing keys", r.Threshold, roots)
	}
	return nil
}

func parseKey(f string, v *canonical.Value) (*Key, error) {
	m, err := members(f, v, []string{"key_id", "purpose", "valid_from"},
		[]string{"public_key", "certificate", "note_verifier", "valid_until", "compromised_at", "comment"})
	if err != nil {
		return nil, err
	}
	k := &Key{}
	if k.KeyID, err = str(f+".key_id", m["key_id"]); err != nil {
		return nil, err
	}
	if !keyIDRE.MatchString(k.KeyID) {
		return nil, ferr(f+".key_id", ErrBadValue, "%q is not 16 lowercase hex digits", k.KeyID)
	}
	p, err := str(f+".purpose", m["purpose"])
	if err != nil {
		return nil, err
	}
	k.Purpose = Purpose(p)
	if !k.Purpose.valid() {
		return nil, ferr(f+".purpose", ErrBadValue, "%q is not one of %v", p, purposes)
	}
	// Which key member each purpose has.
	want, other := "public_key", "certificate"
	if k.Purpose == PurposeTSARoot {
		want, other = other, want
	}
	if _, ok := m[other]; ok {
		return nil, ferr(f+"."+other, ErrUnknownMember, "a %s entry carries its key in %s", k.Purpose, want)
	}
	raw, ok := m[want]
	if !ok {
		return nil, ferr(f+"."+want, ErrMissingMember, "a %s entry carries its key in %s", k.Purpose, want)
	}
	der, err := base64Member(f+"."+want, raw)
	if err != nil {
		return nil, err
	}
	var spki []byte
	if k.Purpose == PurposeTSARoot {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, ferr(f+".certificate", ErrBadValue, "not an X.509 certificate: %v", err)
		}
		k.Certificate, spki = c, c.RawSubjectPublicKeyInfo
	} else {
		pub, err := signing.ParsePublicKeyDER(der)
		if err != nil {
			return nil, ferr(f+".public_key", ErrBadValue, "not an Ed25519 SubjectPublicKeyInfo: %v", err)
		}
		if re, _ := x509.MarshalPKIXPublicKey(pub); !bytes.Equal(re, der) {
			return nil, ferr(f+".public_key", ErrBadValue, "not the DER encoding of its key")
		}
		k.PublicKey, spki = pub, der
	}
	if id := KeyID(spki); id != k.KeyID {
		return nil, ferr(f+".key_id", ErrKeyIDMismatch, "%s, but the key's id is %s", k.KeyID, id)
	}
	nv, hasNV := m["note_verifier"]
	needNV := k.Purpose == PurposeLog || k.Purpose == PurposeWitness
	switch {
	case needNV && !hasNV:
		return nil, ferr(f+".note_verifier", ErrMissingMember, "a %s key carries its C2SP note verifier key", k.Purpose)
	case !needNV && hasNV:
		return nil, ferr(f+".note_verifier", ErrUnknownMember, "only log-checkpoint and witness keys have one")
	case needNV:
		if k.NoteVerifier, err = str(f+".note_verifier", nv); err != nil {
			return nil, err
		}
		parsed, err := ParseNoteVerifier(k.NoteVerifier)
		if err != nil {
			return nil, ferr(f+".note_verifier", ErrBadValue, "%v", err)
		}
		alg := byte(NoteAlgEd25519)
		if k.Purpose == PurposeWitness {
			alg = NoteAlgCosignatureV1
		}
		if parsed.Algorithm != alg {
			return nil, ferr(f+".note_verifier", ErrBadValue, "a %s key's verifier has algorithm byte 0x%02x, this one 0x%02x", k.Purpose, alg, parsed.Algorithm)
		}
		if !parsed.PublicKey.Equal(k.PublicKey) {
			return nil, ferr(f+".note_verifier", ErrKeyIDMismatch, "the verifier's key is not public_key")
		}
	}
	if k.Window.From, err = timeMember(f+".valid_from", m["valid_from"]); err != nil {
		return nil, err
	}
	if v, ok := m["valid_until"]; ok {
		if k.Window.Until, err = timeMember(f+".valid_until", v); err != nil {
			return nil, err
		}
		if !k.Window.Until.After(k.Window.From) {
			return nil, ferr(f+".valid_until", ErrBadTime, "%s is not after valid_from %s", FormatTime(k.Window.Until), FormatTime(k.Window.From))
		}
	}
	if v, ok := m["compromised_at"]; ok {
		if k.Window.CompromisedAt, err = timeMember(f+".compromised_at", v); err != nil {
			return nil, err
		}
	}
	if v, ok := m["comment"]; ok {
		if k.Comment, err = str(f+".comment", v); err != nil {
			return nil, err
		}
		if k.Comment == "" {
			return nil, ferr(f+".comment", ErrBadValue, "empty; omit the member instead")
		}
	}
	return k, nil
}

// members returns the members of object v by name, refusing members not in
// required or optional and requiring every one of required.
func members(f string, v *canonical.Value, required, optional []string) (map[string]*canonical.Value, error) {
	if v.Kind() != canonical.KindObject {
		return nil, ferr(f, ErrBadValue, "is a JSON %s, want an object", v.Kind())
	}
	out := map[string]*canonical.Value{}
	for name, mv := range v.Members() {
		field := name
		if f != "" {
			field = f + "." + name
		}
		if !slices.Contains(required, name) && !slices.Contains(optional, name) {
			return nil, ferr(field, ErrUnknownMember, "not a member of %s", describeObject(f))
		}
		if mv.Kind() == canonical.KindNull {
			return nil, ferr(field, ErrBadValue, "is null; omit an optional member instead")
		}
		c := *mv
		out[name] = &c
	}
	for _, name := range required {
		if _, ok := out[name]; !ok {
			field := name
			if f != "" {
				field = f + "." + name
			}
			return nil, ferr(field, ErrMissingMember, "required")
		}
	}
	return out, nil
}

func describeObject(f string) string {
	if f == "" {
		return "a trust root (" + Schema + ")"
	}
	return "this object"
}

func str(f string, v *canonical.Value) (string, error) {
	if v.Kind() != canonical.KindString {
		return "", ferr(f, ErrBadValue, "is a JSON %s, want a string", v.Kind())
	}
	return v.Str(), nil
}

func integer(f string, v *canonical.Value, min int64) (int64, error) {
	if v.Kind() != canonical.KindNumber || !uintRE.Match(v.Raw()) {
		return 0, ferr(f, ErrBadValue, "want an integer written as plain digits (no sign, fraction or exponent)")
	}
	n, err := strconv.ParseInt(string(v.Raw()), 10, 64)
	if err != nil || n > maxSafeInt {
		return 0, ferr(f, ErrBadValue, "%s is larger than 2^53-1", v.Raw())
	}
	if n < min {
		return 0, ferr(f, ErrBadValue, "%d, want at least %d", n, min)
	}
	return n, nil
}

func base64Member(f string, v *canonical.Value) ([]byte, error) {
	s, err := str(f, v)
	if err != nil {
		return nil, err
	}
	b, err := signing.DecodeBase64(s)
	if err != nil {
		return nil, ferr(f, ErrBadValue, "%v", err)
	}
	if len(b) == 0 {
		return nil, ferr(f, ErrBadValue, "empty")
	}
	return b, nil
}

// ParseTime reads a time in the one form a trust root accepts (see
// FormatTime). Errors match ErrBadTime.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || FormatTime(t) != s {
		return time.Time{}, fmt.Errorf("%w: %q is not an RFC 3339 UTC time in the form 2026-11-28T12:00:00Z or 2026-11-28T12:00:00.25Z (Z, no offset, no trailing zeros in the fraction)", ErrBadTime, s)
	}
	return t, nil
}

func timeMember(f string, v *canonical.Value) (time.Time, error) {
	s, err := str(f, v)
	if err != nil {
		return time.Time{}, err
	}
	t, err := ParseTime(s)
	if err != nil {
		return time.Time{}, ferr(f, ErrBadTime, "%q is not an RFC 3339 UTC time in the form 2026-11-28T12:00:00Z or 2026-11-28T12:00:00.25Z (Z, no offset, no trailing zeros in the fraction)", s)
	}
	return t, nil
}

// duplicatePath finds the path of the first duplicate member name in
// data, which canonical.Parse refused without naming where.
func duplicatePath(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(path string) (string, error)
	walk = func(path string) (string, error) {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				nt, err := dec.Token()
				if err != nil {
					return "", err
				}
				name, _ := nt.(string)
				p := name
				if path != "" {
					p = path + "." + name
				}
				if seen[name] {
					return p, nil
				}
				seen[name] = true
				if d, err := walk(p); d != "" || err != nil {
					return d, err
				}
			}
			_, err = dec.Token()
			return "", err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if d, err := walk(fmt.Sprintf("%s[%d]", path, i)); d != "" || err != nil {
					return d, err
				}
			}
			_, err = dec.Token()
			return "", err
		}
		return "", nil
	}
	d, err := walk("")
	if err != nil && err != io.EOF {
		return d
	}
	return d
}
