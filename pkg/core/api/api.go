// Package api holds the HTTP wire types of the svc API v1, shared by the
// server, the Go client and the command line. JSON names are snake_case;
// times are RFC 3339 UTC strings. docs/API.md documents every endpoint.
package api

import (
	"time"

	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Prefix is the path prefix of API v1.
const Prefix = "/api/v1"

// TrustBundlePath is where a service publishes its trust bundle (the
// {trust_root_url} of the specification).
const TrustBundlePath = "/.well-known/svc/trust-bundle.pem"

// TrustRootPath is where a service publishes its current trust root
// (svc.trust-root/v1, docs/KEYS.md).
const TrustRootPath = "/.well-known/svc/trust-root.json"

// Error is the body of every non-2xx response.
type Error struct {
	// Code is a stable, machine-readable error code (see the Code* constants).
	Code string `json:"code"`
	// Message says what is wrong and how to fix it.
	Message string `json:"message"`
	// Field names the request field at fault; "" when there is none (always present).
	Field string `json:"field"`
}

// ErrorBody wraps Error as {"error": {...}}.
type ErrorBody struct {
	Error Error `json:"error"`
}

// Error codes.
const (
	CodeBadRequest           = "bad_request"            // 400: malformed JSON, unknown or invalid field
	CodeUnauthorized         = "unauthorized"           // 401: missing or unknown API key
	CodeNotFound             = "not_found"              // 404: no such resource in the caller's org
	CodeNoEndpoint           = "no_endpoint"            // 404: no such method and path in API v1
	CodeRunIDTaken           = "run_id_taken"           // 409: a proposed run id belongs to another run
	CodeRunSealed            = "run_sealed"             // 409: record or close on a closed run
	CodeSequenceConflict     = "sequence_conflict"      // 409: a different record already holds this sequence
	CodeChainMismatch        = "chain_mismatch"         // 422: chain_hash does not follow from the stored chain
	CodeReviewTooShort       = "review_too_short"       // 422: review closed before its minimum duration
	CodeInvalidSignature     = "invalid_signature"      // 422: reviewer signature does not verify
	CodeTokenInvalid         = "lineage_invalid"        // 422: forged, expired or mismatched lineage token
	CodePayloadTooLarge      = "payload_too_large"      // 413
	CodeRateLimited          = "rate_limited"           // 429 (with Retry-After)
	CodeUnsupportedMedia     = "unsupported_media"      // 415: body is not application/json (UTF-8, no Content-Encoding)
	CodeInternal             = "internal"               // 500
	CodeServiceNotReady      = "not_ready"              // 503 from /readyz
	CodeServiceBusy          = "service_busy"           // 503 (with Retry-After): other large VPECs fill the service's byte budget
	CodeTimestampFailed      = "timestamp_failed"       // 502: no RFC 3161 authority answered
	CodeSigningFailed        = "signing_failed"         // 503: the service key (HSM, KMS) did not sign; close again to retry
	CodeProfileUnverified    = "profile_unverified"     // 422: a profile to publish is not validly signed
	CodeProfileMismatch      = "profile_mismatch"       // 422: a Bounded Inference record the named profile does not cover
	CodeProofInvalid         = "proof_invalid"          // 422: a zk_proof whose circuit is not published or which does not verify (field zk_proof)
	CodeClaimWithoutEvidence = "claim_without_evidence" // 422: a proof level the record carries no evidence for (field proof_level)
	CodeEnvironmentMismatch  = "environment_mismatch"   // 403: a key acts on a run of the other environment (sandbox vs production)
	CodeSessionUsed          = "session_used"           // 409: a check or review session already backs another record
	CodeRunTooLarge          = "run_too_large"          // 422: the run holds the maximum records or bytes; close it and open another
	CodeNotImplemented       = "not_implemented"        // 501
	CodeMethodNotAllowed     = "method_not_allowed"     // 405
	CodeDisclosureInvalid    = "disclosure_invalid"     // 422: a disclosure the record's visibility or manifest does not allow, or that does not match its commitment
	CodeLogUnavailable       = "log_unavailable"        // 503: the VPEC is issued and stored but its transparency log entry could not be appended; close again (same Idempotency-Key) or GET its receipt
	CodeReceiptPending       = "receipt_pending"        // 503 (with Retry-After): no checkpoint covers the VPEC's log entry yet
)

// OpenRunRequest is the body of POST /api/v1/runs.
type OpenRunRequest struct {
	// RunID optionally proposes the run's id (run_<uuid v7 or v4>), so a client
	// can open a run while the service is unreachable and create it later:
	// opening the same id again with the same workflow returns that run.
	RunID              string   `json:"run_id,omitempty"`
	WorkflowID         string   `json:"workflow_id,omitempty"` // "default" when absent
	SurfaceID          string   `json:"surface_id,omitempty"`
	Policy             []string `json:"policy,omitempty"`
	ProcessContextHash string   `json:"process_context_hash,omitempty"`
	PolicyPackID       string   `json:"policy_pack_id,omitempty"`
	// OpenedAt optionally gives when the client opened the run, by its
	// clock (RFC 3339 UTC): the service takes it as the run's opened_at
	// when it is earlier than its own clock, so that records made while
	// it was unreachable (queued, delivered after the open) are not dated
	// before the run. It may be at most MaxOpenedAtAge earlier (an
	// earlier time is taken as that bound) and not more than the record
	// skew later.
	OpenedAt string `json:"opened_at,omitempty"`
}

// MaxOpenedAtAge is how long before the service receives an open the
// client's opened_at may be: the longest a client's queue may hold a run
// opened while the service was unreachable without its records being
// refused as older than the run.
const MaxOpenedAtAge = 30 * 24 * time.Hour

// Run is a run as the API returns it.
type Run struct {
	RunID              string           `json:"run_id"`
	WorkflowID         string           `json:"workflow_id"`
	OrgID              string           `json:"org_id"`
	SurfaceID          string           `json:"surface_id,omitempty"`
	PolicyPackID       string           `json:"policy_pack_id,omitempty"`
	PolicySnapshotHash string           `json:"policy_snapshot_hash"`
	ProcessContextHash string           `json:"process_context_hash,omitempty"`
	Environment        vpec.Environment `json:"environment"`
	Status             string           `json:"status"` // "open" or "sealed"
	OpenedAt           string           `json:"opened_at"`
	ClosedAt           string           `json:"closed_at,omitempty"`
	RecordCount        int64            `json:"record_count"`
	// RecordBytes is the size of the run's records as stored: what its
	// close reads and its VPEC holds (a client scales its close timeout
	// with it).
	RecordBytes   int64  `json:"record_bytes"`
	LastSequence  int64  `json:"last_sequence"`
	LastChainHash string `json:"last_chain_hash"`
	VPECID        string `json:"vpec_id,omitempty"`
}

// Run statuses.
const (
	RunOpen   = "open"
	RunSealed = "sealed"
)

// RecordRequest is the body of POST /api/v1/runs/{run_id}/records: one
// record exactly as it will appear in the VPEC, chain hash included (the
// client computes the chain so records can be queued offline).
type RecordRequest = vpec.Record

// RecordResult is the response to a record (docs/API.md).
type RecordResult struct {
	RecordID            string          `json:"record_id"`
	Sequence            int64           `json:"sequence"`
	CommitmentHash      string          `json:"commitment_hash"`
	OutputCommitment    *string         `json:"output_commitment"`
	CommitmentAlgorithm string          `json:"commitment_algorithm"`
	ProofLevel          vpec.ProofLevel `json:"proof_level"`
	RecordedAt          string          `json:"recorded_at"`
	ChainHash           string          `json:"chain_hash"`
	// Queued is true only in client results: the service was unreachable
	// and the record waits in the local queue.
	Queued bool `json:"queued"`
	// Duplicate is true when the service already held this exact record
	// (an idempotent retry).
	Duplicate bool `json:"duplicate,omitempty"`
	// AllDisclosures is set only in client results of selective records:
	// every field's disclosure, salts included, undisclosed fields too.
	// It is never sent; keep it to open an undisclosed field later to
	// whoever may see it (its digest is in the record's field_digests).
	AllDisclosures []disclosure.Disclosure `json:"-"`
}

// MaxBatchRecords is the most records one batch append (POST
// /api/v1/runs/{run_id}/records:batch) carries; its body is bounded like
// every request body (the server's body limit, 1 MiB by default).
const MaxBatchRecords = 1000

// RecordBatch is the body of POST /api/v1/runs/{run_id}/records:batch:
// 1 to MaxBatchRecords records of the run, each exactly as the single
// append takes it, in strictly increasing sequence order (docs/API.md).
type RecordBatch struct {
	Records []vpec.Record `json:"records"`
}

// RecordBatchResult is the response to a batch append: one RecordResult
// per record, in the batch's order.
type RecordBatchResult struct {
	Records []RecordResult `json:"records"`
}

// ManifestStage is one stage of a check manifest (docs/API.md): the
// document type vpec.ManifestStage, whose disclose list says which input
// fields a selective record of the stage may disclose.
type ManifestStage = vpec.ManifestStage

// Manifest is a check manifest to register.
type Manifest struct {
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Stages  []ManifestStage `json:"stages"`
}

// WithEmptyLists returns m with nil lists as empty ones: the wire form has
// [] where a Go caller left a list nil (null is refused), so a manifest
// built in Go registers, and hashes, as its JSON form with [] does.
func (m Manifest) WithEmptyLists() Manifest {
	stages := make([]ManifestStage, len(m.Stages))
	for i, st := range m.Stages {
		if st.RegulatoryReferences == nil {
			st.RegulatoryReferences = []string{}
		}
		stages[i] = st
	}
	m.Stages = stages
	return m
}

// ManifestRegistration is the result of registering a manifest.
type ManifestRegistration struct {
	ManifestID string `json:"manifest_id"`
	Name       string `json:"name"`
	Created    bool   `json:"created"`
}

// ProfileList is the body of GET /api/v1/registry/profiles (docs/API.md).
type ProfileList struct {
	Profiles []ProfileSummary `json:"profiles"`
}

// ProfileSummary is a profile without calibration_passes and operators.
type ProfileSummary struct {
	ProfileID            string   `json:"profile_id"`
	ModelClass           string   `json:"model_class"`
	Architecture         string   `json:"architecture"`
	CalibratedGPUClasses []string `json:"calibrated_gpu_classes"`
	CalibrationDate      string   `json:"calibration_date"`
	SafetyMargin         float64  `json:"safety_margin"`
	ProfileSignature     string   `json:"profile_signature"`
	SignedBy             string   `json:"signed_by"`
}

// SummaryOf returns the list view of a profile.
func SummaryOf(p *profile.Profile) ProfileSummary {
	return ProfileSummary{
		ProfileID: p.ProfileID, ModelClass: p.ModelClass, Architecture: p.Architecture,
		CalibratedGPUClasses: p.CalibratedGPUClasses, CalibrationDate: p.CalibrationDate,
		SafetyMargin: p.SafetyMargin, ProfileSignature: p.ProfileSignature, SignedBy: p.SignedBy,
	}
}

// Lookup is the body of GET /api/v1/registry/lookup (docs/API.md).
type Lookup struct {
	Found            bool   `json:"found"`
	ProfileID        string `json:"profile_id,omitempty"`
	ModelClass       string `json:"model_class,omitempty"`
	Architecture     string `json:"architecture,omitempty"`
	ProfileSignature string `json:"profile_signature,omitempty"`
	SignedBy         string `json:"signed_by,omitempty"`
}

// Health is the body of /healthz and /readyz.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version,omitempty"`
	Detail  string `json:"detail,omitempty"`
}
