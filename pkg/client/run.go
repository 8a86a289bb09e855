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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/api"
	"github.com/svc-gov/svc/pkg/commitment"
	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/vpec"
)

// RecordResult is the result of a record (docs/API.md). Queued is true when
// the service was unreachable and the record waits in the durable queue.
type RecordResult = api.RecordResult

// VPECResult is the result of closing a run.
type VPECResult struct {
	// VPEC is the credential.
	VPEC vpec.VPEC
	// Raw is the document exactly as issued (the service's answer), or
	// the locally built document when Offline.
	Raw []byte
	// Offline is true when the service was unreachable: VPEC is then
	// built locally from the records this client made, unsigned (schema
	// vpec.OfflineSchema, signature members empty), with a
	// system_unavailable gap (High) and is_clean false. The close is
	// queued; once delivered, the service seals the run and issues its
	// own VPEC (see Pipeline.FetchVPEC).
	Offline bool
}

// Run is an open run: records chain onto it until Close seals it. Its
// methods are safe for concurrent use; records are serialised (they form
// a chain). A Run keeps the records it made (their JSON, under 1 KB each)
// until it is closed, to build the offline VPEC if the service is down
// then.
type Run struct {
	p *Pipeline

	mu                 sync.Mutex
	id, workflowID     string
	orgID              string
	env                vpec.Environment
	policySnapshotHash string
	seq                int64    // last sequence number used
	baseSeq            int64    // records before this Run object (resumed runs)
	prev               [32]byte // chain value after record seq
	bodies             [][]byte // the records this client made, as sent
	lastCommitment     string
	sealed             bool
	closeKey           string         // the Idempotency-Key of this Run's close, made at the first Close
	copies             []UnsignedCopy // RunState.UnsignedCopies, kept from RestoreRun to State
}

// ID is the run id (client-proposed, accepted by the service).
func (r *Run) ID() string { return r.id }

// WorkflowID is the run's workflow identity.
func (r *Run) WorkflowID() string { return r.workflowID }

// OrgID is the owning organisation, or "" when the run was opened while
// the service was unreachable.
func (r *Run) OrgID() string { return r.orgID }

// Environment is sandbox or production.
func (r *Run) Environment() vpec.Environment { return r.env }

// PolicySnapshotHash is the hash of the policy snapshot at open time
// (computed locally, as the service does, when it was unreachable).
func (r *Run) PolicySnapshotHash() string { return r.policySnapshotHash }

// LastCommitmentHash is the commitment hash of the most recent record this
// Run made, or "".
func (r *Run) LastCommitmentHash() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastCommitment
}

// Sequence is the sequence number of the last record of the run known to
// this Run (0 before the first).
func (r *Run) Sequence() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Sealed reports whether the run was closed.
func (r *Run) Sealed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sealed
}

// --- record options --------------------------------------------------------------

// RecordOption sets an optional parameter of Record (docs/API.md).
type RecordOption func(*recordConfig)

type recordConfig struct {
	output    []byte
	hasOutput bool
	details   map[string]any
	vis       vpec.Visibility
	level     vpec.ProofLevel
	session   *Session
	review    *reviewConfig
	stageType string
	stagePart string
	modelHash string
	bounded   *vpec.BoundedInference
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

// WithVisibility sets the visibility mode (default opaque).
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
// implements it.
type ReviewSigner interface {
	PublicKey() ed25519.PublicKey
	Sign(msg []byte) []byte
}

type funcSigner struct {
	pub  ed25519.PublicKey
	sign func([]byte) []byte
}

func (s funcSigner) PublicKey() ed25519.PublicKey { return s.pub }
func (s funcSigner) Sign(msg []byte) []byte       { return s.sign(msg) }

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

// --- record ----------------------------------------------------------------------

// Record records one check execution. input (and the output, display
// content and rationale of the options) are hashed here; only commitment
// hashes and metadata are sent. The record is chained onto the run and
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
	var c recordConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	// The raw data stops here.
	h := hashes{input: commitment.String(input)}
	if c.hasOutput {
		h.output = commitment.String(c.output)
	}
	if c.review != nil {
		if c.review.display != nil {
			h.display = commitment.String(c.review.display)
		}
		if c.review.rationale != "" {
			h.rationale = commitment.String([]byte(c.review.rationale))
		}
	}
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record(ctx, check, manifestID, result, &c, h)
}

