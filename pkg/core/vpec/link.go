package vpec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/stage"
)

// quantizeProbability is the fixed-point form of a probability p in
// [0, 1] that threshold circuits compare: min(floor(p · 2^32), 2^32 − 1)
// (exact in float64); ok is false for NaN or p outside [0, 1]. It is
// pkg/zk/conditions.QuantizeScore without the dependency (a test keeps
// them equal).
func quantizeProbability(p float64) (q int64, ok bool) {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return 0, false
	}
	return min(int64(math.Floor(math.Ldexp(p, 32))), 1<<32-1), true
}

// CheckConditionLink checks that a proved condition of a decomposition (a
// record r of v with a condition zk_proof, stage_type
// bound_committed_inference or open_source_ml and stage_part
// pre_conditions or post_conditions) is tied to its check (docs/FORMATS.md,
// "Condition records of a decomposition"): its details name the input
// commitment of an inference record of the same check and stage type in
// v, and the bound in its details is the one the proof is about. It
// returns nil when the record is linked or is a standalone condition (no
// such stage); the verifier's ZK proofs check reports the error.
func (v *VPEC) CheckConditionLink(r *Record) error {
	if msg := conditionLink(v, r); msg != "" {
		return errors.New(msg)
	}
	return nil
}

func conditionLink(v *VPEC, r *Record) string {
	z := r.ZKProof
	if z == nil || z.Circuit == circuitMLPHead || (r.StageType != stage.BoundCommittedInference && r.StageType != stage.OpenSourceML) ||
		(r.StagePart != stage.PartPre && r.StagePart != stage.PartPost) {
		return ""
	}
	base, part, hasPart := r.Check, "", false
	if i := strings.LastIndexByte(r.Check, ':'); i >= 0 {
		base, part, hasPart = r.Check[:i], r.Check[i+1:], true
	}
	if want, ok := conditionParts[part]; !hasPart || !ok || z.Circuit != want.circuit || r.StagePart != want.stagePart {
		return fmt.Sprintf("condition circuit mismatch: check %q is not a decomposition's threshold_check (%s, %s) or truncation_check (%s, %s): %s in %s",
			r.Check, circuitBelowThreshold, stage.PartPost, circuitTruncation, stage.PartPre, z.Circuit, r.StagePart)
	}
	in, _ := r.Details[stage.DetailInputCommitment].(string)
	if in == "" {
		return fmt.Sprintf("condition not linked: a proved %s of a decomposition names its input in details.%s", r.StagePart, stage.DetailInputCommitment)
	}
	found, listed, listings := false, false, 0
	var lister *Record
	for i := range v.Records {
		o := &v.Records[i]
		if o.StagePart != stage.PartInference || o.StageType != r.StageType || o.Check != base {
			continue
		}
		lists := false
		if cs, _ := o.Details[stage.DetailConditionCommitments].(map[string]any); cs[part] == r.CommitmentHash {
			lists = true
			listings++
		}
		if o.CommitmentHash == in {
			found = true
			if lists && !listed {
				listed, lister = true, o
			}
		}
	}
	if !found {
		return fmt.Sprintf("condition not linked: details.%s %s is the commitment_hash of no %s inference record of check %q in this VPEC (a condition proved for another input)", stage.DetailInputCommitment, in, r.StageType, base)
	}
	if !listed {
		return fmt.Sprintf("condition not linked: no inference record of check %q on that input lists %s in details.%s.%s (a condition record of another inference)", base, r.CommitmentHash, stage.DetailConditionCommitments, part)
	}
	if listings != 1 {
		return fmt.Sprintf("condition not linked: %s is listed in details.%s.%s by %d inference records of check %q, want exactly 1 (one condition, one inference)", r.CommitmentHash, stage.DetailConditionCommitments, part, listings, base)
	}
	if r.OutputCommitment != "" && r.OutputCommitment != lister.OutputCommitment {
		return fmt.Sprintf("condition not linked: output_commitment %s is not the output_commitment of its inference record (sequence %d), whose output the score was taken from", r.OutputCommitment, lister.Sequence)
	}
	switch z.Circuit {
	case circuitBelowThreshold:
		if t, present := r.Details[stage.DetailThreshold]; present {
			f, isNum := t.(float64)
			q, ok := quantizeProbability(f)
			switch {
			case !isNum:
				return fmt.Sprintf("threshold mismatch: details.threshold is %v, not a number", t)
			case !ok:
				return fmt.Sprintf("threshold mismatch: details.threshold %v is not a probability in [0, 1] (it has no quantisation), the proof is about zk_proof.threshold %s", f, fmtInt(z.Threshold))
			case z.Threshold == nil || q != *z.Threshold:
				return fmt.Sprintf("threshold mismatch: details.threshold %v quantises to %d, the proof is about zk_proof.threshold %s", f, q, fmtInt(z.Threshold))
			}
		}
	case circuitTruncation:
		if m, present := r.Details[stage.DetailMaxTokens]; present {
			f, isNum := m.(float64)
			if !isNum {
				return fmt.Sprintf("max_tokens mismatch: details.max_tokens is %v, not a number", m)
			}
			if z.MaxTokens == nil || float64(*z.MaxTokens) != f {
				return fmt.Sprintf("max_tokens mismatch: details.max_tokens %s, the proof is about zk_proof.max_tokens %s", strconv.FormatFloat(f, 'f', -1, 64), fmtInt(z.MaxTokens))
			}
		}
	}
	return ""
}

