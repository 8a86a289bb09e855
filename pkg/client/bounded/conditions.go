package bounded

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/zkprove"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// ErrConditions reports condition provers that do not fit a Bounded
// Inference check.
var ErrConditions = errors.New("bounded: condition circuits")

// ConditionOpening opens the commitment of one proved condition record:
// the committed value (the token count before truncation, or the quantised
// score) and its salt. Give it to an auditor to show what was proved; it
// is never sent.
type ConditionOpening struct {
	// Check is the record's check name (<check>:truncation_check or
	// <check>:threshold_check).
	Check string `json:"check"`
	// Circuit is truncation_check or below_threshold_check.
	Circuit conditions.Kind `json:"circuit"`
	// Value is the committed value, Bound the public bound
	// (zk_proof.max_tokens or zk_proof.threshold).
	Value uint32 `json:"value"`
	Bound uint32 `json:"bound"`
	// Salt opens Commitment, the record's commitment_hash (JSON: 64 hex
	// digits).
	Salt       conditions.Salt `json:"salt"`
	Commitment string          `json:"commitment_hash"`
}

// checkConditions validates Options.Conditions: at most one
// truncation_check and one below_threshold_check prover. A
// threshold_check (at or above) circuit proves the opposite of this
// check's verdict and is refused.
func checkConditions(cs []*zkprove.Condition) error {
	seen := map[conditions.Kind]bool{}
	for _, c := range cs {
		if c == nil {
			return fmt.Errorf("%w: a nil condition prover", ErrConditions)
		}
		k := c.Kind()
		switch {
		case k == conditions.Threshold:
			return fmt.Errorf("%w: a %s circuit proves score >= threshold, but a Bounded Inference check passes below its threshold: publish and give a %s circuit", ErrConditions, k, conditions.BelowThreshold)
		case k != conditions.Truncation && k != conditions.BelowThreshold:
			return fmt.Errorf("%w: %s is not a condition of a Bounded Inference check", ErrConditions, k)
		case seen[k]:
			return fmt.Errorf("%w: two %s provers", ErrConditions, k)
		}
		seen[k] = true
	}
	return nil
}

// provedPart is a pre/post-condition proved for its record (commitment
// set), or the inference record's extra options (commitment empty: the
// record is committed to the input as before).
type provedPart struct {
	result     vpec.CheckResult
	commitment string
	opts       []client.RecordOption
}

// proveConditions proves the truncation and threshold conditions of one
// inference with Options.Conditions (none: an empty map, and the records
// stay unproved). The truncation condition commits the token count before
// truncation (tokenizer.Count), so a cut input gives a valid proof of
// fail; the threshold condition commits the quantised score, and is not
// proved when the output is not a probability vector (an error record).
// Each proved record names the check's input commitment and carries the
// output commitment of the inference record where it has one, and the
// inference record (the map's entry under check) lists their commitments,
// so the verifier ties each to its inference record both ways
// (docs/PROOFS.md).
func (c *Classifier) proveConditions(check string, input []byte, res *Result, maxTokens int, output []byte) (map[string]*provedPart, error) {
	out := map[string]*provedPart{}
	if len(c.opts.Conditions) == 0 {
		return out, nil
	}
	inputCommitment := commitment.String(input)
	for _, cond := range c.opts.Conditions {
		var value, bound uint32
		var name string
		var want vpec.CheckResult
		details := map[string]any{stage.DetailInputCommitment: inputCommitment}
		var extra []client.RecordOption
		switch cond.Kind() {
		case conditions.Truncation:
			name = check + ":truncation_check"
			n := int(res.Trace.Tokens)
			if res.Trace.Truncated {
				n = c.m.Tokenizer.Count(string(input))
			}
			value, bound = clampU32(n), clampU32(maxTokens)
			want = vpec.ResultPass
			if res.Trace.Truncated {
				want = vpec.ResultFail
			}
			details[stage.DetailMaxTokens] = maxTokens
		case conditions.BelowThreshold:
			if res.Verdict == vpec.ResultError {
				continue // no score to prove: the error record stays unproved
			}
			name = check + ":threshold_check"
			var err error
			if value, err = conditions.QuantizeScore(res.Score); err != nil {
				return nil, err
			}
			if bound, err = conditions.QuantizeScore(c.opts.Threshold); err != nil {
				return nil, err
			}
			want = res.Verdict
			details[stage.DetailThreshold] = c.opts.Threshold
			details["label"] = *c.opts.Label
			extra = append(extra, client.WithOutputCommitment(commitment.String(output)))
		}
		cp, salt, err := cond.Prove(value, bound)
		if err != nil {
			return nil, fmt.Errorf("prove %s: %w", name, err)
		}
		if cp.CheckResult != want {
			// The tokenizer's count and the quantised verdict agree with
			// the check by construction; never record a contradiction.
			return nil, fmt.Errorf("%w: %s proves %s, the check says %s", ErrConditions, name, cp.CheckResult, want)
		}
		out[name] = &provedPart{result: cp.CheckResult, commitment: cp.CommitmentHash,
			opts: append(extra, client.WithDetails(details), client.WithZKProof(cp.ZKProof))}
		res.Conditions = append(res.Conditions, ConditionOpening{Check: name, Circuit: cond.Kind(), Value: value, Bound: bound, Salt: salt, Commitment: cp.CommitmentHash})
	}
	// The inference record lists the commitments of its proved
	// conditions, so each condition record is tied to exactly this
	// inference both ways (docs/FORMATS.md, "Condition records of a
	// decomposition"). Its details are otherwise what Check gives it.
	if len(res.Conditions) > 0 {
		listed := map[string]any{}
		for _, o := range res.Conditions {
			listed[strings.TrimPrefix(o.Check, check+":")] = o.Commitment
		}
		out[check] = &provedPart{opts: []client.RecordOption{client.WithDetails(map[string]any{
			stage.DetailGPUClass: c.opts.GPUClass, stage.DetailConditionCommitments: listed})}}
	}
	return out, nil
}

// recordPart records one part of the decomposition: proved (pp not nil)
// with its poseidon2 commitment and proof, else committed to the input as
// before.
func recordPart(ctx context.Context, run *client.Run, pp *provedPart, name, manifestID string, result vpec.CheckResult, input []byte, stage client.RecordOption, opts []client.RecordOption) (*client.RecordResult, error) {
	if pp == nil {
		return run.Record(ctx, name, manifestID, result, input, append(opts, stage)...)
	}
	if pp.commitment == "" {
		return run.Record(ctx, name, manifestID, result, input, append(append(opts, pp.opts...), stage)...)
	}
	return run.RecordCommitted(ctx, name, manifestID, pp.result, pp.commitment, append(pp.opts, stage)...)
}

func clampU32(n int) uint32 {
	if n < 0 {
		return 0
	}
	if uint64(n) > conditions.MaxValue {
		return conditions.MaxValue
	}
	return uint32(n)
}