// hashes are the commitments of a record's raw data.
type hashes struct{ input, output, display, rationale string }

// record builds, chains and sends (or queues) a record; r.mu is held.
func (r *Run) record(ctx context.Context, check, manifestID string, result vpec.CheckResult, c *recordConfig, h hashes) (*vpec.Record, *RecordResult, error) {
	p := r.p
	if r.sealed {
		return nil, nil, fmt.Errorf("svc client: record %s on run %s: %w", check, r.id, ErrRunSealed)
	}
	rec := &vpec.Record{
		RecordID: vpec.NewID("rec_"), Sequence: r.seq + 1, Check: check, ManifestID: manifestID,
		CheckResult: result, ProofLevel: c.level, CommitmentAlgorithm: string(commitment.SHA256),
		CommitmentHash: h.input, OutputCommitment: h.output, ONNXModelHash: c.modelHash, Visibility: c.vis,
		StageType: c.stageType, StagePart: c.stagePart, Details: c.details, BoundedInference: c.bounded,
	}
	if rec.ProofLevel == "" {
		rec.ProofLevel = vpec.Execution
	}
	if rec.Visibility == "" {
		rec.Visibility = vpec.Opaque
	}
	invalid := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidRecord, fmt.Sprintf(format, a...))
	}
	switch {
	case !result.Valid():
		return nil, nil, invalid("check result %q is not one of %v", result, vpec.CheckResults)
	case check == "" || len(check) > 256 || manifestID == "" || len(manifestID) > 256:
		return nil, nil, invalid("check and manifest id must be 1-256 characters")
	case rec.ProofLevel == vpec.VerifiableInference:
		return nil, nil, invalid("proof level verifiable_inference needs a zero-knowledge proof, which API v1 does not accept")
	case rec.ProofLevel == vpec.Witnessed && c.review == nil:
		return nil, nil, invalid("proof level witnessed needs a review: use WithReview")
	case c.review != nil && c.level != "" && c.level != vpec.Witnessed:
		return nil, nil, invalid("a reviewed record is at proof level witnessed, not %s", c.level)
	case c.review != nil && c.session != nil:
		return nil, nil, invalid("WithReview and WithCheckSession do not go together (a review carries its own session)")
	}
	var signer ReviewSigner
	var reviewPub ed25519.PublicKey
	if rv := c.review; rv != nil {
		s := rv.session
		if err := r.readySession(ctx, s, sessionReview, check, manifestID, h.input); err != nil {
			return nil, nil, err
		}
		pub := rv.pub
		if rv.signer != nil {
			pub = rv.signer.PublicKey()
			signer = rv.signer
		}
		reviewPub = pub
		if len(pub) != ed25519.PublicKeySize {
			return nil, nil, invalid("the review needs the reviewer's Ed25519 public key")
		}
		if id := signing.KeyID(pub); id != s.ReviewerKeyID {
			return nil, nil, invalid("the reviewer key (id %s) is not the one the review session was opened for (%s)", id, s.ReviewerKeyID)
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, nil, invalid("reviewer public key: %v", err)
		}
		rec.ProofLevel = vpec.Witnessed
		rec.Review = &vpec.Review{SessionID: s.SessionID, ReviewerKeyID: s.ReviewerKeyID,
			ReviewerPublicKey: base64.StdEncoding.EncodeToString(der), DisplayContentHash: h.display, RationaleHash: h.rationale,
			MinDurationSeconds: s.MinDurationSeconds, CheckOpenTST: s.CheckOpenTST, CheckCloseTST: s.CheckCloseTST}
	}
	if s := c.session; s != nil {
		if err := r.readySession(ctx, s, sessionCheck, check, manifestID, h.input); err != nil {
			return nil, nil, err
		}
		rec.CheckSession = &vpec.CheckSession{SessionID: s.SessionID, CheckOpenTST: s.CheckOpenTST, CheckCloseTST: s.CheckCloseTST}
	}
	rec.RecordedAt = vpec.FormatTime(time.Now())
	if rv := c.review; rv != nil {
		stmt, err := vpec.ReviewStatement(r.id, rec)
		if err != nil {
			return nil, nil, invalid("review statement: %v", err)
		}
		sig := rv.signature
		if signer != nil {
			sig = signer.Sign(stmt)
		}
		if err := signing.Verify(reviewPub, stmt, sig); err != nil {
			return nil, nil, invalid("the reviewer signature does not verify over the review statement (Run.ReviewStatement): %v", err)
		}
		rec.Review.ReviewerSignature = signing.FormatSignature(sig)
	}
	jcs, err := vpec.RecordBytes(rec)
	if err != nil {
		return nil, nil, invalid("%v", err)
	}
	next := vpec.NextChainHash(r.prev, jcs)
	rec.ChainHash = vpec.FormatHash(next)
	if err := rec.Validate(); err != nil {
		return nil, nil, fmt.Errorf("svc client: record %s: %w", check, err)
	}
	body, err := document.Marshal(rec)
	if err != nil {
		return nil, nil, invalid("%v", err)
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
		res = &RecordResult{RecordID: rec.RecordID, Sequence: rec.Sequence, CommitmentHash: rec.CommitmentHash,
			CommitmentAlgorithm: rec.CommitmentAlgorithm, ProofLevel: rec.ProofLevel, RecordedAt: rec.RecordedAt,
			ChainHash: rec.ChainHash, Queued: true}
		if rec.OutputCommitment != "" {
			oc := rec.OutputCommitment
			res.OutputCommitment = &oc
		}
	}
	r.seq, r.prev, r.lastCommitment = rec.Sequence, next, rec.CommitmentHash
	r.bodies = append(r.bodies, body)
	return rec, res, nil
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

