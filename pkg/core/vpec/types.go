// Package vpec defines the Verifiable Process Execution Credential (VPEC):
// its v1 wire format, the hash chain over its records, sealing (Ed25519
// signature plus RFC 3161 timestamp) and offline verification.
package vpec

import (
	"slices"

	"github.com/svc-gov/svc/pkg/core/disclosure"
)

// Schema is the value of the schema field of a v1 VPEC.
const Schema = "svc.vpec/v1"

// ProofLevel is how strongly a record's execution is proven.
type ProofLevel string

// Proof levels, strongest first (docs/FORMATS.md).
const (
	Mathematical        ProofLevel = "mathematical"
	VerifiableInference ProofLevel = "verifiable_inference"
	OperatorBound       ProofLevel = "operator_bound"
	Execution           ProofLevel = "execution"
	Witnessed           ProofLevel = "witnessed"
	Attestation         ProofLevel = "attestation"
)

// proofLevels lists the proof levels strongest first.
var proofLevels = [...]ProofLevel{Mathematical, VerifiableInference, OperatorBound, Execution, Witnessed, Attestation}

// ProofLevels returns the proof levels strongest first (a new slice each
// call: the verifier's table cannot be changed through it).
func ProofLevels() []ProofLevel { return slices.Clone(proofLevels[:]) }

// Rank orders levels: 0 is the strongest; -1 means unknown.
func (l ProofLevel) Rank() int { return slices.Index(proofLevels[:], l) }

// Valid reports whether l is a known proof level.
func (l ProofLevel) Valid() bool { return l.Rank() >= 0 }

// Provable reports whether a level counts toward the provable surface:
// mathematical, verifiable_inference and operator_bound.
func (l ProofLevel) Provable() bool { r := l.Rank(); return r >= 0 && r <= OperatorBound.Rank() }

// SurfaceKey is the key of l in provable_surface_breakdown: the level's
// name, except operator_bound which is reported as "bounded_inference".
func (l ProofLevel) SurfaceKey() string {
	if l == OperatorBound {
		return "bounded_inference"
	}
	return string(l)
}

// CheckResult is the outcome of one check (docs/FORMATS.md).
type CheckResult string

// Check results.
const (
	ResultPass          CheckResult = "pass"
	ResultFail          CheckResult = "fail"
	ResultError         CheckResult = "error"
	ResultSkipped       CheckResult = "skipped"
	ResultDegraded      CheckResult = "degraded"
	ResultOverride      CheckResult = "override"
	ResultNotApplicable CheckResult = "not_applicable"
)

var checkResults = [...]CheckResult{ResultPass, ResultFail, ResultError, ResultSkipped, ResultDegraded, ResultOverride, ResultNotApplicable}

// CheckResults returns every check result (a new slice each call).
func CheckResults() []CheckResult { return slices.Clone(checkResults[:]) }

// Valid reports whether r is a known check result.
func (r CheckResult) Valid() bool { return slices.Contains(checkResults[:], r) }

// Visibility says what of a record's data the VPEC discloses (docs/FORMATS.md).
type Visibility string

// Visibility modes.
const (
	Opaque      Visibility = "opaque"
	Selective   Visibility = "selective"
	Transparent Visibility = "transparent"
)

var visibilities = [...]Visibility{Opaque, Selective, Transparent}

// Visibilities returns every visibility mode (a new slice each call).
func Visibilities() []Visibility { return slices.Clone(visibilities[:]) }

// Valid reports whether v is a known visibility mode.
func (v Visibility) Valid() bool { return slices.Contains(visibilities[:], v) }

// Severity is a governance gap's severity (docs/FORMATS.md).
type Severity string

// Severities, most severe first.
const (
	Critical      Severity = "Critical"
	High          Severity = "High"
	Medium        Severity = "Medium"
	Low           Severity = "Low"
	Informational Severity = "Informational"
)

var severities = [...]Severity{Critical, High, Medium, Low, Informational}

// Severities returns every severity, most severe first (a new slice each
// call).
func Severities() []Severity { return slices.Clone(severities[:]) }

// Valid reports whether s is a known severity.
func (s Severity) Valid() bool { return slices.Contains(severities[:], s) }

