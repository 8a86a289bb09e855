package tlog

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
)

// Verifier checks receipts and checkpoints of one log offline, against
// its trust material: the log's key and a witness policy. Build it with
// NewVerifier; the zero Verifier verifies nothing and returns errors.
type Verifier struct {
	log    LogKey
	policy *WitnessPolicy
	window CosignatureWindow
}

// CosignatureWindow decides whether a witness's cosignature, which
// verified and says it was made at t, counts toward the witness policy:
// nil if it does, else why not (a trust root's window for the witness key,
// docs/KEYS.md). w is the witness's note verifier (its Name and KeyHash
// identify the key).
type CosignatureWindow func(w note.Verifier, t time.Time) error

// WithCosignatureWindow returns a copy of v whose cosignatures count
// toward the policy only when f accepts them. A refused cosignature is
// reported, with f's error, when the policy is then not satisfied
// (ErrWitnessPolicy wrapping a *CosignatureRefusedError).
func (v *Verifier) WithCosignatureWindow(f CosignatureWindow) *Verifier {
	c := *v
	c.window = f
	return &c
}

// NewVerifier returns a verifier for the log with key log, whose
// checkpoints must satisfy policy. Both are required: a policy of
// "quorum none" is how a caller says it trusts the log's signature alone.
func NewVerifier(log LogKey, policy *WitnessPolicy) (*Verifier, error) {
	if log.IsZero() {
		return nil, fmt.Errorf("tlog: no log key: give the log's note verifier key (svc serve prints it)")
	}
	if policy == nil {
		return nil, fmt.Errorf("tlog: %w", errNoPolicy)
	}
	return &Verifier{log: log, policy: policy}, nil
}

// LogKey returns the log key the verifier trusts.
func (v *Verifier) LogKey() LogKey { return v.log }

// Policy returns the witness policy the verifier applies.
func (v *Verifier) Policy() *WitnessPolicy { return v.policy }

// Subject names the VPEC a receipt must be for.
type Subject struct {
	// VPECID is the VPEC's vpec_id.
	VPECID string
	// Digest is the SHA-256 of the VPEC's signed bytes (see [Digest]).
	Digest [32]byte
}

// Verified is what a valid receipt proves.
type Verified struct {
	// Index is the VPEC's entry's index in the log.
	Index uint64
	// Leaf is the entry.
	Leaf Leaf
	// Checkpoint is the verified checkpoint the entry is included in,
	// with the cosignatures that verified.
	Checkpoint *Checkpoint
}

// VerifyReceipt checks a receipt (its canonical JSON) for the VPEC s:
//
//  1. it is a v1 receipt in its one accepted encoding (ErrMalformed);
//  2. its leaf records s: same vpec_id and digest (ErrWrongVPEC);
//  3. its checkpoint is the trusted log's (ErrWrongLog) and signed by the
//     log key (ErrLogSignature);
//  4. the checkpoint covers the log index (ErrCheckpointTooOld);
//  5. the inclusion proof leads from the leaf at that index to the
//     checkpoint's root (ErrInclusion);
//  6. every cosignature by a witness of the policy verifies
//     (ErrCosignature) and those the verifier's CosignatureWindow accepts
//     satisfy the policy (ErrWitnessPolicy).
//
// The checks run in that order and the first failure is returned; the
// result is nil on error.
func (v *Verifier) VerifyReceipt(receipt []byte, s Subject) (*Verified, error) {
	if v == nil || v.policy == nil {
		return nil, fmt.Errorf("tlog: a Verifier must be built with NewVerifier")
	}
	r, err := ParseReceipt(receipt)
	if err != nil {
		return nil, err
	}
	if r.Leaf.VPECID != s.VPECID {
		return nil, fmt.Errorf("%w: the receipt's leaf records %s, this VPEC is %s", ErrWrongVPEC, r.Leaf.VPECID, s.VPECID)
	}
	if r.Leaf.Digest != s.Digest {
		return nil, fmt.Errorf("%w: the receipt's leaf records another digest of %s's signed bytes (sha256:%x, this VPEC's is sha256:%x): it is for another version of the VPEC",
			ErrWrongVPEC, s.VPECID, r.Leaf.Digest, s.Digest)
	}
	n, cp, err := v.openCheckpoint(r.Checkpoint, true)
	if err != nil {
		return nil, err
	}
	if r.LogIndex >= cp.Size {
		return nil, fmt.Errorf("%w: the checkpoint has %d entries, the receipt's index is %d: the checkpoint predates the entry", ErrCheckpointTooOld, cp.Size, r.LogIndex)
	}
	leafHash := r.Leaf.Hash()
	path := make([][]byte, len(r.InclusionProof))
	for i := range r.InclusionProof {
		path[i] = r.InclusionProof[i][:]
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, r.LogIndex, cp.Size, leafHash[:], path, cp.Root[:]); err != nil {
		return nil, fmt.Errorf("%w: from the leaf at index %d to the root of the checkpoint's %d entries (a proof for another index, entry or tree)", ErrInclusion, r.LogIndex, cp.Size)
	}
	if cp.Cosignatures, err = v.policy.check(n, v.window); err != nil {
		return nil, err
	}
	return &Verified{Index: r.LogIndex, Leaf: r.Leaf, Checkpoint: cp}, nil
}

