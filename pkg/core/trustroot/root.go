// Package trustroot reads, checks, updates and writes svc trust roots: the
// versioned, signed JSON document (schema "svc.trust-root/v1") that tells
// a verifier which keys may sign what, and when.
//
// Every key is listed with one purpose (VPEC signing, profile signing,
// circuit signing, TSA root, log checkpoint, witness, root signing) and a
// validity window: valid from valid_from (inclusive) until valid_until
// (exclusive, optional), and refused from compromised_at (inclusive,
// optional) on. [Root.KeyFor] answers "may key K sign for purpose P at
// time T" with the key and its window, or with a distinct error for each
// way the answer is no.
//
// Roots are chained as TUF chains root metadata: version N+1 is signed by
// root_threshold root-signing keys of version N and of itself, and
// [VerifyUpdate] checks that before a verifier holding N moves to N+1.
// [Rotate] and [Compromise] produce the next version, unsigned; [Root.Sign]
// signs it.
//
// The existing PEM trust bundle (pkg/core/signing) is read by [FromBundle] as a
// root whose keys are valid forever for every purpose they had, and says
// so in every answer; [ConvertBundle] turns it into a version 1 trust root.
//
// The package is verification-side: no network, no cgo, and it builds for
// GOOS=js GOARCH=wasm. The format is specified in docs/KEYS.md.
package trustroot

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Schema is the value of a trust root's "schema" member.
const Schema = "svc.trust-root/v1"

// Purpose is what a key may sign.
type Purpose string

// The purposes of keys in a trust root.
const (
	// PurposeVPEC keys sign VPECs.
	PurposeVPEC Purpose = "vpec-signing"
	// PurposeProfile keys sign model profiles (the registry's key).
	PurposeProfile Purpose = "profile-signing"
	// PurposeCircuit keys sign circuit registry entries.
	PurposeCircuit Purpose = "circuit-signing"
	// PurposeTSARoot entries are certificates RFC 3161 tokens chain to.
	PurposeTSARoot Purpose = "tsa-root"
	// PurposeLog keys sign the transparency log's checkpoints (C2SP
	// signed notes).
	PurposeLog Purpose = "log-checkpoint"
	// PurposeWitness keys cosign checkpoints (C2SP tlog-cosignature).
	PurposeWitness Purpose = "witness"
	// PurposeRoot keys sign trust roots: the next version, and this one.
	PurposeRoot Purpose = "root-signing"
)

// Purposes returns every purpose, in the order docs/KEYS.md gives them (a
// new slice each call).
func Purposes() []Purpose { return slices.Clone(purposes) }

var purposes = []Purpose{PurposeVPEC, PurposeProfile, PurposeCircuit, PurposeTSARoot, PurposeLog, PurposeWitness, PurposeRoot}

func (p Purpose) valid() bool { return slices.Contains(purposes, p) }

// KeyIDLength is the number of hex characters of a key id.
const KeyIDLength = 16

// KeyID returns svc's key id of a public key: the first 16 lowercase hex
// characters of SHA-256 over its SubjectPublicKeyInfo DER. A TSA root's
// key id is that of its certificate's public key.
func KeyID(spkiDER []byte) string {
	sum := sha256.Sum256(spkiDER)
	return hex.EncodeToString(sum[:])[:KeyIDLength]
}

// Window is a key's validity window. A signature made at T is accepted iff
// From ≤ T, T < Until (when Until is set) and T < CompromisedAt (when
// CompromisedAt is set).
type Window struct {
	// From is valid_from. Zero only for keys of a legacy PEM bundle
	// (Forever).
	From time.Time
	// Until is valid_until; zero: no end.
	Until time.Time
	// CompromisedAt is compromised_at; zero: not compromised.
	CompromisedAt time.Time
	// Forever marks a key of a legacy PEM trust bundle: no window at all.
	Forever bool
}

// String describes the window, e.g. "valid from 2026-01-01T00:00:00Z until
// 2026-07-01T00:00:00Z" or "valid forever (legacy PEM trust bundle: no
// validity window)".
func (w Window) String() string {
	if w.Forever {
		return "valid forever (legacy PEM trust bundle: no validity window)"
	}
	s := "valid from " + FormatTime(w.From)
	if !w.Until.IsZero() {
		s += " until " + FormatTime(w.Until)
	} else {
		s += ", no end"
	}
	if !w.CompromisedAt.IsZero() {
		s += ", compromised at " + FormatTime(w.CompromisedAt)
	}
	return s
}

// Contains reports whether a signature made at t falls in the window.
func (w Window) Contains(t time.Time) bool { return w.check(t) == nil }

// check returns the sentinel for t outside the window, nil inside.
// Compromise is reported before the window's ends: it is what an auditor
// must act on.
func (w Window) check(t time.Time) error {
	if w.Forever {
		return nil
	}
	switch {
	case !w.CompromisedAt.IsZero() && !t.Before(w.CompromisedAt):
		return ErrCompromised
	case t.Before(w.From):
		return ErrNotYetValid
	case !w.Until.IsZero() && !t.Before(w.Until):
		return ErrExpired
	}
	return nil
}