// Gap types with a fixed severity.
const (
	GapSystemUnavailable   = "system_unavailable"    // High: the service was unreachable at close
	GapModelProfileMissing = "model_profile_missing" // Medium, advisory: no drift profile for the model or GPU class
	GapSequenceMissing     = "sequence_missing"      // High: a record sequence number never reached the service
	GapChainBreak          = "chain_break"           // Critical: a record's chain hash does not follow from its predecessor
	GapEmptyRun            = "empty_run"             // High: the run was closed without a single record
	GapCircuitMissing      = "circuit_missing"       // Medium, advisory: no published circuit for an MLP head, recorded at execution level
)

// GapSeverity returns the fixed severity of a gap type svc defines, or ""
// for any other gap type (whose severity the issuer chooses).
func GapSeverity(gapType string) Severity {
	switch gapType {
	case GapSystemUnavailable, GapSequenceMissing, GapEmptyRun:
		return High
	case GapModelProfileMissing, GapCircuitMissing:
		return Medium
	case GapChainBreak:
		return Critical
	}
	return ""
}

// Environment is sandbox or production, set by the API key prefix.
type Environment string

// Environments and the API key prefixes that select them.
const (
	Sandbox    Environment = "sandbox"
	Production Environment = "production"

	SandboxKeyPrefix    = "pk_sb_"
	ProductionKeyPrefix = "pk_live_"
)

// Stage types (docs/FORMATS.md).
const (
	StageBoundCommittedInference = "bound_committed_inference"
	StageOpenSourceML            = "open_source_ml"
	// StageMLPHead is the inference of an MLP classifier head recorded at
	// execution level because no circuit is published for it (the
	// verifiable_inference fallback); it raises a circuit_missing gap.
	StageMLPHead = "mlp_head"
)

// RaisesCircuitMissing reports whether the record is an MLP head's
// inference recorded without a proof for want of a published circuit.
func (r *Record) RaisesCircuitMissing() bool {
	return r.StageType == StageMLPHead && r.ZKProof == nil
}

// VPEC is a Verifiable Process Execution Credential, v1. JSON names are the
// wire names; see docs/FORMATS.md.
type VPEC struct {
	Schema                   string             `json:"schema"`
	VPECID                   string             `json:"vpec_id"`
	RunID                    string             `json:"run_id"`
	WorkflowID               string             `json:"workflow_id"`
	OrgID                    string             `json:"org_id"`
	IssuedAt                 string             `json:"issued_at"`
	OpenedAt                 string             `json:"opened_at,omitempty"` // the run's open time (older VPECs lack it); see checkTime
	Environment              Environment        `json:"environment"`
	APIKeyID                 string             `json:"api_key_id"`
	ProofLevelFloor          ProofLevel         `json:"proof_level_floor"`
	ProofLevelBreakdown      map[string]int64   `json:"proof_level_breakdown"`
	ProvableSurface          float64            `json:"provable_surface"`
	ProvableSurfaceBreakdown map[string]float64 `json:"provable_surface_breakdown"`
	TotalChecksRun           int64              `json:"total_checks_run"`
	ChecksPassed             int64              `json:"checks_passed"`
	ChecksFailed             int64              `json:"checks_failed"`
	Gaps                     []Gap              `json:"gaps"`
	ChainIntact              bool               `json:"chain_intact"`
	IsClean                  bool               `json:"is_clean"`
	MerkleRoot               string             `json:"merkle_root"`
	Records                  []Record           `json:"records"`
	SigningKeyID             string             `json:"signing_key_id"`
	Signature                string             `json:"signature"`
	TimestampRFC3161         string             `json:"timestamp_rfc3161"`
}

// Gap is a governance gap found in a run (docs/FORMATS.md).
type Gap struct {
	GapID    string   `json:"gap_id"`
	GapType  string   `json:"gap_type"`
	Severity Severity `json:"severity"`
	Check    *string  `json:"check"`
	Sequence *int64   `json:"sequence"`
	// SequenceEnd is the last missing sequence (inclusive) of a
	// sequence_missing gap, whose Sequence is the first; present on
	// sequence_missing gaps and only on them.
	SequenceEnd *int64 `json:"sequence_end,omitempty"`
	Timestamp   string `json:"timestamp"`
}