// --- close -----------------------------------------------------------------------

// Close seals the run and returns its VPEC. Queued entries of the run are
// delivered first. If the service is unreachable (or the run's queued
// entries cannot all be delivered within Options.Timeout), the close is
// queued and Close returns an Offline VPECResult built locally, with a
// system_unavailable gap; no error. Either way the run is sealed: a later
// Record or Close fails with ErrRunSealed.
func (r *Run) Close(ctx context.Context) (*VPECResult, error) {
	p := r.p
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return nil, fmt.Errorf("svc client: close run %s: %w", r.id, ErrRunSealed)
	}
	if !p.down.Load() {
		err := p.flushFor(ctx, r.id)
		if err == nil {
			var data []byte
			data, err = r.closeOnline(ctx)
			if err == nil {
				res := &VPECResult{Raw: data}
				if err := json.Unmarshal(data, &res.VPEC); err != nil {
					return nil, fmt.Errorf("svc client: close run %s: answer: %w", r.id, err)
				}
				r.sealed = true
				return res, nil
			}
			if errors.Is(err, ErrRunSealed) {
				r.sealed = true
				return nil, fmt.Errorf("svc client: close run %s: %w", r.id, err)
			}
			p.noteFailure(err)
		}
		if !unreachable(err) {
			return nil, fmt.Errorf("svc client: close run %s: %w", r.id, err)
		}
	}
	if err := p.q.append(kindClose, r.id, r.closeBody()); err != nil {
		return nil, fmt.Errorf("svc client: close run %s: the service is unreachable and the queue failed: %w", r.id, err)
	}
	r.sealed = true
	res, err := r.offlineVPEC()
	if err != nil {
		return nil, err
	}
	return res, nil
}

