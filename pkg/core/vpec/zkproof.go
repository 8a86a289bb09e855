package vpec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/signing"
)

// ZKSystem is the proof system of every v1 zk_proof block: Groth16 over
// BN254.
const ZKSystem = "groth16-bn254"

// Circuits a zk_proof block may name.
const (
	CircuitMLPHead    = "mlp_head"         // verifiable_inference: a quantised MLP classifier head
	CircuitThreshold  = "threshold_check"  // mathematical: committed score >= threshold
	CircuitTruncation = "truncation_check" // mathematical: committed token count <= the model's maximum
	// CircuitBelowThreshold is mathematical: committed score < threshold,
	// the threshold condition of a Bounded Inference check (pass below).
	CircuitBelowThreshold = "below_threshold_check"
)

// Size limits of a zk_proof block.
const (
	// MaxZKProofBytes bounds the decoded proof (a BN254 Groth16 proof is
	// 128 bytes compressed, 196 with one commitment).
	MaxZKProofBytes = 1024
	// MaxZKLogits bounds the logits of an mlp_head proof.
	MaxZKLogits = 64
)

// ZKProof is the zero-knowledge proof a verifiable_inference or
// mathematical record carries (docs/FORMATS.md, "Proofs in records"). It
// carries no vector of public inputs: the verifier rebuilds them from the
// record's own fields (the commitment hash, the check result, the model
// hash and the statement fields here), so the proof is about what the
// record says or it fails.
type ZKProof struct {
	System    string `json:"system"`
	Circuit   string `json:"circuit"`
	CircuitID string `json:"circuit_id"`
	// Proof is the standard base64 (padded) of the proof's canonical
	// bytes (gnark's compressed encoding).
	Proof string `json:"proof"`
	// Threshold is the public threshold of a threshold_check proof.
	Threshold *int64 `json:"threshold,omitempty"`
	// MaxTokens is the model's maximum token count, public input of a
	// truncation_check proof.
	MaxTokens *int64 `json:"max_tokens,omitempty"`
	// Class is the output class of an mlp_head proof.
	Class *int64 `json:"class,omitempty"`
	// Logits are the quantised output logits of an mlp_head proof.
	Logits []int64 `json:"logits,omitempty" maxitems:"64"`
}

// ProofInfo is what a ProofVerifier learned from a valid proof: the
// circuit id and the contributors of the setup ceremony of its key.
type ProofInfo struct {
	CircuitID    string
	Contributors []string
}

// ProofVerifier checks the zk_proof of a record against signed circuit
// entries (pkg/zk implements it). VerifyProof returns an error matching
// ErrCircuitNotFound when no circuit entry for the proof's circuit id is
// available (trust material missing); any other error names the check
// that failed.
type ProofVerifier interface {
	VerifyProof(runID string, r *Record) (ProofInfo, error)
}

// DefaultCircuitAdvice is the advice of a CIRCUIT NOT AVAILABLE message
// when Options.CircuitAdvice is empty: it names no surface's controls.
const DefaultCircuitAdvice = "supply the signed circuit entry of each proof's circuit id (the issuing service's circuit registry has them: svc registry get-circuit)"

// ErrCircuitNotFound reports a circuit id that no available circuit entry
// has.
var ErrCircuitNotFound = errors.New("circuit entry not found")

// PassedBit returns the public outcome bit of a condition proof from the
// record's check result: pass is 1, fail is 0; ok is false for any other
// result (a condition proof proves pass or fail, nothing else).
func PassedBit(r CheckResult) (bit bool, ok bool) {
	switch r {
	case ResultPass:
		return true, true
	case ResultFail:
		return false, true
	}
	return false, false
}

