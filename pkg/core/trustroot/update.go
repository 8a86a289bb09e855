package trustroot

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
)

// NewKey describes a key to add to a root.
type NewKey struct {
	// Purpose is what the key may sign.
	Purpose Purpose
	// PublicKey is the Ed25519 public key (every purpose but tsa-root).
	PublicKey ed25519.PublicKey
	// Certificate is the TSA root certificate (tsa-root only).
	Certificate *x509.Certificate
	// NoteName is the name of a log-checkpoint key (the log's origin) or
	// a witness key; the note verifier string is derived from it.
	NoteName string
	// From is valid_from; Until, if set, valid_until.
	From, Until time.Time
	// Comment is an optional note for operators.
	Comment string
}

func (nk NewKey) entry() (*Key, error) {
	k := &Key{Purpose: nk.Purpose, Window: Window{From: nk.From, Until: nk.Until}, Comment: nk.Comment}
	switch {
	case nk.Purpose == PurposeTSARoot:
		if nk.Certificate == nil {
			return nil, fmt.Errorf("trust root: a %s entry needs a certificate", nk.Purpose)
		}
		k.Certificate = nk.Certificate
		k.KeyID = CertificateKeyID(nk.Certificate)
	default:
		if len(nk.PublicKey) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("trust root: a %s entry needs an Ed25519 public key", nk.Purpose)
		}
		k.PublicKey = slices.Clone(nk.PublicKey)
		k.KeyID = signing.KeyID(nk.PublicKey)
	}
	switch nk.Purpose {
	case PurposeLog:
		k.NoteVerifier = FormatNoteVerifier(nk.NoteName, NoteAlgEd25519, nk.PublicKey)
	case PurposeWitness:
		k.NoteVerifier = FormatNoteVerifier(nk.NoteName, NoteAlgCosignatureV1, nk.PublicKey)
	}
	return k, nil
}

// Build returns a new version 1 root, unsigned, with the given keys and
// root_threshold. Sign it with its root-signing keys before publishing.
func Build(issuedAt time.Time, threshold int, keys ...NewKey) (*Root, error) {
	r := &Root{Version: 1, IssuedAt: issuedAt, Threshold: threshold, Source: SourceTrustRoot}
	for _, nk := range keys {
		k, err := nk.entry()
		if err != nil {
			return nil, err
		}
		r.Keys = append(r.Keys, k)
	}
	r.sortKeys()
	if err := r.Check(); err != nil {
		return nil, err
	}
	return r, nil
}

// Next returns a copy of r as the next version: Version+1, issued at
// issuedAt, no signatures. Change it, Check it, then Sign it with the
// root-signing keys of r (and of itself).
func (r *Root) Next(issuedAt time.Time) (*Root, error) {
	if r.Legacy() {
		return nil, ErrLegacy
	}
	n := r.clone()
	n.Version = r.Version + 1
	n.IssuedAt = issuedAt
	return n, nil
}

// AddKeys returns the next version of r with keys added.
func AddKeys(r *Root, issuedAt time.Time, keys ...NewKey) (*Root, error) {
	n, err := r.Next(issuedAt)
	if err != nil {
		return nil, err
	}
	for _, nk := range keys {
		k, err := nk.entry()
		if err != nil {
			return nil, err
		}
		n.Keys = append(n.Keys, k)
	}
	n.sortKeys()
	if err := n.Check(); err != nil {
		return nil, err
	}
	return n, nil
}

// ErrRotate reports a rotation or compromise that cannot be applied.
var ErrRotate = errors.New("cannot change the trust root")

