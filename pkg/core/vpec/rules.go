package vpec

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
)

// Limits of a record (the service's request limits, pkg/core/api, use the
// same values).
const (
	// MaxCheckBytes and MaxManifestIDBytes bound a record's check name and
	// manifest id, in bytes.
	MaxCheckBytes      = 256
	MaxManifestIDBytes = 256
	// MaxDetailsBytes bounds the canonical (RFC 8785) size of one record's
	// details object. The server refuses larger details and the verifier
	// reports a schema error, so both agree on what a VPEC may carry.
	MaxDetailsBytes = 16384
	// MaxZKProofBytes bounds a zk_proof's decoded proof (a BN254 Groth16
	// proof is 128 bytes compressed, 196 with one commitment).
	MaxZKProofBytes = 1024
	// MaxZKLogits bounds the logits of an mlp_head proof.
	MaxZKLogits = 64
)

// ErrInvalidRecord reports a record that breaks the v1 rules.
var ErrInvalidRecord = errors.New("invalid record")

// Validate checks a record's fields against the v1 rules (formats, enums,
// which blocks go with which proof level) and returns every problem found,
// joined, each naming its field. It does not check the chain.
func (r *Record) Validate() error {
	var errs []error
	checkRecord(r, "record", func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidRecord, fmt.Sprintf(format, a...)))
	})
	return errors.Join(errs...)
}

var stageParts = []string{"", stage.PartPre, stage.PartInference, stage.PartPost}

// checkRecord applies the v1 record rules to r, whose field path is f,
// reporting each problem through bad.
func checkRecord(r *Record, f string, bad func(string, ...any)) {
	if !names.ValidPrefixedID(r.RecordID, "rec_") {
		bad("%s.record_id %q must be rec_ followed by an id, %d bytes at most in all", f, r.RecordID, names.MaxIDBytes)
	}
	if r.Sequence < 1 {
		bad("%s.sequence %d must be at least 1", f, r.Sequence)
	}
	if r.Check == "" || len(r.Check) > MaxCheckBytes {
		bad("%s.check must be 1-%d characters", f, MaxCheckBytes)
	} else if err := names.ValidName(r.Check); err != nil {
		bad("%s.check: %v", f, err)
	}
	if r.ManifestID == "" || len(r.ManifestID) > MaxManifestIDBytes {
		bad("%s.manifest_id must be 1-%d characters", f, MaxManifestIDBytes)
	} else if err := names.ValidName(r.ManifestID); err != nil {
		bad("%s.manifest_id: %v", f, err)
	}
	if r.Details != nil {
		if n := detailsSize(r.Details); n > MaxDetailsBytes {
			bad("%s.details is %d bytes in canonical form, more than %d", f, n, MaxDetailsBytes)
		}
	}
	if !r.CheckResult.Valid() {
		bad("%s.check_result %q is not one of %v", f, r.CheckResult, checkResults)
	}
	if !r.ProofLevel.Valid() {
		bad("%s.proof_level %q is not one of %v", f, r.ProofLevel, proofLevels)
	}
	if !r.Visibility.Valid() {
		bad("%s.visibility %q is not one of %v", f, r.Visibility, visibilities)
	}
	alg, err := commitment.ParseAlgorithm(r.CommitmentHash)
	if err != nil {
		bad("%s.commitment_hash: %v", f, err)
	} else if string(alg) != r.CommitmentAlgorithm {
		bad("%s.commitment_algorithm %q does not match the commitment hash (%s)", f, r.CommitmentAlgorithm, alg)
	}
	if r.OutputCommitment != "" {
		if err := commitment.Validate(r.OutputCommitment); err != nil {
			bad("%s.output_commitment: %v", f, err)
		}
	}
	if r.ONNXModelHash != "" {
		if _, err := commitment.ParseSHA256(r.ONNXModelHash); err != nil {
			bad("%s.onnx_model_hash: %v", f, err)
		}
	}
	if !validTime(r.RecordedAt) {
		bad("%s.recorded_at %q is not an RFC 3339 UTC time (…Z)", f, r.RecordedAt)
	}
	if _, err := commitment.ParseSHA256(r.ChainHash); err != nil {
		bad("%s.chain_hash: %v", f, err)
	}
	if r.StageType != "" && r.StageType != stage.BoundCommittedInference && r.StageType != stage.OpenSourceML && r.StageType != stage.MLPHead {
		bad("%s.stage_type %q is not %s, %s or %s", f, r.StageType, stage.BoundCommittedInference, stage.OpenSourceML, stage.MLPHead)
	}
	if !slices.Contains(stageParts, r.StagePart) {
		bad("%s.stage_part %q is not one of pre_conditions, inference, post_conditions", f, r.StagePart)
	}
	if (r.ProofLevel == Witnessed) != (r.Review != nil) {
		bad("%s: a review block goes with proof_level witnessed and only with it", f)
	}
	if (r.ProofLevel == OperatorBound) != (r.BoundedInference != nil) {
		bad("%s: a bounded_inference block goes with proof_level operator_bound and only with it", f)
	}
	if bi := r.BoundedInference; bi != nil {
		if !profile.ValidID(bi.ProfileID) {
			bad("%s.bounded_inference.profile_id %q is not a profile id", f, bi.ProfileID)
		}
		if !profile.ValidGPUClass(bi.GPUClass) {
			bad("%s.bounded_inference.gpu_class %q is not one of %v", f, bi.GPUClass, profile.GPUClasses())
		}
		if _, err := commitment.ParseSHA256(bi.ONNXModelHash); err != nil {
			bad("%s.bounded_inference.onnx_model_hash: %v", f, err)
		}
		if bi.TraceMode != profile.TraceFull && bi.TraceMode != profile.TraceProduction && bi.TraceMode != profile.TraceResidual {
			bad("%s.bounded_inference.trace_mode %q is not full, production or residual", f, bi.TraceMode)
		}
		if bi.OperatorCount < 1 || bi.OperatorCount > 1<<32 {
			bad("%s.bounded_inference.operator_count %d is out of range", f, bi.OperatorCount)
		}
		if _, err := commitment.ParseSHA256(bi.MerkleRoot); err != nil {
			bad("%s.bounded_inference.merkle_root: %v", f, err)
		}
	}
	checkZKProof(r, f, bad)
	if cs := r.CheckSession; cs != nil {
		if r.Review != nil {
			bad("%s: check_session and review do not go together (a review carries its own session)", f)
		}
		if !names.ValidID(cs.SessionID) {
			bad("%s.check_session.session_id %q is not an id", f, cs.SessionID)
		}
	}
	if rv := r.Review; rv != nil {
		if !names.ValidID(rv.SessionID) {
			bad("%s.review.session_id %q is not an id", f, rv.SessionID)
		}

		if rv.MinDurationSeconds < 0 || rv.MinDurationSeconds > 1<<40 {
			bad("%s.review.min_duration_seconds is out of range", f)
		}
		for name, h := range map[string]string{"display_content_hash": rv.DisplayContentHash, "rationale_hash": rv.RationaleHash} {
			if h != "" {
				if _, err := commitment.Parse(h); err != nil {
					bad("%s.review.%s: %v", f, name, err)
				}
			}
		}
	}
}

