package client

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// RecordResult is the result of a record (docs/API.md). Queued is true when
// the service was unreachable and the record waits in the durable queue.
type RecordResult = api.RecordResult

// Record records one check execution. input (and the output, display
// content and rationale of the options) are hashed here; only commitment
// hashes and metadata are sent, except what the record's visibility
// discloses: a Transparent record sends its raw input and output, a
// Selective one the input fields its manifest declares (see Selective). The record is chained onto the run and
// sent; if the service is unreachable, or earlier entries of the run still
// wait in the queue, it is appended to the durable queue and the result
// has Queued true (no error). Errors: ErrRunSealed after Close (or when the
// service says the run is sealed), ErrInvalidRecord for parameters that
// break the record rules, *APIError when the service refuses the record,
// and session errors (a session that cannot be closed); nothing is
// recorded then.
func (r *Run) Record(ctx context.Context, check, manifestID string, result vpec.CheckResult, input []byte, opts ...RecordOption) (*RecordResult, error) {
	rec, res, err := r.recordCall(ctx, check, manifestID, result, input, opts)
	if err != nil {
		return nil, err
	}
	// The logger runs after every lock is released: it may call the client.
	r.p.emit(rec, r.id, r.workflowID)
	return res, nil
}

func (r *Run) recordCall(ctx context.Context, check, manifestID string, result vpec.CheckResult, input []byte, opts []RecordOption) (*vpec.Record, *RecordResult, error) {
	p := r.p
	if err := p.enter(); err != nil {
		return nil, nil, err
	}
	defer p.exit()
	c, h, err := prepareRecord(check, manifestID, input, opts)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record(ctx, check, manifestID, result, &c, h)
}

// prepareRecord applies a record's options and computes the commitments
// of its raw data (which stops here).
func prepareRecord(check, manifestID string, input []byte, opts []RecordOption) (recordConfig, hashes, error) {
	var c recordConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	// The raw data stops here: only commitments leave, and what the
	// record's visibility discloses (disclose.go).
	h := hashes{input: commitment.String(input)}
	var err error
	if c.disc, h.input, err = disclose(&c, check, manifestID, input, h.input); err != nil {
		return c, h, fmt.Errorf("svc client: record %s: %w", check, err)
	}
	if c.hasOutput {
		h.output = commitment.String(c.output)
	}
	if c.outputCommitment != "" {
		if _, err := commitment.Parse(c.outputCommitment); err != nil || c.hasOutput {
			return c, h, fmt.Errorf("%w: WithOutputCommitment takes a commitment hash and does not go with WithOutput", ErrInvalidRecord)
		}
		h.output = c.outputCommitment
	}
	if c.review != nil {
		if c.review.display != nil {
			h.display = commitment.String(c.review.display)
		}
		if c.review.rationale != "" {
			h.rationale = commitment.String([]byte(c.review.rationale))
		}
	}
	return c, h, nil
}

// hashes are the commitments of a record's raw data.
type hashes struct {
	input, output, display, rationale string
	// algorithm of the input commitment: sha256 unless the caller
	// committed the input itself (RecordCommitted).
	algorithm commitment.Algorithm
}