// Rotate returns the next version of r in which nk becomes valid for its
// purpose from nk.From (the rotation time T) and the key oldKeyID's
// window for that purpose ends at T. Signatures made before T keep
// verifying with the old key, those from T on need the new one; T must lie
// inside the old key's window. r itself is unchanged.
func Rotate(r *Root, oldKeyID string, nk NewKey, issuedAt time.Time) (*Root, error) {
	n, err := r.Next(issuedAt)
	if err != nil {
		return nil, err
	}
	at := nk.From
	old := n.Key(nk.Purpose, oldKeyID)
	switch {
	case old == nil:
		return nil, fmt.Errorf("%w: no key %s for %s to rotate", ErrRotate, oldKeyID, nk.Purpose)
	case !at.After(old.Window.From):
		return nil, fmt.Errorf("%w: rotation time %s is not after key %s's valid_from %s", ErrRotate, FormatTime(at), oldKeyID, FormatTime(old.Window.From))
	case !old.Window.Until.IsZero() && !at.Before(old.Window.Until):
		return nil, fmt.Errorf("%w: key %s (%s) already ended at %s, before the rotation time %s", ErrRotate, oldKeyID, nk.Purpose, FormatTime(old.Window.Until), FormatTime(at))
	case !old.Window.CompromisedAt.IsZero():
		return nil, fmt.Errorf("%w: key %s is marked compromised; add the new key with AddKeys", ErrRotate, oldKeyID)
	}
	k, err := nk.entry()
	if err != nil {
		return nil, err
	}
	if n.Key(nk.Purpose, k.KeyID) != nil {
		return nil, fmt.Errorf("%w: key %s is already in the root for %s", ErrRotate, k.KeyID, nk.Purpose)
	}
	old.Window.Until = at
	n.Keys = append(n.Keys, k)
	n.sortKeys()
	if err := n.Check(); err != nil {
		return nil, err
	}
	return n, nil
}

