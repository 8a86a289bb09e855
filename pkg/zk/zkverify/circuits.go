package zkverify

import "github.com/svc-gov/svc/pkg/core/vpec"

// Circuits a record's zk_proof may name (docs/FORMATS.md, "zk_proof
// block"): the value of zk_proof.circuit and of a circuit entry's circuit.
// The VPEC schema (pkg/core/vpec, which sits below the proofs) accepts
// exactly these wire values; TestCircuitNamesAreTheSchemas keeps the two
// in step.
const (
	CircuitMLPHead    = "mlp_head"         // verifiable_inference: a quantised MLP classifier head
	CircuitThreshold  = "threshold_check"  // mathematical: committed score >= threshold
	CircuitTruncation = "truncation_check" // mathematical: committed token count <= the model's maximum
	// CircuitBelowThreshold is mathematical: committed score < threshold,
	// the threshold condition of a Bounded Inference check (pass below).
	CircuitBelowThreshold = "below_threshold_check"
)

// PassedBit returns the public outcome bit of a condition proof from the
// record's check result: pass is 1, fail is 0; ok is false for any other
// result (a condition proof proves pass or fail, nothing else).
func PassedBit(r vpec.CheckResult) (bit bool, ok bool) {
	switch r {
	case vpec.ResultPass:
		return true, true
	case vpec.ResultFail:
		return false, true
	}
	return false, false
}