// record builds, chains and sends (or queues) a record; r.mu is held.
func (r *Run) record(ctx context.Context, check, manifestID string, result vpec.CheckResult, c *recordConfig, h hashes) (*vpec.Record, *RecordResult, error) {
	p := r.p
	if r.sealed {
		return nil, nil, fmt.Errorf("svc client: record %s on run %s: %w", check, r.id, ErrRunSealed)
	}
	rec, body, next, err := r.buildRecord(ctx, check, manifestID, result, c, h, r.seq+1, r.prev)
	if err != nil {
		return nil, nil, err
	}
	p.autoFlush(ctx)
	// Order: while earlier entries of the run wait in the queue, this one
	// waits behind them.
	queued := p.down.Load() || p.q.pendingFor(r.id) > 0
	res := &RecordResult{}
	if !queued {
		data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs/"+url.PathEscape(r.id)+"/records", body)
		switch {
		case err == nil:
			if json.Unmarshal(data, res) != nil || res.RecordID != rec.RecordID {
				// Not the service's answer (a proxy's page?): queue the
				// record; delivering it again is idempotent.
				queued = true
			}
		case unreachable(err):
			p.noteFailure(err)
			queued = true
		case errors.Is(err, ErrRunSealed):
			r.sealed = true
			return nil, nil, fmt.Errorf("svc client: record %s on run %s: %w", check, r.id, err)
		default:
			return nil, nil, fmt.Errorf("svc client: record %s: %w", check, err)
		}
	}
	if queued {
		if err := p.q.append(kindRecord, r.id, body); err != nil {
			return nil, nil, fmt.Errorf("svc client: record %s: the service is unreachable and the queue failed: %w", check, err)
		}
		res = queuedResult(rec)
	}
	if c.disc != nil && c.disc.split != nil {
		res.AllDisclosures = c.disc.split.All
	}
	r.seq, r.prev, r.lastCommitment = rec.Sequence, next, rec.CommitmentHash
	r.bodies = append(r.bodies, body)
	return rec, res, nil
}

// queuedResult is the result of a record waiting in the queue.
func queuedResult(rec *vpec.Record) *RecordResult {
	res := &RecordResult{RecordID: rec.RecordID, Sequence: rec.Sequence, CommitmentHash: rec.CommitmentHash,
		CommitmentAlgorithm: rec.CommitmentAlgorithm, ProofLevel: rec.ProofLevel, RecordedAt: rec.RecordedAt,
		ChainHash: rec.ChainHash, Queued: true}
	if rec.OutputCommitment != "" {
		oc := rec.OutputCommitment
		res.OutputCommitment = &oc
	}
	return res
}