// Key is one entry of a trust root: a key (or TSA root certificate) and
// the one purpose it is trusted for, in its window.
type Key struct {
	// KeyID is the key id (16 hex characters).
	KeyID string
	// Purpose is what the key may sign.
	Purpose Purpose
	// PublicKey is the Ed25519 public key (nil for a TSA root).
	PublicKey ed25519.PublicKey
	// Certificate is the TSA root certificate (PurposeTSARoot only).
	Certificate *x509.Certificate
	// NoteVerifier is the C2SP signed-note verifier key of a log or
	// witness key ("<name>+<hash>+<base64>").
	NoteVerifier string
	// Window is when the key may sign.
	Window Window
	// Comment is the operator's note (optional).
	Comment string
}

// SPKI returns the SubjectPublicKeyInfo DER of the key.
func (k *Key) SPKI() []byte {
	if k.Certificate != nil {
		return k.Certificate.RawSubjectPublicKeyInfo
	}
	der, err := x509.MarshalPKIXPublicKey(k.PublicKey)
	if err != nil {
		return nil
	}
	return der
}

func (k *Key) clone() *Key {
	c := *k
	c.PublicKey = slices.Clone(k.PublicKey)
	return &c
}

func (k *Key) name() string { return fmt.Sprintf("key %s (%s)", k.KeyID, k.Purpose) }

// Signature is one signature over a trust root's signed bytes.
type Signature struct {
	// KeyID names a root-signing key.
	KeyID string
	// Signature is the "Ed25519:" signature string.
	Signature string
}

// Source says where a Root came from.
type Source string

const (
	// SourceTrustRoot is a svc.trust-root/v1 document.
	SourceTrustRoot Source = "trust-root"
	// SourcePEMBundle is a legacy PEM trust bundle: every key valid
	// forever for every purpose it had.
	SourcePEMBundle Source = "pem-bundle"
)

// Root is a parsed trust root. A Root is immutable once parsed; the
// functions that change one (Rotate, Compromise, AddKey) return a copy.
type Root struct {
	// Version is the root's version, from 1, one more at every update.
	Version int64
	// IssuedAt is when the root was written.
	IssuedAt time.Time
	// Threshold is root_threshold: how many distinct root-signing keys
	// of this root must sign the next version (and this one).
	Threshold int
	// Keys are the entries, sorted by purpose (in Purposes() order), then
	// valid_from, then key id.
	Keys []*Key
	// Signatures are the signatures over the signed bytes, sorted by key
	// id.
	Signatures []Signature
	// Source is SourceTrustRoot or SourcePEMBundle.
	Source Source

	signed []byte // the signed bytes as parsed (nil once changed)
}

// Errors of KeyFor, each matchable with errors.Is and carried by a
// *KeyError that names the key, the purpose, the time and the window.
var (
	// ErrUnknownKey: no key of the root has that id.
	ErrUnknownKey = errors.New("key not in the trust root")
	// ErrWrongPurpose: the key is in the root, but not for that purpose.
	ErrWrongPurpose = errors.New("key not trusted for this purpose")
	// ErrNotYetValid: the signature time is before the key's valid_from.
	ErrNotYetValid = errors.New("signature made before the key's window starts")
	// ErrExpired: the signature time is at or after the key's valid_until.
	ErrExpired = errors.New("signature made after the key's window ended")
	// ErrCompromised: the signature time is at or after the key's
	// compromised_at.
	ErrCompromised = errors.New("signature made after the key was compromised")
)

// KeyError is the error of KeyFor.
type KeyError struct {
	KeyID   string
	Purpose Purpose
	// At is the signature time asked about.
	At time.Time
	// Window is the key's window for Purpose (zero for ErrUnknownKey and
	// ErrWrongPurpose).
	Window Window
	// Purposes are the purposes the key does have (ErrWrongPurpose).
	Purposes []Purpose
	// Err is one of the KeyFor sentinels.
	Err error
}

// Error names the key, the purpose and the window.
func (e *KeyError) Error() string {
	at := FormatTime(e.At)
	switch e.Err {
	case ErrUnknownKey:
		return fmt.Sprintf("key %s: %v", e.KeyID, e.Err)
	case ErrWrongPurpose:
		ps := make([]string, len(e.Purposes))
		for i, p := range e.Purposes {
			ps[i] = string(p)
		}
		return fmt.Sprintf("key %s: %v: it may sign %s, not %s", e.KeyID, e.Err, strings.Join(ps, ", "), e.Purpose)
	case ErrCompromised:
		return fmt.Sprintf("key %s (%s): %v: signed at %s, compromised at %s (%s)", e.KeyID, e.Purpose, e.Err, at, FormatTime(e.Window.CompromisedAt), e.Window)
	case ErrNotYetValid:
		return fmt.Sprintf("key %s (%s): %v: signed at %s, before %s (%s)", e.KeyID, e.Purpose, e.Err, at, FormatTime(e.Window.From), e.Window)
	case ErrExpired:
		return fmt.Sprintf("key %s (%s): %v: signed at %s, at or after its end %s (%s)", e.KeyID, e.Purpose, e.Err, at, FormatTime(e.Window.Until), e.Window)
	}
	return fmt.Sprintf("key %s (%s): %v", e.KeyID, e.Purpose, e.Err)
}