// closeOnline sends the close with a fresh Idempotency-Key. If no answer
// comes (the close may have been issued and its response lost), it sends
// the close again with the same key, which the service answers with the
// VPEC it issued (or issues it now); if the service answers that retry with
// 409 run_sealed (a service without idempotent closes), the VPEC is
// fetched through the run (GET run, then GET vpec). A 409 to the first
// attempt is returned as is: the run was closed by someone else.
func (r *Run) closeOnline(ctx context.Context) ([]byte, error) {
	p := r.p
	path := "/api/v1/runs/" + url.PathEscape(r.id) + "/close"
	hdr := map[string]string{"Idempotency-Key": r.idempotencyKey()}
	data, _, err := p.callWith(ctx, http.MethodPost, path, nil, hdr)
	if err == nil || !retryClose(err) {
		return data, err
	}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		data, _, rerr := p.callWith(ctx, http.MethodPost, path, nil, hdr)
		switch {
		case rerr == nil:
			return data, nil
		case errors.Is(rerr, ErrRunSealed):
			if v, ferr := r.fetchIssued(ctx); ferr == nil {
				return v, nil
			}
			return nil, rerr
		case !retryClose(rerr):
			return nil, rerr
		}
		if !unreachable(rerr) {
			err = rerr
		}
		select {
		case <-ctx.Done():
			return nil, err // still no answer: the caller queues the close
		case <-time.After(wait):
		}
	}
}

// idempotencyKey is the Run's close key: made at the first Close and
// kept, so that a Close the application calls again after an error (a
// failed timestamp authority, a lost answer) completes the same close.
func (r *Run) idempotencyKey() string {
	if r.closeKey == "" {
		r.closeKey = "close:" + strings.TrimPrefix(vpec.NewID("k"), "k")
	}
	return r.closeKey
}

// closeBody is the queued close's body: its idempotency key, sent as the
// Idempotency-Key header when the queue delivers it.
func (r *Run) closeBody() []byte {
	b, _ := json.Marshal(queuedClose{IdempotencyKey: r.idempotencyKey()})
	return b
}

// queuedClose is the body of a queued close entry.
type queuedClose struct {
	IdempotencyKey string `json:"idempotency_key"`
}

// retryClose reports whether a close that got err may be sent again with
// the same key: no answer, or the service could not finish it (a 5xx, e.g.
// 502 timestamp_failed: the run's records are sealed and the retry
// completes the close).
func retryClose(err error) bool {
	var ae *APIError
	return unreachable(err) || errors.As(err, &ae) && ae.Status >= 500
}

// fetchIssued returns the VPEC the service issued for the run, through
// GET run (its vpec_id) and GET vpec.
func (r *Run) fetchIssued(ctx context.Context) ([]byte, error) {
	data, _, err := r.p.call(ctx, http.MethodGet, "/api/v1/runs/"+url.PathEscape(r.id), nil)
	if err != nil {
		return nil, err
	}
	var ar api.Run
	if err := json.Unmarshal(data, &ar); err != nil {
		return nil, err
	}
	if ar.VPECID == "" {
		return nil, fmt.Errorf("run %s is sealed without a VPEC yet", r.id)
	}
	v, _, err := r.p.call(ctx, http.MethodGet, "/api/v1/vpecs/"+url.PathEscape(ar.VPECID), nil)
	return v, err
}

// offlineVPEC builds the unsigned VPEC of the records this Run made, with
// the gaps the service would find in them and a system_unavailable gap.
// Its schema is vpec.OfflineSchema and its signature members are empty
// (docs/FORMATS.md, "Unsigned offline VPEC").
func (r *Run) offlineVPEC() (*VPECResult, error) {
	now := vpec.FormatTime(time.Now())
	v := vpec.VPEC{
		Schema: vpec.OfflineSchema, VPECID: vpec.NewID("vpec_"), RunID: r.id, WorkflowID: r.workflowID, OrgID: r.orgID,
		IssuedAt: now, Environment: r.env, APIKeyID: r.p.keyID,
		Records: make([]vpec.Record, len(r.bodies)), Gaps: []vpec.Gap{},
	}
	jcs := make([][]byte, len(r.bodies))
	for i, b := range r.bodies {
		tree, err := document.Parse(b, &v.Records[i])
		if err != nil {
			return nil, fmt.Errorf("svc client: offline VPEC: record %d: %w", i+1, err)
		}
		jcs[i] = tree.Canonical("chain_hash")
	}
	// The same chain, hole and empty-run gaps the service would declare.
	v.Gaps = vpec.IssueGaps(r.id, v.Records, jcs, now)
	for i := range v.Records {
		if rec := &v.Records[i]; rec.RaisesProfileMissing() {
			check, sq := rec.Check, rec.Sequence
			v.Gaps = append(v.Gaps, vpec.Gap{GapID: vpec.NewID("gap_"), GapType: vpec.GapModelProfileMissing, Severity: vpec.Medium, Check: &check, Sequence: &sq, Timestamp: now})
		}
	}
	v.Gaps = append(v.Gaps, vpec.Gap{GapID: vpec.NewID("gap_"), GapType: vpec.GapSystemUnavailable, Severity: vpec.GapSeverity[vpec.GapSystemUnavailable], Timestamp: now})
	vpec.Finish(&v, jcs)
	raw, err := document.MarshalIndent(v)
	if err != nil {
		return nil, fmt.Errorf("svc client: offline VPEC: %w", err)
	}
	return &VPECResult{VPEC: v, Raw: raw, Offline: true}, nil
}