// buildRecord builds the record at sequence seq chained onto prev and its
// body; next is its chain hash. r.mu is held; nothing is sent.
func (r *Run) buildRecord(ctx context.Context, check, manifestID string, result vpec.CheckResult, c *recordConfig, h hashes, seq int64, prev [32]byte) (rec *vpec.Record, body []byte, next [32]byte, err error) {
	rec = &vpec.Record{
		RecordID: names.NewOrderedID("rec_", time.Now()), Sequence: seq, Check: check, ManifestID: manifestID,
		CheckResult: result, ProofLevel: c.level, CommitmentAlgorithm: string(commitment.SHA256), ZKProof: c.zkProof,
		CommitmentHash: h.input, OutputCommitment: h.output, ONNXModelHash: c.modelHash, Visibility: c.vis,
		StageType: c.stageType, StagePart: c.stagePart, Details: c.details, BoundedInference: c.bounded,
	}
	if h.algorithm != "" {
		rec.CommitmentAlgorithm = string(h.algorithm)
	}
	if rec.ProofLevel == "" {
		rec.ProofLevel = vpec.Execution
	}
	if rec.Visibility == "" {
		rec.Visibility = vpec.Opaque
	}
	if err := c.disc.apply(rec); err != nil {
		return nil, nil, next, fmt.Errorf("svc client: record %s: %w", check, err)
	}
	invalid := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidRecord, fmt.Sprintf(format, a...))
	}
	switch {
	case !result.Valid():
		return nil, nil, next, invalid("check result %q is not one of %v", result, vpec.CheckResults())
	case check == "" || len(check) > api.MaxCheckBytes || manifestID == "" || len(manifestID) > api.MaxManifestIDBytes:
		return nil, nil, next, invalid("check and manifest id must be 1-%d characters", min(api.MaxCheckBytes, api.MaxManifestIDBytes))
	case rec.ProofLevel == vpec.VerifiableInference && c.zkProof == nil:
		return nil, nil, next, invalid("proof level verifiable_inference needs a zero-knowledge proof: use WithZKProof (pkg/client/zkprove proves MLP heads)")
	case rec.ProofLevel == vpec.Witnessed && c.review == nil:
		return nil, nil, next, invalid("proof level witnessed needs a review: use WithReview")
	case c.review != nil && c.level != "" && c.level != vpec.Witnessed:
		return nil, nil, next, invalid("a reviewed record is at proof level witnessed, not %s", c.level)
	case c.review != nil && c.session != nil:
		return nil, nil, next, invalid("WithReview and WithCheckSession do not go together (a review carries its own session)")
	}
	var signer ReviewSigner
	var reviewPub ed25519.PublicKey
	if rv := c.review; rv != nil {
		s := rv.session
		if err := r.readySession(ctx, s, api.SessionReview, check, manifestID, h.input); err != nil {
			return nil, nil, next, err
		}
		pub := rv.pub
		if rv.signer != nil {
			pub = rv.signer.PublicKey()
			signer = rv.signer
		}
		reviewPub = pub
		if len(pub) != ed25519.PublicKeySize {
			return nil, nil, next, invalid("the review needs the reviewer's Ed25519 public key")
		}
		if id := signing.KeyID(pub); id != s.ReviewerKeyID {
			return nil, nil, next, invalid("the reviewer key (id %s) is not the one the review session was opened for (%s)", id, s.ReviewerKeyID)
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, nil, next, invalid("reviewer public key: %v", err)
		}
		rec.ProofLevel = vpec.Witnessed
		rec.Review = &vpec.Review{SessionID: s.SessionID, ReviewerKeyID: s.ReviewerKeyID,
			ReviewerPublicKey: base64.StdEncoding.EncodeToString(der), DisplayContentHash: h.display, RationaleHash: h.rationale,
			MinDurationSeconds: s.MinDurationSeconds, CheckOpenTST: s.CheckOpenTST, CheckCloseTST: s.CheckCloseTST}
	}
	if s := c.session; s != nil {
		if err := r.readySession(ctx, s, api.SessionCheck, check, manifestID, h.input); err != nil {
			return nil, nil, next, err
		}
		rec.CheckSession = &vpec.CheckSession{SessionID: s.SessionID, CheckOpenTST: s.CheckOpenTST, CheckCloseTST: s.CheckCloseTST}
	}
	rec.RecordedAt = vpec.FormatTime(time.Now())
	if rv := c.review; rv != nil {
		stmt, err := vpec.ReviewStatement(r.id, rec)
		if err != nil {
			return nil, nil, next, invalid("review statement: %v", err)
		}
		sig := rv.signature
		if signer != nil {
			if sig, err = signer.Sign(stmt); err != nil {
				return nil, nil, next, invalid("sign the review statement: %v", err)
			}
		}
		if err := signing.Verify(reviewPub, stmt, sig); err != nil {
			return nil, nil, next, invalid("the reviewer signature does not verify over the review statement (Run.ReviewStatement): %v", err)
		}
		rec.Review.ReviewerSignature = signing.FormatSignature(sig)
	}
	jcs, err := vpec.RecordBytes(rec)
	if err != nil {
		return nil, nil, next, invalid("%v", err)
	}
	next = vpec.NextChainHash(prev, jcs)
	rec.ChainHash = commitment.OfSHA256(next).String()
	if err = rec.Validate(); err != nil {
		return nil, nil, next, fmt.Errorf("svc client: record %s: %w", check, err)
	}
	if body, err = document.Marshal(rec); err != nil {
		return nil, nil, next, invalid("%v", err)
	}
	return rec, body, next, nil
}

// ReviewStatement returns the bytes a reviewer signs for a witnessed record
// of this run (vpec.ReviewStatement), for signing outside the process with
// WithReviewerSignature. Only hashes of input, display content and
// rationale enter it.
func (r *Run) ReviewStatement(s *Session, result vpec.CheckResult, input, displayContent []byte, rationale string) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: no review session", ErrInvalidRecord)
	}
	rec := &vpec.Record{Check: s.Check, ManifestID: s.ManifestID, CheckResult: result, CommitmentHash: commitment.String(input),
		Review: &vpec.Review{SessionID: s.SessionID}}
	if displayContent != nil {
		rec.Review.DisplayContentHash = commitment.String(displayContent)
	}
	if rationale != "" {
		rec.Review.RationaleHash = commitment.String([]byte(rationale))
	}
	return vpec.ReviewStatement(r.id, rec)
}
