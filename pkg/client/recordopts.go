package client

import (
	"crypto/ed25519"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// RecordOption sets an optional parameter of Record (docs/API.md).
type RecordOption func(*recordConfig)

type recordConfig struct {
	output           []byte
	hasOutput        bool
	details          map[string]any
	vis              vpec.Visibility
	level            vpec.ProofLevel
	session          *Session
	review           *reviewConfig
	stageType        string
	stagePart        string
	modelHash        string
	bounded          *vpec.BoundedInference
	manifest         *api.Manifest // WithManifest
	disc             *disclosed    // set by Record from the visibility
	zkProof          *vpec.ZKProof
	outputCommitment string
}

type reviewConfig struct {
	session   *Session
	signer    ReviewSigner
	pub       ed25519.PublicKey
	signature []byte
	display   []byte
	rationale string
}

// WithOutput commits the check's raw output too (output_commitment); the
// output itself is never sent.
func WithOutput(output []byte) RecordOption {
	return func(c *recordConfig) { c.output, c.hasOutput = output, true }
}

// WithDetails attaches metadata sent as-is (it must not hold personal data).
func WithDetails(details map[string]any) RecordOption {
	return func(c *recordConfig) { c.details = details }
}

// WithVisibility sets the visibility mode (default opaque). Only
// Transparent and Selective records send more than commitments: see
// Transparent and WithManifest.
func WithVisibility(v vpec.Visibility) RecordOption {
	return func(c *recordConfig) { c.vis = v }
}

// WithProofLevel sets the record's proof level (default execution;
// mathematical for deterministic conditions, attestation for a
// self-declaration). A review sets witnessed by itself.
func WithProofLevel(l vpec.ProofLevel) RecordOption {
	return func(c *recordConfig) { c.level = l }
}

// WithCheckSession ties the record to a check session from OpenCheck. If
// the session is not closed yet, Record closes it on the record's input
// first (the check-close timestamp is taken at record time).
func WithCheckSession(s *Session) RecordOption {
	return func(c *recordConfig) { c.session = s }
}

// ReviewSigner is a human reviewer's Ed25519 key; *signing.Signer
// implements it. Sign returns an error when the key cannot sign (a token
// that was removed); the record is then not made.
type ReviewSigner interface {
	PublicKey() ed25519.PublicKey
	Sign(msg []byte) ([]byte, error)
}

type funcSigner struct {
	pub  ed25519.PublicKey
	sign func([]byte) []byte
}

func (s funcSigner) PublicKey() ed25519.PublicKey    { return s.pub }
func (s funcSigner) Sign(msg []byte) ([]byte, error) { return s.sign(msg), nil }

// ReviewerFunc adapts a signing function (a hardware token, a remote
// signer) with its public key to a ReviewSigner.
func ReviewerFunc(pub ed25519.PublicKey, sign func(msg []byte) []byte) ReviewSigner {
	return funcSigner{pub: pub, sign: sign}
}

// WithReview makes a witnessed record from a review session (OpenReview):
// the client builds the review block from the session (closing it on the
// input first if needed, which fails before its minimum duration), hashes
// what the reviewer saw and their rationale, and has reviewer sign the
// review statement (vpec.ReviewStatement). Only the hashes are sent.
func WithReview(s *Session, reviewer ReviewSigner, displayContent []byte, rationale string) RecordOption {
	return func(c *recordConfig) {
		c.review = &reviewConfig{session: s, signer: reviewer, display: displayContent, rationale: rationale}
	}
}

// WithReviewerSignature makes a witnessed record from a signature made
// elsewhere: signature is the reviewer's Ed25519 signature over
// Run.ReviewStatement for the same session, result, input, display content
// and rationale.
func WithReviewerSignature(s *Session, pub ed25519.PublicKey, signature []byte, displayContent []byte, rationale string) RecordOption {
	return func(c *recordConfig) {
		c.review = &reviewConfig{session: s, pub: pub, signature: signature, display: displayContent, rationale: rationale}
	}
}

// WithStage sets the stage type (bound_committed_inference or
// open_source_ml) and part (pre_conditions, inference, post_conditions).
func WithStage(stageType, stagePart string) RecordOption {
	return func(c *recordConfig) { c.stageType, c.stagePart = stageType, stagePart }
}

// WithModelHash names the ONNX model (sha256:<hex>) the check ran, so a
// profile published later resolves its model_profile_missing gap.
func WithModelHash(onnxModelHash string) RecordOption {
	return func(c *recordConfig) { c.modelHash = onnxModelHash }
}

// WithBoundedInference attaches the operator-trace evidence of a Bounded
// Inference check (profile, GPU class, model, trace mode, operator count,
// Merkle root) and sets the proof level to operator_bound. The trace itself
// stays with the caller; only these fields are sent.
func WithBoundedInference(bi vpec.BoundedInference) RecordOption {
	return func(c *recordConfig) {
		c.bounded, c.level = &bi, vpec.OperatorBound
		if c.modelHash == "" {
			c.modelHash = bi.ONNXModelHash
		}
	}
}
