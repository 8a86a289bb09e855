package api

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Session kinds (SessionRequest.Kind).
const (
	SessionCheck  = "check"
	SessionReview = "review"
)

// ReviewerKeyRequest is the body of POST /api/v1/reviewers: it registers a
// reviewer's Ed25519 public key.
type ReviewerKeyRequest struct {
	// PublicKey is the SPKI public key, as PEM ("-----BEGIN PUBLIC KEY-----")
	// or as standard base64 of the DER.
	PublicKey string `json:"public_key"`
	// Name optionally names the reviewer, readably.
	Name string `json:"name,omitempty"`
}

// ReviewerKeyResult is the answer of POST /api/v1/reviewers: the registered
// key (registering the same key again answers the same id, Created false).
type ReviewerKeyResult struct {
	ReviewerKeyID string `json:"reviewer_key_id"`
	Name          string `json:"name,omitempty"`
	Created       bool   `json:"created"`
}

// SessionRequest is the body of POST /api/v1/runs/{run_id}/sessions: it
// opens a check or review session (Kind SessionCheck or SessionReview).
type SessionRequest struct {
	Kind       string `json:"kind"`
	Check      string `json:"check"`
	ManifestID string `json:"manifest_id"`
	// ReviewerKeyID and MinDurationSeconds are for review sessions.
	ReviewerKeyID      string `json:"reviewer_key_id,omitempty"`
	MinDurationSeconds int64  `json:"min_duration_seconds,omitempty"`
}

// SessionView is a check or review session as the API returns it
// (docs/API.md, sessions): its RFC 3161 open timestamp and, once closed on
// the input, its close timestamp (timestamps are standard base64 DER).
type SessionView struct {
	SessionID          string `json:"session_id"`
	RunID              string `json:"run_id"`
	Kind               string `json:"kind"`
	Check              string `json:"check"`
	ManifestID         string `json:"manifest_id"`
	ReviewerKeyID      string `json:"reviewer_key_id,omitempty"`
	MinDurationSeconds int64  `json:"min_duration_seconds"`
	OpenedAt           string `json:"opened_at"`
	CheckOpenTST       string `json:"check_open_tst"`
	ClosedAt           string `json:"closed_at,omitempty"`
	CommitmentHash     string `json:"commitment_hash,omitempty"`
	CheckCloseTST      string `json:"check_close_tst,omitempty"`
}

// Closed reports whether the session was closed on an input.
func (s *SessionView) Closed() bool { return s.CheckCloseTST != "" }

// SessionCloseRequest is the body of POST
// /api/v1/runs/{run_id}/sessions/{session_id}/close: it closes a session on
// the commitment hash of the input the check ran on.
type SessionCloseRequest struct {
	CommitmentHash string `json:"commitment_hash"`
}

// CalibrationRequestInput is the body of POST
// /api/v1/registry/calibration-requests (docs/API.md, plus notify_email):
// it asks the service to calibrate a drift profile for a model.
type CalibrationRequestInput struct {
	ONNXModelHash     string   `json:"onnx_model_hash"`
	ModelDescription  string   `json:"model_description,omitempty"`
	HubModelID        string   `json:"hub_model_id,omitempty"`
	DesiredGPUClasses []string `json:"desired_gpu_classes,omitempty"`
	NotifyEmail       string   `json:"notify_email,omitempty"`
}

// CalibrationRequestView is a calibration request as the API returns it
// (docs/API.md, with its status).
type CalibrationRequestView struct {
	RequestID           string   `json:"request_id"`
	Status              string   `json:"status"`
	EstimatedCompletion string   `json:"estimated_completion"`
	NotifyEmail         string   `json:"notify_email,omitempty"`
	ONNXModelHash       string   `json:"onnx_model_hash"`
	HubModelID          string   `json:"hub_model_id,omitempty"`
	DesiredGPUClasses   []string `json:"desired_gpu_classes"`
	ProfileID           string   `json:"profile_id,omitempty"`
	Note                string   `json:"note,omitempty"`
	CreatedAt           string   `json:"created_at"`
	UpdatedAt           string   `json:"updated_at"`
}

// DelegationRequest is the body of POST /api/v1/runs/{run_id}/delegations:
// a description of the delegation (such as {"to": "agent-7"}).
type DelegationRequest struct {
	Delegation map[string]any `json:"delegation"`
}

// DelegationResult is the answer of POST /api/v1/runs/{run_id}/delegations:
// the lineage token and what it binds.
type DelegationResult struct {
	LineageToken   string `json:"lineage_token"`
	RunID          string `json:"run_id"`
	LastSequence   int64  `json:"last_sequence"`
	LastChainHash  string `json:"last_chain_hash"`
	DelegationHash string `json:"delegation_hash"`
	ExpiresAt      string `json:"expires_at"`
}

// ResumeRequest is the body of POST /api/v1/runs/resume.
type ResumeRequest struct {
	LineageToken string `json:"lineage_token"`
}

// LineageType is the type field of a lineage token's payload.
const LineageType = "svc.lineage/v1"

// Lineage is the signed payload of a delegation lineage token
// (DelegationResult.LineageToken, "<base64url payload>.<base64url
// signature>"): a handoff of a run at a precise point of its chain to
// another process or agent. The service signs and checks it; a client
// that cannot reach the service reads it to continue the run offline.
type Lineage struct {
	Type           string `json:"type"` // LineageType
	RunID          string `json:"run_id"`
	OrgID          string `json:"org_id"`
	LastSequence   int64  `json:"last_sequence"`
	LastChainHash  string `json:"last_chain_hash"`
	DelegationHash string `json:"delegation_hash"`
	IssuedAt       string `json:"issued_at"`
	ExpiresAt      string `json:"expires_at"`
	// KeyID is the id of the service signing key that signed the token.
	KeyID string `json:"key_id"`
}

// ValidWorkflowID reports whether s is a workflow id the service accepts:
// 1 to MaxWorkflowIDBytes ASCII letters, digits or . _ : -. The client
// checks it before opening a run, the server when one is opened.
func ValidWorkflowID(s string) bool {
	if s == "" || len(s) > MaxWorkflowIDBytes {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// keyIDPattern matches an API key's public id.
var keyIDPattern = regexp.MustCompile(`^pk_(sb|live)_[0-9a-f]{12}$`)

// KeyID returns the public id of an API key: its environment prefix
// (pk_sb_ or pk_live_) and the first 12 hex digits of the key's SHA-256.
// The service stores and lists keys by it; the client names its queue by it.
func KeyID(key string) string {
	env := vpec.Sandbox
	if e, _ := EnvironmentOf(key); e == vpec.Production {
		env = vpec.Production
	}
	sum := sha256.Sum256([]byte(key))
	return env.KeyPrefix() + hex.EncodeToString(sum[:])[:12]
}

// EnvironmentOf returns the environment an API key (or API key id)
// selects by its prefix (vpec.Environment.KeyPrefix: pk_sb_ for sandbox,
// pk_live_ for production), and false for any other prefix.
func EnvironmentOf(key string) (vpec.Environment, bool) {
	for _, e := range []vpec.Environment{vpec.Sandbox, vpec.Production} {
		if strings.HasPrefix(key, e.KeyPrefix()) {
			return e, true
		}
	}
	return "", false
}

// ValidKeyID reports whether id has the form of an API key id (KeyID).
func ValidKeyID(id string) bool { return keyIDPattern.MatchString(id) }