// Compromise returns the next version of r in which key keyID is
// compromised from at: for every purpose it has, signatures made at or
// after at are refused. A compromise already recorded earlier is kept.
func Compromise(r *Root, keyID string, at, issuedAt time.Time) (*Root, error) {
	n, err := r.Next(issuedAt)
	if err != nil {
		return nil, err
	}
	found := false
	for _, k := range n.Keys {
		if k.KeyID != keyID {
			continue
		}
		found = true
		if k.Window.CompromisedAt.IsZero() || at.Before(k.Window.CompromisedAt) {
			k.Window.CompromisedAt = at
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: no key %s in the root", ErrRotate, keyID)
	}
	if err := n.Check(); err != nil {
		return nil, err
	}
	return n, nil
}

// Sign adds the signature of s, which must hold a root-signing key of r,
// over r's signed bytes (replacing an earlier one by the same key). s is
// any crypto.Signer of an Ed25519 key: an ed25519.PrivateKey, or a
// pkg/service/keys signer whose key is in an HSM.
func (r *Root) Sign(s crypto.Signer) error {
	pub, ok := s.Public().(ed25519.PublicKey)
	if !ok {
		return fmt.Errorf("trust root: root-signing keys are Ed25519, not %T", s.Public())
	}
	id := signing.KeyID(pub)
	k := r.Key(PurposeRoot, id)
	if k == nil {
		return fmt.Errorf("%w: key %s is not a root-signing key of root version %d", ErrBadSignature, id, r.Version)
	}
	msg, err := r.SignedBytes()
	if err != nil {
		return err
	}
	raw, err := s.Sign(rand.Reader, msg, crypto.Hash(0))
	if err != nil {
		return fmt.Errorf("trust root: sign with key %s: %w", id, err)
	}
	if err := signing.Verify(pub, msg, raw); err != nil {
		return fmt.Errorf("trust root: the signature of key %s does not verify: %w", id, err)
	}
	r.Signatures = slices.DeleteFunc(r.Signatures, func(x Signature) bool { return x.KeyID == id })
	r.Signatures = append(r.Signatures, Signature{KeyID: id, Signature: signing.FormatSignature(raw)})
	slices.SortFunc(r.Signatures, func(a, b Signature) int { return cmpString(a.KeyID, b.KeyID) })
	return nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Errors of VerifyUpdate, carried by an *UpdateError and all matching
// ErrUpdate.
var (
	// ErrUpdate matches every error of VerifyUpdate.
	ErrUpdate = errors.New("trust root update refused")
	// ErrNoRootKeys: the old root has no root-signing keys, so it cannot
	// authorise a successor (get the new root out of band).
	ErrNoRootKeys = errors.New("the trusted root has no root-signing keys")
	// ErrRollback: the new root's version is not greater than the old
	// one's, or it was issued before it.
	ErrRollback = errors.New("version rollback")
	// ErrVersionGap: the new root skips versions; apply each in turn.
	ErrVersionGap = errors.New("version gap")
	// ErrNotSignedByPrevious: fewer than the old root's root_threshold of
	// its root-signing keys signed the new root.
	ErrNotSignedByPrevious = errors.New("not signed by the trusted root's keys")
	// ErrNotSelfSigned: fewer than the new root's own root_threshold of
	// its root-signing keys signed it.
	ErrNotSelfSigned = errors.New("not signed by its own root keys")
	// ErrHistoryRewritten: the new root removes a key, or changes a
	// key's material, start or a window end or compromise already
	// recorded, other than moving a compromise earlier.
	ErrHistoryRewritten = errors.New("rewrites the history of a key")
)

// UpdateError is the error of VerifyUpdate.
type UpdateError struct {
	// OldVersion and NewVersion are the versions involved.
	OldVersion, NewVersion int64
	// Reason says what is wrong.
	Reason string
	// Err is one of the VerifyUpdate sentinels.
	Err error
}

// Error returns "trust root update vN -> vM refused: ...".
func (e *UpdateError) Error() string {
	return fmt.Sprintf("trust root update v%d -> v%d refused: %v: %s", e.OldVersion, e.NewVersion, e.Err, e.Reason)
}

// Unwrap returns ErrUpdate and the class.
func (e *UpdateError) Unwrap() []error { return []error{ErrUpdate, e.Err} }

// countSigners returns the key ids of root-signing keys of keys (a root)
// whose signature on target verifies, that were valid at target's
// issued_at, and that have never been marked compromised (by keys or by
// target: a leaked key could backdate an issued_at).
func countSigners(keys, target *Root) []string {
	msg, err := target.SignedBytes()
	if err != nil {
		return nil
	}
	var ids []string
	for _, s := range target.Signatures {
		k := keys.Key(PurposeRoot, s.KeyID)
		if k == nil || !k.Window.CompromisedAt.IsZero() || !k.Window.Contains(target.IssuedAt) {
			continue
		}
		if tk := target.Key(PurposeRoot, s.KeyID); tk != nil && !tk.Window.CompromisedAt.IsZero() {
			continue
		}
		if verifyEd25519(k.PublicKey, msg, s.Signature) == nil {
			ids = append(ids, s.KeyID)
		}
	}
	return ids
}

func rootKeyCount(r *Root) int {
	n := 0
	for _, k := range r.Keys {
		if k.Purpose == PurposeRoot {
			n++
		}
	}
	return n
}

// CheckSelfSigned checks that root_threshold root-signing keys of r
// signed it: what a verifier checks of the first root it is given (with
// its hash, obtained out of band). A root without root-signing keys is
// ErrNoRootKeys.
func CheckSelfSigned(r *Root) error {
	if r.Legacy() || rootKeyCount(r) == 0 {
		return &UpdateError{OldVersion: r.Version, NewVersion: r.Version, Err: ErrNoRootKeys, Reason: "the root lists no root-signing keys; it can be pinned but not chained"}
	}
	if got := countSigners(r, r); len(got) < r.Threshold {
		return &UpdateError{OldVersion: r.Version, NewVersion: r.Version, Err: ErrNotSelfSigned,
			Reason: fmt.Sprintf("%d valid signatures by its root-signing keys (%v), root_threshold %d", len(got), got, r.Threshold)}
	}
	return nil
}

// VerifyUpdate checks that next may replace trusted, the root a verifier
// holds, and returns next. next must be version trusted.Version+1, issued
// no earlier, signed by at least trusted's root_threshold of trusted's
// root-signing keys and by its own root_threshold of its own, and it must
// keep every key of trusted with the same material and start, the same
// end, and the same or an earlier compromise: a root update can retire
// and compromise keys, never revive or rewrite them.
func VerifyUpdate(trusted, next *Root) (*Root, error) {
	fail := func(class error, format string, args ...any) (*Root, error) {
		return nil, &UpdateError{OldVersion: trusted.Version, NewVersion: next.Version, Err: class, Reason: fmt.Sprintf(format, args...)}
	}
	if trusted.Legacy() || rootKeyCount(trusted) == 0 {
		return fail(ErrNoRootKeys, "root v%d lists no root-signing keys, so no update can be checked against it; obtain the new root out of band and pin it", trusted.Version)
	}
	if next.Legacy() {
		return fail(ErrRollback, "a legacy PEM bundle cannot replace a trust root")
	}
	switch {
	case next.Version <= trusted.Version:
		return fail(ErrRollback, "version %d is not newer than the trusted version %d", next.Version, trusted.Version)
	case next.Version > trusted.Version+1:
		return fail(ErrVersionGap, "version %d skips versions after %d; apply versions %d to %d in order", next.Version, trusted.Version, trusted.Version+1, next.Version)
	case next.IssuedAt.Before(trusted.IssuedAt):
		return fail(ErrRollback, "issued at %s, before the trusted root (%s)", FormatTime(next.IssuedAt), FormatTime(trusted.IssuedAt))
	}
	if got := countSigners(trusted, next); len(got) < trusted.Threshold {
		return fail(ErrNotSignedByPrevious, "%d valid signatures by root-signing keys of v%d (%v), its root_threshold is %d", len(got), trusted.Version, got, trusted.Threshold)
	}
	if got := countSigners(next, next); len(got) < next.Threshold {
		return fail(ErrNotSelfSigned, "%d valid signatures by its own root-signing keys (%v), its root_threshold is %d", len(got), got, next.Threshold)
	}
	for _, o := range trusted.Keys {
		n := next.Key(o.Purpose, o.KeyID)
		switch {
		case n == nil:
			return fail(ErrHistoryRewritten, "%s was removed; mark a key compromised or end its window instead", o.name())
		case !bytes.Equal(n.SPKI(), o.SPKI()) || (o.Certificate != nil && !bytes.Equal(n.Certificate.Raw, o.Certificate.Raw)) || n.NoteVerifier != o.NoteVerifier:
			return fail(ErrHistoryRewritten, "%s changed its key material", o.name())
		case !n.Window.From.Equal(o.Window.From):
			return fail(ErrHistoryRewritten, "%s moved valid_from from %s to %s", o.name(), FormatTime(o.Window.From), FormatTime(n.Window.From))
		case !o.Window.Until.IsZero() && !n.Window.Until.Equal(o.Window.Until):
			return fail(ErrHistoryRewritten, "%s changed valid_until %s (use compromised_at to refuse signatures before it)", o.name(), FormatTime(o.Window.Until))
		case !o.Window.CompromisedAt.IsZero() && (n.Window.CompromisedAt.IsZero() || n.Window.CompromisedAt.After(o.Window.CompromisedAt)):
			return fail(ErrHistoryRewritten, "%s was compromised at %s; a later root cannot lift or postpone that", o.name(), FormatTime(o.Window.CompromisedAt))
		}
	}
	return next, nil
}

// VerifyChain applies VerifyUpdate to each update in turn, starting from
// trusted, and returns the last root.
func VerifyChain(trusted *Root, updates ...*Root) (*Root, error) {
	cur := trusted
	for _, u := range updates {
		next, err := VerifyUpdate(cur, u)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}