// VerifyCheckpoint checks that a checkpoint (a signed note) is the
// trusted log's and signed by its key, and that its cosignatures satisfy
// the witness policy. Signature lines may be in any order.
func (v *Verifier) VerifyCheckpoint(signedNote []byte) (*Checkpoint, error) {
	if v == nil || v.policy == nil {
		return nil, fmt.Errorf("tlog: a Verifier must be built with NewVerifier")
	}
	n, cp, err := v.openCheckpoint(signedNote, false)
	if err != nil {
		return nil, err
	}
	if cp.Cosignatures, err = v.policy.check(n, v.window); err != nil {
		return nil, err
	}
	return cp, nil
}

// openCheckpoint parses a checkpoint and verifies the log's signature.
func (v *Verifier) openCheckpoint(raw []byte, sorted bool) (*signedNote, *Checkpoint, error) {
	n, err := parseNote(raw, sorted)
	if err != nil {
		return nil, nil, err
	}
	origin, size, root, err := parseCheckpointBody(n.text)
	if err != nil {
		return nil, nil, err
	}
	if origin != v.log.Origin() {
		return nil, nil, fmt.Errorf("%w: its origin is %q, the trusted log's is %q", ErrWrongLog, clip(origin), v.log.Origin())
	}
	lv := v.log.Verifier()
	signed := false
	for _, s := range n.sigs {
		if s.name != lv.Name() || s.hash != lv.KeyHash() {
			continue
		}
		if !lv.Verify([]byte(n.text), s.sig) {
			return nil, nil, fmt.Errorf("%w: the signature line of key %s does not verify: forged, or over another checkpoint", ErrLogSignature, lv.Name())
		}
		signed = true
	}
	if !signed {
		return nil, nil, fmt.Errorf("%w: no signature line by the trusted key %s (a checkpoint signed by another key, or unsigned)", ErrLogSignature, v.log)
	}
	// Cross-check with the reference implementation of signed notes.
	if _, err := note.Open(raw, note.VerifierList(lv)); err != nil {
		var inv *note.InvalidSignatureError
		if errors.As(err, &inv) {
			return nil, nil, fmt.Errorf("%w: %v", ErrLogSignature, err)
		}
		return nil, nil, malformed("checkpoint", "%v", err)
	}
	return n, &Checkpoint{Origin: origin, Size: size, Root: root, Note: slices.Clone(raw)}, nil
}

// VerifyConsistency checks that newer extends older: the RFC 6962
// consistency proof leads from older's root to newer's. Both must come
// from VerifyCheckpoint or VerifyReceipt of this verifier. It fails with
// ErrLogShrank when newer is smaller than older, and with ErrInconsistent
// when the two cannot be views of one append-only log (same size and
// different roots, or a proof that does not verify).
func (v *Verifier) VerifyConsistency(older, newer *Checkpoint, consistencyProof [][]byte) error {
	if older == nil || newer == nil {
		return fmt.Errorf("tlog: VerifyConsistency needs two checkpoints")
	}
	if older.Origin != v.log.Origin() || newer.Origin != v.log.Origin() {
		return fmt.Errorf("%w: checkpoints of %q and %q, the trusted log is %q", ErrWrongLog, older.Origin, newer.Origin, v.log.Origin())
	}
	if newer.Size < older.Size {
		return fmt.Errorf("%w: the newer checkpoint has %d entries, the older %d (the log shrank, or the two are given in the wrong order)", ErrLogShrank, newer.Size, older.Size)
	}
	if newer.Size == older.Size && newer.Root != older.Root {
		return fmt.Errorf("%w: two checkpoints of %d entries with different roots: the log has shown two histories (a split view)", ErrInconsistent, newer.Size)
	}
	if len(consistencyProof) > 2*MaxProofHashes {
		return fmt.Errorf("%w consistency proof: %d hashes", ErrMalformed, len(consistencyProof))
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, older.Size, newer.Size, consistencyProof, older.Root[:], newer.Root[:]); err != nil {
		return fmt.Errorf("%w: the consistency proof from %d to %d entries does not lead from the older root to the newer (a wrong proof, or two histories)", ErrInconsistent, older.Size, newer.Size)
	}
	return nil
}