// conditionParts maps each proved part of a decomposition (its check's
// suffix after the last ':') to the circuit that proves it and its stage
// part: the threshold condition passes below the threshold, so an
// at-or-above threshold_check proof can never stand for it.
var conditionParts = map[string]struct{ circuit, stagePart string }{
	"threshold_check":  {circuitBelowThreshold, stage.PartPost},
	"truncation_check": {circuitTruncation, stage.PartPre},
}

// notANumber stands, in the link details, for a threshold or max_tokens
// member that is not a JSON number; notAString for a listed condition
// commitment that is not a string; notAnObject for condition_commitments
// that is not an object.
type (
	notANumber  string
	notAString  string
	notAnObject string
)

func fmtInt(p *int64) string {
	if p == nil {
		return "(absent)"
	}
	return fmt.Sprint(*p)
}

// CheckListedConditions checks the other direction of CheckConditionLink:
// every condition commitment an inference record of a decomposition in v
// lists is the commitment_hash of exactly one proved condition record of
// that part of its check, which names this inference's input. It returns
// the problems, each naming the inference record.
func (v *VPEC) CheckListedConditions() []error {
	var out []error
	for _, msg := range listedConditions(v) {
		out = append(out, errors.New(msg))
	}
	return out
}

func listedConditions(v *VPEC) []string {
	var out []string
	for i := range v.Records {
		o := &v.Records[i]
		if bad, ok := o.Details[stage.DetailConditionCommitments].(notAnObject); ok && o.StagePart == stage.PartInference {
			out = append(out, fmt.Sprintf("sequence %d (%s): condition not linked: details.%s is a JSON %s, not an object of commitments", o.Sequence, o.Check, stage.DetailConditionCommitments, string(bad)))
			continue
		}
		cs, _ := o.Details[stage.DetailConditionCommitments].(map[string]any)
		if o.StagePart != stage.PartInference || len(cs) == 0 {
			continue
		}
		parts := make([]string, 0, len(cs))
		for part := range cs {
			parts = append(parts, part)
		}
		slices.Sort(parts)
		for _, part := range parts {
			n := 0
			for j := range v.Records {
				r := &v.Records[j]
				in, _ := r.Details[stage.DetailInputCommitment].(string)
				if r.ZKProof != nil && r.Check == o.Check+":"+part && r.StageType == o.StageType && r.CommitmentHash == cs[part] && in == o.CommitmentHash {
					n++
				}
			}
			if n != 1 {
				out = append(out, fmt.Sprintf("sequence %d (%s): condition not linked: details.%s.%s %v is carried by %d proved %s records of its input, want exactly 1", o.Sequence, o.Check, stage.DetailConditionCommitments, part, cs[part], n, part))
			}
		}
	}
	return out
}

// linkDetails returns the details members the link checks read: of a
// record that carries a zk_proof, its input_commitment, threshold and
// max_tokens; of an inference record, its condition_commitments (string
// members only). The verifier does not decode details otherwise (see
// read.go); nil when there are none.
func linkDetails(rec *canonical.Value) map[string]any {
	d := rec.Get("details")
	if d == nil || d.Kind() != canonical.KindObject {
		return nil
	}
	if sp := rec.Get("stage_part"); rec.Get("zk_proof") == nil && sp != nil && sp.Kind() == canonical.KindString && sp.Str() == stage.PartInference {
		cs := d.Get(stage.DetailConditionCommitments)
		if cs == nil {
			return nil
		}
		if cs.Kind() != canonical.KindObject {
			return map[string]any{stage.DetailConditionCommitments: notAnObject(kindName(cs))}
		}
		listed := map[string]any{}
		for name, c := range cs.Members() {
			if c.Kind() == canonical.KindString {
				listed[name] = c.Str()
			} else {
				listed[name] = notAString("a JSON " + kindName(c))
			}
		}
		return map[string]any{stage.DetailConditionCommitments: listed}
	}
	if rec.Get("zk_proof") == nil {
		return nil
	}
	out := map[string]any{}
	if v := d.Get(stage.DetailInputCommitment); v != nil && v.Kind() == canonical.KindString {
		out[stage.DetailInputCommitment] = v.Str()
	}
	for _, k := range []string{stage.DetailThreshold, stage.DetailMaxTokens} {
		if v := d.Get(k); v != nil && v.Kind() == canonical.KindNumber {
			_, f := v.Number()
			out[k] = f
		} else if v != nil {
			out[k] = notANumber("a JSON " + kindName(v))
		}
	}
	return out
}

// kindName names a JSON value's kind for a message.
func kindName(v *canonical.Value) string {
	switch v.Kind() {
	case canonical.KindObject:
		return "object"
	case canonical.KindArray:
		return "array"
	case canonical.KindString:
		return "string"
	case canonical.KindNumber:
		return "number"
	case canonical.KindBool:
		return "boolean"
	}
	return "null"
}
