package verify

import (
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/core/signing"
)

// Options configure Verify: the trust material and the policy. Verify
// validates them before it reads the document (Validate).
type Options struct {
	// Trust holds the service keys and TSA roots. Required, with at least
	// one key; without TSA roots the timestamp cannot be checked and the
	// verdict is at best UNVERIFIED.
	Trust *signing.Bundle
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
	if o.Trust == nil {
		return fmt.Errorf("%w: Trust is nil: pass the trust bundle of the service that issued the VPEC", ErrOptions)
	}
	if len(o.Trust.KeyIDs()) == 0 {
		return fmt.Errorf("%w: the trust bundle holds no Ed25519 public key", ErrOptions)
	}
	for i, x := range o.Extra {
		if x == nil {
			return fmt.Errorf("%w: Extra[%d] is nil", ErrOptions, i)
		}
	}
	return nil
}