// Record is one check execution as the VPEC carries it: metadata and
// commitment hashes only, never raw data.
type Record struct {
	RecordID            string            `json:"record_id"`
	Sequence            int64             `json:"sequence"`
	Check               string            `json:"check"`
	ManifestID          string            `json:"manifest_id"`
	CheckResult         CheckResult       `json:"check_result"`
	ProofLevel          ProofLevel        `json:"proof_level"`
	CommitmentAlgorithm string            `json:"commitment_algorithm"`
	CommitmentHash      string            `json:"commitment_hash"`
	OutputCommitment    string            `json:"output_commitment,omitempty"`
	ONNXModelHash       string            `json:"onnx_model_hash,omitempty"`
	Visibility          Visibility        `json:"visibility"`
	RecordedAt          string            `json:"recorded_at"`
	StageType           string            `json:"stage_type,omitempty"`
	StagePart           string            `json:"stage_part,omitempty"`
	Details             map[string]any    `json:"details,omitempty"`
	Review              *Review           `json:"review,omitempty"`
	CheckSession        *CheckSession     `json:"check_session,omitempty"`
	BoundedInference    *BoundedInference `json:"bounded_inference,omitempty"`
	// Disclosures of a transparent or selective record (disclose.go,
	// docs/FORMATS.md "Disclosures"); absent from opaque records.
	DisclosedInput  string                  `json:"disclosed_input,omitempty"`
	DisclosedOutput string                  `json:"disclosed_output,omitempty"`
	FieldDigests    []string                `json:"field_digests,omitempty" maxitems:"256"`
	Disclosures     []disclosure.Disclosure `json:"disclosures,omitempty" maxitems:"64"`
	Manifest        *Manifest               `json:"manifest,omitempty"`
	ZKProof         *ZKProof                `json:"zk_proof,omitempty"`
	ChainHash       string                  `json:"chain_hash"`
}

// Review is the witnessed-review evidence of a record: who signed, what they
// saw (by hash), and RFC 3161 timestamps of when the review opened and closed.
type Review struct {
	SessionID          string `json:"session_id"`
	ReviewerKeyID      string `json:"reviewer_key_id"`
	ReviewerPublicKey  string `json:"reviewer_public_key"`
	ReviewerSignature  string `json:"reviewer_signature"`
	DisplayContentHash string `json:"display_content_hash,omitempty"`
	RationaleHash      string `json:"rationale_hash,omitempty"`
	MinDurationSeconds int64  `json:"min_duration_seconds"`
	CheckOpenTST       string `json:"check_open_tst"`
	CheckCloseTST      string `json:"check_close_tst"`
}

// CheckSession is the evidence of a check that ran inside a session the
// service opened: RFC 3161 timestamps of when it opened and when it closed
// on the record's input. (Witnessed records carry theirs in Review.)
type CheckSession struct {
	SessionID     string `json:"session_id"`
	CheckOpenTST  string `json:"check_open_tst"`
	CheckCloseTST string `json:"check_close_tst"`
}

// RaisesProfileMissing reports whether the record is the inference of an
// open_source_ml stage (a model without a drift profile for its GPU
// class), which raises a model_profile_missing gap: one per inference,
// not one per pre- or post-condition.
func (r *Record) RaisesProfileMissing() bool {
	return r.StageType == StageOpenSourceML && (r.StagePart == "" || r.StagePart == StagePartInference)
}

// DetailGPUClass is the details key under which the inference record of a
// classifier check names the GPU class it ran on (an open_source_ml record
// has no bounded_inference block to say it): a profile that covers the
// model but not that class does not resolve its model_profile_missing gap.
const DetailGPUClass = "gpu_class"

// Stage parts of the boundary rule decomposition (docs/FORMATS.md).
const (
	StagePartPre       = "pre_conditions"
	StagePartInference = "inference"
	StagePartPost      = "post_conditions"
)

// BoundedInference is the operator-trace evidence of an operator_bound record.
type BoundedInference struct {
	ProfileID     string `json:"profile_id"`
	GPUClass      string `json:"gpu_class"`
	ONNXModelHash string `json:"onnx_model_hash"`
	TraceMode     string `json:"trace_mode"`
	OperatorCount int64  `json:"operator_count"`
	MerkleRoot    string `json:"merkle_root"`
}

// Trace modes of a Bounded Inference record.
const (
	TraceFull       = "full"
	TraceProduction = "production"
	TraceResidual   = "residual"
)
