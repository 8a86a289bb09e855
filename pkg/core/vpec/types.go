// Package vpec is the v1 format of the Verifiable Process Execution
// Credential (VPEC): what an issuer and a verifier both need and nothing
// more. It holds the document's types and enums, reads a document strictly
// (Parse: the shape scan, the strict decode and the v1 rules; Record.Validate
// for one record), and computes the bytes that are signed (SignedBytes),
// chained (Genesis, NextChainHash, RecordBytes, VerifyChain), put under
// the Merkle root (MerkleRoot) and timestamped in a witnessed review
// (ReviewStatement, CheckOpenData, CheckCloseData), in the one time format
// (ParseTime, FormatTime).
//
// The rest lives beside it: building and sealing a VPEC in pkg/core/issue,
// verifying one offline in pkg/core/verify (one file per named check), the
// gap types and severities in pkg/core/gap, the stage vocabulary of a
// decomposition in pkg/core/stage, the rules for names and ids in
// pkg/core/names, and how a layer of reading untrusted JSON hands its
// problems to the next in pkg/core/document's doc comment.
package vpec

import (
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/stage"
)

// Schema is the value of the schema field of a v1 VPEC.
const Schema = "svc.vpec/v1"

// OfflineSchema is the schema of an unsigned offline VPEC: the local copy a
// client writes when it closes a run while the service is unreachable
// (docs/FORMATS.md, "Unsigned offline VPEC"). It has the members of a v1
// VPEC, with signing_key_id, signature and timestamp_rfc3161 empty. It is
// not a credential: the verifier reports it as UNSIGNED OFFLINE VPEC,
// never VALID, and names the command that fetches the signed one.
const OfflineSchema = "svc.vpec.unsigned-offline/v1"

// VPEC is a Verifiable Process Execution Credential, v1. JSON names are the
// wire names; see docs/FORMATS.md.
type VPEC struct {
	Schema                   string             `json:"schema"`
	VPECID                   string             `json:"vpec_id"`
	RunID                    string             `json:"run_id"`
	WorkflowID               string             `json:"workflow_id"`
	OrgID                    string             `json:"org_id"`
	IssuedAt                 string             `json:"issued_at"`
	OpenedAt                 string             `json:"opened_at,omitempty"` // the run's open time (older VPECs lack it); see the verifier's time check
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

// Gap is a governance gap found in a run (docs/FORMATS.md, "Gaps"; the
// gap types svc defines are pkg/core/gap's).
type Gap struct {
	GapID    string       `json:"gap_id"`
	GapType  string       `json:"gap_type"`
	Severity gap.Severity `json:"severity"`
	Check    *string      `json:"check"`
	Sequence *int64       `json:"sequence"`
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
	StageType           string            `json:"stage_type,omitempty"` // pkg/core/stage's stage types
	StagePart           string            `json:"stage_part,omitempty"` // pkg/core/stage's parts
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

// BoundedInference is the operator-trace evidence of an operator_bound
// record. TraceMode is one of pkg/core/profile's trace modes.
type BoundedInference struct {
	ProfileID     string `json:"profile_id"`
	GPUClass      string `json:"gpu_class"`
	ONNXModelHash string `json:"onnx_model_hash"`
	TraceMode     string `json:"trace_mode"`
	OperatorCount int64  `json:"operator_count"`
	MerkleRoot    string `json:"merkle_root"`
}

// ZKProof is the zero-knowledge proof a verifiable_inference or
// mathematical record carries (docs/FORMATS.md, "Proofs in records"). It
// carries no vector of public inputs: the verifier rebuilds them from the
// record's own fields (the commitment hash, the check result, the model
// hash and the statement fields here), so the proof is about what the
// record says or it fails. The circuits and their Go names are
// pkg/zk/zkverify's; rules.go holds the schema of each.
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

// RaisesCircuitMissing reports whether the record is an MLP head's
// inference recorded without a proof for want of a published circuit.
func (r *Record) RaisesCircuitMissing() bool {
	return r.StageType == stage.MLPHead && r.ZKProof == nil
}

// RaisesProfileMissing reports whether the record is the inference of an
// open_source_ml stage (a model without a drift profile for its GPU
// class), which raises a model_profile_missing gap: one per inference,
// not one per pre- or post-condition.
func (r *Record) RaisesProfileMissing() bool {
	return r.StageType == stage.OpenSourceML && (r.StagePart == "" || r.StagePart == stage.PartInference)
}
