package verify

import (
	"errors"
	"fmt"
	"slices"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
)

// Options configure Verify: the trust material and the policy. Verify
// validates them before it reads the document (Validate).
type Options struct {
	// Trust holds the service keys and TSA roots. Required, with at least
	// one key, unless Root is set; without TSA roots the timestamp cannot
	// be checked and the verdict is at best UNVERIFIED.
	Trust *signing.Bundle
	// Root is the trust root (a svc.trust-root/v1 document, or a PEM
	// bundle read by trustroot.Load as valid forever). When set, the
	// signature check accepts the VPEC's key only for vpec-signing with
	// the verified RFC 3161 genTime inside its window, the timestamp
	// check accepts a TSA root only with that genTime inside its window,
	// the profile check accepts only profile-signing keys, and the
	// transparency check takes the log's key and the witnesses from it.
	// When Trust is nil it is derived from Root (TrustFor).
	Root *trustroot.Root
	// Receipt is the VPEC's transparency log receipt (svc.tlog.receipt/v1,
	// vpec.receipt.json), checked by the transparency check against
	// Root's log-checkpoint keys. Nil: the check reports that no receipt
	// was given, and passes unless RequireLog.
	Receipt []byte
	// RequireLog makes a VPEC without a valid receipt INVALID (NO LOG
	// RECEIPT).
	RequireLog bool
	// WitnessPolicy is the witness policy a receipt's checkpoint must
	// satisfy. Nil: every witness key of Root must cosign, and with no
	// witness key in Root the log's signature alone is trusted ("quorum
	// none"); the report says which.
	WitnessPolicy *tlog.WitnessPolicy
	// NewerCheckpoint, when set, is a checkpoint of the same log the
	// verifier has seen (a signed note): the receipt's checkpoint must be
	// a prefix of it, by ConsistencyProof (RFC 6962, from the receipt's
	// checkpoint to this one; empty when both have the same size).
	NewerCheckpoint  []byte
	ConsistencyProof [][]byte
	// Profiles resolves profile ids of Bounded Inference records. May be nil.
	Profiles ProfileSource
	// Proofs checks the zk_proof of verifiable_inference and mathematical
	// records (pkg/zk's Verifier over signed circuit entries). May be nil:
	// a record with a proof then fails as not checked (trust material
	// missing).
	Proofs ProofVerifier
	// CircuitAdvice tells the user, in the words of the surface that
	// verifies, how to supply a circuit entry that is missing: the "ZK
	// proofs" check appends it to its CIRCUIT NOT AVAILABLE message (svc
	// verify names its --circuit flag, the offline page its circuit entry
	// control, the dashboard the registry). Empty: DefaultCircuitAdvice.
	CircuitAdvice string
	// RequireClean makes a valid VPEC that is not clean (governance gaps,
	// declared chain breaks) INVALID — NOT CLEAN, matching ErrNotClean.
	RequireClean bool
	// RequirePassed makes a valid VPEC with a record whose check result
	// is fail or error (NotPassedCodes) INVALID — NOT PASSED, matching
	// ErrNotPassed. Clean and passed are separate: a VPEC with no gaps
	// can hold a failed check, and one with gaps can have every check
	// pass. With both set and both broken, the verdict is NOT PASSED and
	// the error matches ErrNotClean too.
	RequirePassed bool
	// Owned says the caller hands doc over for good: it never changes again
	// while the report, or anything taken from it, is in use (svc verify's
	// file, read for this one call). Records are then read without copying
	// their bytes (vpec.ParseOwned). False: doc is only read, and may change
	// once Verify returns.
	Owned bool
	// Extra are checks made outside this package (svc's replay audit of
	// a Bounded Inference trace), run in order after the built-in checks
	// on any input that is a JSON document. Each returns its check and
	// whether it applied (a check that did not apply is not reported), or
	// an error, which stops verification: Verify then returns it wrapped,
	// with no report.
	Extra []ExtraCheck
}

// ExtraCheck is a check Options.Extra adds to the report; it reads the
// document as given to Verify.
type ExtraCheck func(doc []byte) (c Check, applied bool, err error)

// ErrOptions: the Options given to Verify cannot verify anything (no
// trust bundle, a bundle without a key, a nil extra check). It is a
// programming error, returned before any document is read, with no
// report.
var ErrOptions = errors.New("vpec: invalid verification options")

// Validate reports whether the options can verify anything: an error
// matching ErrOptions when they cannot.
func (o *Options) Validate() error {
	if o.Trust == nil && o.Root != nil {
		o.Trust = TrustFor(o.Root)
	}
	if o.Trust == nil {
		return fmt.Errorf("%w: Trust is nil: pass the trust bundle of the service that issued the VPEC", ErrOptions)
	}
	if len(o.Trust.KeyIDs()) == 0 {
		return fmt.Errorf("%w: the trust bundle holds no Ed25519 public key", ErrOptions)
	}
	if len(o.ConsistencyProof) > 0 && o.NewerCheckpoint == nil {
		return fmt.Errorf("%w: ConsistencyProof without NewerCheckpoint: give the checkpoint the proof leads to", ErrOptions)
	}
	if o.NewerCheckpoint != nil && o.Receipt == nil {
		return fmt.Errorf("%w: NewerCheckpoint without Receipt: a newer checkpoint is checked against the receipt's, so give the receipt", ErrOptions)
	}
	for i, x := range o.Extra {
		if x == nil {
			return fmt.Errorf("%w: Extra[%d] is nil", ErrOptions, i)
		}
	}
	return nil
}

// TrustFor returns the bundle of root's keys for the given purposes
// (every Ed25519 key of vpec-signing, profile-signing and circuit-signing
// when none is given) and of its TSA root certificates, whatever their
// windows: what the checks that take a bundle verify against. The windows
// are checked by the signature, timestamp and profile checks with Root.
func TrustFor(root *trustroot.Root, purposes ...trustroot.Purpose) *signing.Bundle {
	if len(purposes) == 0 {
		purposes = []trustroot.Purpose{trustroot.PurposeVPEC, trustroot.PurposeProfile, trustroot.PurposeCircuit}
	}
	b := signing.NewBundle()
	if root == nil {
		return b
	}
	for _, k := range root.Keys {
		switch {
		case k.Purpose == trustroot.PurposeTSARoot && k.Certificate != nil:
			b.AddRoot(k.Certificate)
		case k.PublicKey != nil && slices.Contains(purposes, k.Purpose):
			b.AddKey(k.PublicKey)
		}
	}
	return b
}