// FetchVPEC returns the VPEC the service issued for a sealed run (GET
// /api/v1/runs/{id}, then GET /api/v1/vpecs/{vpec_id}): for example the
// one issued when a queued close was delivered after an offline Close.
// Queued entries of the run are delivered first. It needs the service.
func (p *Pipeline) FetchVPEC(ctx context.Context, runID string) (*VPECResult, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	ar, err := p.serverRun(ctx, runID, "fetch VPEC of")
	if err != nil {
		return nil, err
	}
	if ar.VPECID == "" {
		return nil, fmt.Errorf("svc client: fetch VPEC of %s: the run is %s: %w", runID, ar.Status, ErrNotIssued)
	}
	data, _, err := p.call(ctx, http.MethodGet, "/api/v1/vpecs/"+url.PathEscape(ar.VPECID), nil)
	if err != nil {
		p.noteFailure(err)
		return nil, fmt.Errorf("svc client: fetch VPEC %s: %w", ar.VPECID, err)
	}
	res := &VPECResult{Raw: data}
	if err := json.Unmarshal(data, &res.VPEC); err != nil {
		return nil, fmt.Errorf("svc client: fetch VPEC %s: %w", ar.VPECID, err)
	}
	return res, nil
}

// --- sessions --------------------------------------------------------------------

// Session kinds.
const (
	sessionCheck  = "check"
	sessionReview = "review"
)

