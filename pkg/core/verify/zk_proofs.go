package verify

import (
	"errors"
	"fmt"
	"strings"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckZK: every zk_proof verifies against a signed circuit entry (the
// ProofVerifier), every proved condition of a decomposition is linked to
// its inference record and back (vpec.VPEC.CheckConditionLink,
// CheckListedConditions), and no verifiable_inference record lacks a
// proof.
const CheckZK CheckName = "zk_proofs"

// ProofInfo is what a ProofVerifier learned from a valid proof: the
// circuit id and the contributors of the setup ceremony of its key.
type ProofInfo struct {
	CircuitID    string
	Contributors []string
}

// ProofVerifier checks the zk_proof of a record against signed circuit
// entries (pkg/zk/zkverify implements it). VerifyProof returns an error
// matching ErrCircuitNotFound when no circuit entry for the proof's
// circuit id is available (trust material missing); any other error names
// the check that failed.
type ProofVerifier interface {
	VerifyProof(runID string, r *vpec.Record) (ProofInfo, error)
}

// ErrCircuitNotFound reports a circuit id that no available circuit entry
// has.
var ErrCircuitNotFound = errors.New("circuit entry not found")

// DefaultCircuitAdvice is the advice of a CIRCUIT NOT AVAILABLE message
// when Options.CircuitAdvice is empty: it names no surface's controls.
const DefaultCircuitAdvice = "supply the signed circuit entry of each proof's circuit id (the issuing service's circuit registry has them: svc registry get-circuit)"

func (s *state) zkProofs() Check {
	return checkZKProofs(&s.doc.VPEC, s.opts.Proofs, s.opts.CircuitAdvice)
}

// checkZKProofs checks every record of v that carries a proof with proofs
// (nil: none available); a verifiable_inference record without one fails.
// advice (empty: DefaultCircuitAdvice) says how to supply a missing
// circuit entry.
func checkZKProofs(v *vpec.VPEC, proofs ProofVerifier, advice string) Check {
	c := Check{Name: CheckZK}
	var claims, ids []string
	contributors := map[string][]string{}
	n, missing, invalid := 0, 0, 0
	var keyErr error // the first circuit entry key a trust root refused
	if pr, ok := proofs.(interface{ Problems() []string }); ok {
		for _, s := range pr.Problems() {
			c.Details = append(c.Details, s)
			invalid++
		}
	}
	for i := range v.Records {
		r := &v.Records[i]
		if r.ZKProof == nil {
			if r.ProofLevel == vpec.VerifiableInference {
				claims = append(claims, fmt.Sprintf("sequence %d (%s): proof_level verifiable_inference without a zk_proof", r.Sequence, r.Check))
			}
			continue
		}
		n++
		if proofs == nil {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s): no circuit entries given", r.Sequence, r.Check))
			missing++
			continue
		}
		info, err := proofs.VerifyProof(v.RunID, r)
		if lerr := v.CheckConditionLink(r); err == nil && lerr != nil {
			err = lerr
		}
		if err != nil {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s): %v", r.Sequence, r.Check, err))
			var ke *trustroot.KeyError
			switch {
			case errors.Is(err, ErrCircuitNotFound):
				missing++
			case errors.As(err, &ke):
				if keyErr == nil {
					keyErr = ke
				}
				invalid++
			default:
				invalid++
			}
			continue
		}
		if _, seen := contributors[info.CircuitID]; !seen {
			ids = append(ids, info.CircuitID)
		}
		contributors[info.CircuitID] = info.Contributors
	}
	for _, err := range v.CheckListedConditions() {
		c.Details = append(c.Details, err.Error())
		invalid++
	}
	if len(claims) > 0 {
		c.Details = append(claims, c.Details...)
		return fail(c, "ZK PROOF UNVERIFIABLE", fmt.Sprintf("%d record(s) claim verifiable_inference without a zero-knowledge proof", len(claims)), false)
	}
	if invalid > 0 {
		code := "ZK PROOF INVALID"
		if keyErr != nil {
			// The entry's key is outside its circuit-signing window
			// at published_at (or of another purpose, or compromised):
			// the verdict names the refusal (CIRCUIT KEY EXPIRED, …).
			code = keyFail(c, "CIRCUIT", keyErr).Code
		}
		return fail(c, code, "ZK proofs invalid: "+c.Details[0], false)
	}
	if missing > 0 {
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
		members[who] = append(members[who], commitment.Short(id))
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