// Unwrap returns the sentinel.
func (e *KeyError) Unwrap() error { return e.Err }

// KeyFor returns the entry of keyID for purpose if a signature made at
// time at is within its window. Otherwise the *KeyError says why:
// ErrUnknownKey, ErrWrongPurpose, ErrCompromised, ErrNotYetValid or
// ErrExpired (in that order of precedence).
//
// For a VPEC, profile or circuit entry, at is the verified RFC 3161
// genTime of its signature; for a checkpoint, the checkpoint's time; for a
// TSA root, the token's genTime.
func (r *Root) KeyFor(purpose Purpose, keyID string, at time.Time) (*Key, error) {
	var has []Purpose
	for _, k := range r.Keys {
		if k.KeyID != keyID {
			continue
		}
		if k.Purpose != purpose {
			has = append(has, k.Purpose)
			continue
		}
		if err := k.Window.check(at); err != nil {
			return nil, &KeyError{KeyID: keyID, Purpose: purpose, At: at, Window: k.Window, Err: err}
		}
		return k, nil
	}
	if len(has) == 0 {
		return nil, &KeyError{KeyID: keyID, Purpose: purpose, At: at, Err: ErrUnknownKey}
	}
	return nil, &KeyError{KeyID: keyID, Purpose: purpose, At: at, Purposes: has, Err: ErrWrongPurpose}
}

// VerifySignature checks an "Ed25519:" signature string over msg by the
// key keyID, which must be trusted for purpose at time at (KeyFor), and
// returns its entry (whose Window a report names).
func (r *Root) VerifySignature(purpose Purpose, keyID string, at time.Time, msg []byte, sig string) (*Key, error) {
	k, err := r.KeyFor(purpose, keyID, at)
	if err != nil {
		return nil, err
	}
	if k.PublicKey == nil {
		return nil, fmt.Errorf("%s is a certificate, not a signing key", k.name())
	}
	if err := verifyEd25519(k.PublicKey, msg, sig); err != nil {
		return nil, fmt.Errorf("%s: %w", k.name(), err)
	}
	return k, nil
}

// TSARoots returns the certificates of every tsa-root entry, whatever its
// window: a verifier builds the chain with them, then checks the window of
// the root the chain ends at with KeyFor(PurposeTSARoot,
// CertificateKeyID(root), genTime).
func (r *Root) TSARoots() []*x509.Certificate {
	var out []*x509.Certificate
	for _, k := range r.Keys {
		if k.Purpose == PurposeTSARoot {
			out = append(out, k.Certificate)
		}
	}
	return out
}

// CertificateKeyID is the key id of a certificate's public key.
func CertificateKeyID(c *x509.Certificate) string { return KeyID(c.RawSubjectPublicKeyInfo) }

// KeyForNote finds the log-checkpoint or witness key whose note verifier
// has the given name and key hash (as a C2SP signature line names them)
// and checks its window at time at.
func (r *Root) KeyForNote(purpose Purpose, name string, hash uint32, at time.Time) (*Key, error) {
	for _, k := range r.Keys {
		if k.Purpose != purpose || k.NoteVerifier == "" {
			continue
		}
		nv, err := ParseNoteVerifier(k.NoteVerifier)
		if err != nil || nv.Name != name || nv.Hash != hash {
			continue
		}
		return r.KeyFor(purpose, k.KeyID, at)
	}
	return nil, &KeyError{KeyID: fmt.Sprintf("%s+%08x", name, hash), Purpose: purpose, At: at, Err: ErrUnknownKey}
}

// Legacy reports whether the root is a legacy PEM bundle read as valid
// forever.
func (r *Root) Legacy() bool { return r.Source == SourcePEMBundle }

// Key returns the entry of keyID for purpose, whatever its window, or nil.
func (r *Root) Key(purpose Purpose, keyID string) *Key {
	for _, k := range r.Keys {
		if k.KeyID == keyID && k.Purpose == purpose {
			return k
		}
	}
	return nil
}

// clone returns a deep copy without signatures, for a new version.
func (r *Root) clone() *Root {
	c := &Root{Version: r.Version, IssuedAt: r.IssuedAt, Threshold: r.Threshold, Source: r.Source}
	for _, k := range r.Keys {
		c.Keys = append(c.Keys, k.clone())
	}
	return c
}

// sortKeys puts the entries in their one order: purpose (Purposes() order),
// valid_from, key id.
func (r *Root) sortKeys() {
	slices.SortStableFunc(r.Keys, compareKeys)
}

func compareKeys(a, b *Key) int {
	if c := slices.Index(purposes, a.Purpose) - slices.Index(purposes, b.Purpose); c != 0 {
		return c
	}
	if c := a.Window.From.Compare(b.Window.From); c != 0 {
		return c
	}
	return strings.Compare(a.KeyID, b.KeyID)
}

// FormatTime writes t as a trust root does: RFC 3339 in UTC ending in Z,
// the fraction of a second with no trailing zeros and omitted when zero
// (Go's time.RFC3339Nano).
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