// Session is a check or review session the service opened (docs/API.md,
// sessions): its RFC 3161 open timestamp and, once closed on the
// input, its close timestamp. JSON names are the service's.
type Session struct {
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
func (s *Session) Closed() bool { return s.CheckCloseTST != "" }

// sessionRequest mirrors the body of POST /api/v1/runs/{id}/sessions.
type sessionRequest struct {
	Kind               string `json:"kind"`
	Check              string `json:"check"`
	ManifestID         string `json:"manifest_id"`
	ReviewerKeyID      string `json:"reviewer_key_id,omitempty"`
	MinDurationSeconds int64  `json:"min_duration_seconds,omitempty"`
}

// sessionCloseRequest mirrors the body of .../sessions/{id}/close.
type sessionCloseRequest struct {
	CommitmentHash string `json:"commitment_hash"`
}

// OpenCheck opens a check session: the service timestamps when the check
// opened. Pass it to Record with WithCheckSession. It needs the service
// (queued entries of the run are delivered first).
func (r *Run) OpenCheck(ctx context.Context, check, manifestID string) (*Session, error) {
	return r.openSession(ctx, sessionRequest{Kind: sessionCheck, Check: check, ManifestID: manifestID})
}

// OpenReview opens a human review session for the registered reviewer key
// (RegisterReviewer) with a minimum duration (whole seconds, rounded up)
// that the service enforces when the session closes. Pass it to Record
// with WithReview. It needs the service.
func (r *Run) OpenReview(ctx context.Context, check, manifestID, reviewerKeyID string, minDuration time.Duration) (*Session, error) {
	secs := int64((minDuration + time.Second - 1) / time.Second)
	return r.openSession(ctx, sessionRequest{Kind: sessionReview, Check: check, ManifestID: manifestID, ReviewerKeyID: reviewerKeyID, MinDurationSeconds: max(secs, 0)})
}

func (r *Run) openSession(ctx context.Context, req sessionRequest) (*Session, error) {
	p := r.p
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	if r.Sealed() {
		return nil, fmt.Errorf("svc client: open %s session on run %s: %w", req.Kind, r.id, ErrRunSealed)
	}
	if err := p.flushFor(ctx, r.id); err != nil {
		return nil, fmt.Errorf("svc client: open %s session: %w", req.Kind, err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs/"+url.PathEscape(r.id)+"/sessions", body)
	if err != nil {
		p.noteFailure(err)
		return nil, fmt.Errorf("svc client: open %s session: %w", req.Kind, err)
	}
	var s Session
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("svc client: open %s session: answer: %w", req.Kind, err)
	}
	return &s, nil
}

// CloseSession closes a session on the input the check ran on (or the
// reviewer saw): only the input's commitment hash is sent, and the service
// timestamps the close. A review session closes only after its minimum
// duration (an *APIError with code review_too_short before). Closing again
// on the same input is harmless.
func (r *Run) CloseSession(ctx context.Context, s *Session, input []byte) error {
	p := r.p
	if err := p.enter(); err != nil {
		return err
	}
	defer p.exit()
	h := commitment.String(input)
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	return r.closeSession(ctx, s, h)
}

func (r *Run) closeSession(ctx context.Context, s *Session, commitmentHash string) error {
	if s == nil || s.SessionID == "" {
		return fmt.Errorf("%w: no session", ErrInvalidRecord)
	}
	body, err := json.Marshal(sessionCloseRequest{CommitmentHash: commitmentHash})
	if err != nil {
		return err
	}
	data, _, err := r.p.call(ctx, http.MethodPost, "/api/v1/runs/"+url.PathEscape(r.id)+"/sessions/"+url.PathEscape(s.SessionID)+"/close", body)
	if err != nil {
		r.p.noteFailure(err)
		return fmt.Errorf("svc client: close session %s: %w", s.SessionID, err)
	}
	var out Session
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("svc client: close session %s: answer: %w", s.SessionID, err)
	}
	*s = out
	return nil
}

// readySession checks a session for a record and closes it on the input
// if it is still open.
func (r *Run) readySession(ctx context.Context, s *Session, kind, check, manifestID, inputHash string) error {
	switch {
	case s == nil:
		return fmt.Errorf("%w: no %s session", ErrInvalidRecord, kind)
	case s.Kind != kind:
		return fmt.Errorf("%w: session %s is a %s session, want a %s session", ErrInvalidRecord, s.SessionID, s.Kind, kind)
	case s.RunID != r.id:
		return fmt.Errorf("%w: session %s belongs to run %s, not %s", ErrInvalidRecord, s.SessionID, s.RunID, r.id)
	case s.Check != check || s.ManifestID != manifestID:
		return fmt.Errorf("%w: session %s was opened for check %s (manifest %s)", ErrInvalidRecord, s.SessionID, s.Check, s.ManifestID)
	}
	if !s.Closed() {
		if r.p.down.Load() {
			return fmt.Errorf("svc client: close session %s on the record's input: %w", s.SessionID, ErrUnavailable)
		}
		if err := r.closeSession(ctx, s, inputHash); err != nil {
			return err
		}
	}
	if s.CommitmentHash != inputHash {
		return fmt.Errorf("%w: session %s was closed on another input than this record's", ErrInvalidRecord, s.SessionID)
	}
	return nil
}

// --- delegation ------------------------------------------------------------------

// delegationRequest and delegationResult mirror POST
// /api/v1/runs/{id}/delegations.
type delegationRequest struct {
	Delegation map[string]any `json:"delegation"`
}

type delegationResult struct {
	LineageToken   string `json:"lineage_token"`
	RunID          string `json:"run_id"`
	LastSequence   int64  `json:"last_sequence"`
	LastChainHash  string `json:"last_chain_hash"`
	DelegationHash string `json:"delegation_hash"`
	ExpiresAt      string `json:"expires_at"`
}

// RecordDelegation hands the run over to another process or agent at its
// current point: queued entries of the run are delivered, then the service
// signs a lineage token bound to the run's last sequence and chain hash and
// to the delegation (a description such as {"to": "agent-7"}; not personal
// data). The delegate continues with Pipeline.ResumeFromLineage; this Run
// should then stop recording (the delegate's records take the next
// sequence numbers). It needs the service.
func (r *Run) RecordDelegation(ctx context.Context, delegation map[string]any) (string, error) {
	p := r.p
	if err := p.enter(); err != nil {
		return "", err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return "", fmt.Errorf("svc client: delegate run %s: %w", r.id, ErrRunSealed)
	}
	if delegation == nil {
		delegation = map[string]any{}
	}
	body, err := document.Marshal(delegationRequest{Delegation: delegation})
	if err != nil {
		return "", fmt.Errorf("svc client: delegate run %s: %w", r.id, err)
	}
	if err := p.flushFor(ctx, r.id); err != nil {
		return "", fmt.Errorf("svc client: delegate run %s: %w", r.id, err)
	}
	data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs/"+url.PathEscape(r.id)+"/delegations", body)
	if err != nil {
		p.noteFailure(err)
		if errors.Is(err, ErrRunSealed) {
			r.sealed = true
		}
		return "", fmt.Errorf("svc client: delegate run %s: %w", r.id, err)
	}
	var res delegationResult
	if err := json.Unmarshal(data, &res); err != nil || res.LineageToken == "" {
		return "", fmt.Errorf("svc client: delegate run %s: answer has no lineage token", r.id)
	}
	return res.LineageToken, nil
}

// RunState is a Run's position in its chain, saved between processes (the
// command line keeps it in a state file) so that a later process continues
// the same chain, even while the service is unreachable.
type RunState struct {
	RunID              string            `json:"run_id"`
	WorkflowID         string            `json:"workflow_id"`
	OrgID              string            `json:"org_id,omitempty"`
	Environment        vpec.Environment  `json:"environment"`
	PolicySnapshotHash string            `json:"policy_snapshot_hash,omitempty"`
	Sequence           int64             `json:"sequence"`
	BaseSequence       int64             `json:"base_sequence"`
	ChainHash          string            `json:"chain_hash"`
	Records            []json.RawMessage `json:"records"`
	LastCommitment     string            `json:"last_commitment,omitempty"`
	Sealed             bool              `json:"sealed"`
	// UnsignedCopies are the unsigned offline VPECs written by closes of
	// this state file (this run's and earlier runs') whose signed VPEC
	// has not replaced them yet.
	UnsignedCopies []UnsignedCopy `json:"unsigned_copies,omitempty"`
}

// State returns the run's current position.
func (r *Run) State() RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := RunState{RunID: r.id, WorkflowID: r.workflowID, OrgID: r.orgID, Environment: r.env,
		PolicySnapshotHash: r.policySnapshotHash, Sequence: r.seq, BaseSequence: r.baseSeq,
		ChainHash: vpec.FormatHash(r.prev), LastCommitment: r.lastCommitment, Sealed: r.sealed,
		Records: make([]json.RawMessage, len(r.bodies)), UnsignedCopies: slices.Clone(r.copies)}
	for i, b := range r.bodies {
		st.Records[i] = json.RawMessage(b)
	}
	return st
}

// RestoreRun makes a Run from a saved state; it needs no network.
func (p *Pipeline) RestoreRun(st RunState) (*Run, error) {
	prev, err := vpec.ParseHash(st.ChainHash)
	if err != nil {
		return nil, fmt.Errorf("svc client: restore run %s: chain_hash: %w", st.RunID, err)
	}
	if !strings.HasPrefix(st.RunID, "run_") || st.Sequence < st.BaseSequence {
		return nil, fmt.Errorf("svc client: restore run: the state is not a run's (run_id %q, sequence %d)", st.RunID, st.Sequence)
	}
	r := &Run{p: p, id: st.RunID, workflowID: st.WorkflowID, orgID: st.OrgID, env: st.Environment,
		policySnapshotHash: st.PolicySnapshotHash, seq: st.Sequence, baseSeq: st.BaseSequence, prev: prev,
		lastCommitment: st.LastCommitment, sealed: st.Sealed, copies: slices.Clone(st.UnsignedCopies)}
	for _, b := range st.Records {
		r.bodies = append(r.bodies, []byte(b))
	}
	return r, nil
}