func checkZKProof(r *Record, f string, bad func(string, ...any)) {
	z := r.ZKProof
	if z == nil {
		return
	}
	f += ".zk_proof"
	if r.ProofLevel != VerifiableInference && r.ProofLevel != Mathematical {
		bad("%s: a zk_proof goes only with proof_level verifiable_inference or mathematical, not %s", f, r.ProofLevel)
	}
	if z.System != ZKSystem {
		bad("%s.system %q is not %s", f, z.System, ZKSystem)
	}
	if h, err := commitment.Parse(z.CircuitID); err != nil || h.Algorithm != commitment.SHA256 {
		bad("%s.circuit_id %q is not a sha256:<64 hex> hash", f, z.CircuitID)
	}
	if b, err := signing.DecodeBase64(z.Proof); err != nil || len(b) == 0 || len(b) > MaxZKProofBytes {
		bad("%s.proof must be the standard base64 of 1-%d bytes", f, MaxZKProofBytes)
	}
	if r.CommitmentAlgorithm != string(commitment.Poseidon2) {
		bad("%s: the commitment_hash of a proved record is a poseidon2 commitment (the circuit's public input), not %s", f, r.CommitmentAlgorithm)
	}
	uint32Field := func(name string, p *int64) {
		if p == nil {
			bad("%s.%s is required for circuit %s", f, name, z.Circuit)
		} else if *p < 0 || *p > 1<<32-1 {
			bad("%s.%s %d is out of range 0-%d", f, name, *p, uint64(1<<32-1))
		}
	}
	absent := func(name string, present bool) {
		if present {
			bad("%s.%s does not go with circuit %s", f, name, z.Circuit)
		}
	}
	switch z.Circuit {
	case CircuitMLPHead:
		if r.ProofLevel != VerifiableInference {
			bad("%s: circuit %s proves an inference: proof_level verifiable_inference", f, z.Circuit)
		}
		if r.ONNXModelHash == "" {
			bad("%s: an %s proof needs the record's onnx_model_hash", f, z.Circuit)
		}
		if z.Class == nil {
			bad("%s.class is required for circuit %s", f, z.Circuit)
		} else if *z.Class < 0 || *z.Class >= int64(max(len(z.Logits), 1)) {
			bad("%s.class %d is not the index of a logit", f, *z.Class)
		}
		if len(z.Logits) < 2 || len(z.Logits) > MaxZKLogits {
			bad("%s.logits must hold 2-%d values", f, MaxZKLogits)
		}
		for _, l := range z.Logits {
			if l < -(1<<31) || l > 1<<31-1 {
				bad("%s.logits: %d is not a 32-bit integer", f, l)
				break
			}
		}
		absent("threshold", z.Threshold != nil)
		absent("max_tokens", z.MaxTokens != nil)
	case CircuitThreshold, CircuitTruncation, CircuitBelowThreshold:
		if r.ProofLevel != Mathematical {
			bad("%s: circuit %s proves a condition: proof_level mathematical", f, z.Circuit)
		}
		if _, ok := PassedBit(r.CheckResult); !ok {
			bad("%s: a %s proof proves pass or fail, not check_result %s", f, z.Circuit, r.CheckResult)
		}
		if z.Circuit != CircuitTruncation {
			uint32Field("threshold", z.Threshold)
			absent("max_tokens", z.MaxTokens != nil)
		} else {
			uint32Field("max_tokens", z.MaxTokens)
			absent("threshold", z.Threshold != nil)
		}
		absent("class", z.Class != nil)
		absent("logits", len(z.Logits) > 0)
	default:
		bad("%s.circuit %q is not one of %s, %s, %s, %s", f, z.Circuit, CircuitMLPHead, CircuitThreshold, CircuitTruncation, CircuitBelowThreshold)
	}
}

// checkZKProofs is the "ZK proofs" check: every record that carries a
// proof is checked by opts.Proofs; a verifiable_inference record without
// one fails.
func checkZKProofs(p parsed, opts Options) Check {
	c := Check{Name: CheckZK}
	var claims, ids []string
	contributors := map[string][]string{}
	n, missing, invalid := 0, 0, 0
	if pr, ok := opts.Proofs.(interface{ Problems() []string }); ok {
		for _, s := range pr.Problems() {
			c.Details = append(c.Details, s)
			invalid++
		}
	}
	for i := range p.v.Records {
		r := &p.v.Records[i]
		if r.ZKProof == nil {
			if r.ProofLevel == VerifiableInference {
				claims = append(claims, fmt.Sprintf("sequence %d (%s): proof_level verifiable_inference without a zk_proof", r.Sequence, r.Check))
			}
			continue
		}
		n++
		if opts.Proofs == nil {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s): no circuit entries given", r.Sequence, r.Check))
			missing++
			continue
		}
		info, err := opts.Proofs.VerifyProof(p.v.RunID, r)
		if msg := conditionLink(&p.v, r); err == nil && msg != "" {
			err = fmt.Errorf("%s", msg)
		}
		if err != nil {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s): %v", r.Sequence, r.Check, err))
			if errors.Is(err, ErrCircuitNotFound) {
				missing++
			} else {
				invalid++
			}
			continue
		}
		if _, seen := contributors[info.CircuitID]; !seen {
			ids = append(ids, info.CircuitID)
		}
		contributors[info.CircuitID] = info.Contributors
	}
	for _, msg := range listedConditions(&p.v) {
		c.Details = append(c.Details, msg)
		invalid++
	}
	if len(claims) > 0 {
		c.Details = append(claims, c.Details...)
		return fail(c, "ZK PROOF UNVERIFIABLE", fmt.Sprintf("%d record(s) claim verifiable_inference without a zero-knowledge proof", len(claims)), false)
	}
	if invalid > 0 {
		return fail(c, "ZK PROOF INVALID", "ZK proofs invalid: "+c.Details[0], false)
	}
	if missing > 0 {
		advice := opts.CircuitAdvice
		if advice == "" {
			advice = DefaultCircuitAdvice
		}
		return fail(c, "CIRCUIT NOT AVAILABLE", "ZK proofs not checked: "+c.Details[0]+"; "+advice, true)
	}
	if n == 0 {
		c.Status, c.Message = NotApplicable, "ZK proofs: none present"
		return c
	}
	// Keys that share their setup contributors are named together, in the
	// order of their first proof: "a…, b… (setup contributors: X); c… (…)".
	var groups []string
	members := map[string][]string{}
	for _, id := range ids {
		who := strings.Join(contributors[id], ", ")
		if _, seen := members[who]; !seen {
			groups = append(groups, who)
		}
		members[who] = append(members[who], shortHash(id))
	}
	parts := make([]string, len(groups))
	for i, who := range groups {
		parts[i] = fmt.Sprintf("%s (setup contributors: %s)", strings.Join(members[who], ", "), who)
	}
	noun := "proofs"
	if n == 1 {
		noun = "proof"
	}
	c.Status, c.Message = Pass, fmt.Sprintf("ZK proofs valid (%d %s, circuit ids %s)", n, noun, strings.Join(parts, "; "))
	return c
}