// The zk_proof schema (docs/FORMATS.md, "zk_proof block"): the proof
// system, and the circuits a block may name with the statement members
// each takes. These are the wire values; their Go names, and the circuits
// themselves, are pkg/zk/zkverify's (whose tests keep the two in step).
const (
	zkSystem = "groth16-bn254"

	circuitMLPHead        = "mlp_head"              // verifiable_inference: a quantised MLP classifier head
	circuitThreshold      = "threshold_check"       // mathematical: committed score >= threshold
	circuitTruncation     = "truncation_check"      // mathematical: committed token count <= the model's maximum
	circuitBelowThreshold = "below_threshold_check" // mathematical: committed score < threshold (a Bounded Inference check's threshold condition)
)

func checkZKProof(r *Record, f string, bad func(string, ...any)) {
	z := r.ZKProof
	if z == nil {
		return
	}
	f += ".zk_proof"
	if r.ProofLevel != VerifiableInference && r.ProofLevel != Mathematical {
		bad("%s: a zk_proof goes only with proof_level verifiable_inference or mathematical, not %s", f, r.ProofLevel)
	}
	if z.System != zkSystem {
		bad("%s.system %q is not %s", f, z.System, zkSystem)
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
	case circuitMLPHead:
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
	case circuitThreshold, circuitTruncation, circuitBelowThreshold:
		if r.ProofLevel != Mathematical {
			bad("%s: circuit %s proves a condition: proof_level mathematical", f, z.Circuit)
		}
		if r.CheckResult != ResultPass && r.CheckResult != ResultFail {
			bad("%s: a %s proof proves pass or fail, not check_result %s", f, z.Circuit, r.CheckResult)
		}
		if z.Circuit != circuitTruncation {
			uint32Field("threshold", z.Threshold)
			absent("max_tokens", z.MaxTokens != nil)
		} else {
			uint32Field("max_tokens", z.MaxTokens)
			absent("threshold", z.Threshold != nil)
		}
		absent("class", z.Class != nil)
		absent("logits", len(z.Logits) > 0)
	default:
		bad("%s.circuit %q is not one of %s, %s, %s, %s", f, z.Circuit, circuitMLPHead, circuitThreshold, circuitTruncation, circuitBelowThreshold)
	}
}

// detailsSize returns the size of details in canonical (RFC 8785) form. It
// walks the value for a cheap upper bound first and canonicalizes only
// when that bound exceeds MaxDetailsBytes.
func detailsSize(details map[string]any) int {
	if detailsBound(details, 0) <= MaxDetailsBytes {
		return 0
	}
	b, err := canonical.Marshal(details)
	if err != nil {
		return math.MaxInt
	}
	return len(b)
}

// detailsBound is an upper bound of v's canonical size: a string escapes
// to at most 6 bytes per byte, a number takes at most 25 bytes.
func detailsBound(v any, depth int) int {
	if depth > 1000 {
		return math.MaxInt / 2
	}
	switch x := v.(type) {
	case map[string]any:
		n := 2
		for k, e := range x {
			n += 6*len(k) + 4 + detailsBound(e, depth+1)
			if n > MaxDetailsBytes {
				return n
			}
		}
		return n
	case []any:
		n := 2
		for _, e := range x {
			n += 1 + detailsBound(e, depth+1)
			if n > MaxDetailsBytes {
				return n
			}
		}
		return n
	case string:
		return 6*len(x) + 2
	default:
		return 25
	}
}
