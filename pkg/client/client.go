// Package client is the Go client library of the Governance Proof Service
// (API v1 in docs/API.md).
//
// A Pipeline holds the API key and workflow identity and opens Runs; a Run
// records check executions and is closed to obtain a VPEC:
//
//	p, err := client.NewPipeline(client.Options{WorkflowID: "claims-intake"}) // key from $SVC_API_KEY
//	run, err := p.Open(ctx, "")
//	res, err := run.Record(ctx, "pii_scan", manifestID, vpec.ResultPass, input)
//	v, err := run.Close(ctx)
//
// Privacy: raw input, output, display content and rationale are hashed with
// SHA-256 inside the calling process; only their commitment hashes (and
// the metadata and details the caller passes) are sent.
//
// Fail-open: no call blocks the host longer than Options.Timeout. When the
// service is unreachable (connection error, timeout, or 408, 429, 500,
// 502, 503, 504, as proxies answer) a Run still opens with a client-chosen
// id, records are appended to a durable local queue (written and fsynced
// before Record returns with Queued true), and Close returns an unsigned,
// locally built VPEC with a system_unavailable gap. The client computes the
// hash chain itself, so queued records are delivered later, in order and
// exactly once (the service is idempotent by record id and proposed run
// id), and the service's VPEC covers them. Delivery is automatic: in the
// background as soon as the service answers again, at the start of later
// calls, and on FlushQueue.
package client

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gov/svc/pkg/api"
	"github.com/svc-gov/svc/pkg/canonical"
	"github.com/svc-gov/svc/pkg/commitment"
	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/vpec"
)

// Defaults of Options.
const (
	// DefaultBaseURL is the service address when neither Options.BaseURL
	// nor $SVC_BASE_URL is set (where `svc serve` listens).
	DefaultBaseURL = "http://127.0.0.1:8080"
	// DefaultWorkflowID is the workflow identity when none is given.
	DefaultWorkflowID = "default"
	// DefaultTimeout bounds each call unless Options.Timeout says otherwise.
	DefaultTimeout = 5 * time.Second
	// DefaultRetryInterval is the first wait before probing an
	// unreachable service again.
	DefaultRetryInterval = time.Second
	// MaxRetryInterval bounds the backoff between probes of an
	// unreachable service.
	MaxRetryInterval = 30 * time.Second
)

// Environment variables read when the corresponding Options field is empty.
const (
	// EnvAPIKey holds the API key.
	EnvAPIKey = "SVC_API_KEY"
	// EnvBaseURL holds the service's base address.
	EnvBaseURL = "SVC_BASE_URL"
)

// userAgent identifies the client in requests.
const userAgent = "svc-go-client/1"

// maxResponse bounds the answers read (a 10,000-record VPEC is about 8 MB).
const maxResponse = 256 << 20

// Options configure a Pipeline (docs/API.md).
type Options struct {
	// APIKey authenticates every call; empty means $SVC_API_KEY, and
	// NewPipeline fails with ErrNoAPIKey when both are empty. Keys start
	// pk_sb_ (sandbox) or pk_live_ (production).
	APIKey string
	// WorkflowID is the workflow identity of the runs (default "default").
	WorkflowID string
	// SurfaceID is the provable surface the pipeline instruments.
	SurfaceID string
	// Policy binds the runs to policy bundles.
	Policy []string
	// ProcessContextHash is an external process correlation hash
	// (sha256:<hex>).
	ProcessContextHash string
	// BaseURL is the service's address; empty means $SVC_BASE_URL, else
	// http://127.0.0.1:8080.
	BaseURL string
	// QueuePath is the durable queue file. Default:
	// <user cache dir>/svc/queue-<16 hex of SHA-256(base URL + key id)>.jsonl.
	// One Pipeline at a time may use a queue file.
	QueuePath string
	// HTTPClient sends the requests (default: a client of its own).
	HTTPClient *http.Client
	// Timeout bounds each call (default 5s): no call of a Pipeline or Run
	// blocks the host longer, except FlushQueue, which is bounded by its
	// context and Timeout per request.
	Timeout time.Duration
	// RetryInterval is how long after finding the service unreachable the
	// client first probes it again (GET /readyz, in the background; the
	// interval doubles up to 30s). Until a probe answers, calls do not
	// touch the network: records go straight to the queue. When a probe
	// answers, the queue is delivered in the background. Default 1s.
	RetryInterval time.Duration
	// OnFlushError, if set, receives errors of automatic flushes (for
	// example a *RejectedError for entries the service refused for good).
	// It may be called from a background goroutine; it must not call the
	// Pipeline.
	OnFlushError func(error)
}

// Pipeline holds the API key and workflow identity, opens Runs and owns
// the durable queue. It is safe for concurrent use.
type Pipeline struct {
	key, keyID string
	baseURL    string
	workflowID string
	surfaceID  string
	policy     []string
	pch        string
	env        vpec.Environment
	hc         *http.Client
	timeout    time.Duration
	retry      time.Duration
	onFlushErr func(error)
	q          *queue

	// life: public entry points hold it shared; Close takes it exclusively.
	life   sync.RWMutex
	closed bool

	// flushSem admits one flusher at a time.
	flushSem chan struct{}

	// down is set while the service is unreachable; a prober clears it.
	down    atomic.Bool
	stateMu sync.Mutex
	probing bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	logMu   sync.RWMutex
	logger  func(LogEvent)
	logGaps bool
}

// NewPipeline checks opts, applies defaults and opens (and locks) the
// queue file. It makes no network call.
func NewPipeline(opts Options) (*Pipeline, error) {
	key := opts.APIKey
	if key == "" {
		key = os.Getenv(EnvAPIKey)
	}
	if key == "" {
		return nil, ErrNoAPIKey
	}
	env, ok := vpec.EnvironmentOf(key)
	if !ok {
		return nil, ErrInvalidAPIKey
	}
	base := opts.BaseURL
	if base == "" {
		base = os.Getenv(EnvBaseURL)
	}
	if base == "" {
		base = DefaultBaseURL
	}
	base = strings.TrimRight(base, "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("svc client: base URL %q must be http(s)://host[:port]", base)
	}
	wf := opts.WorkflowID
	if wf == "" {
		wf = DefaultWorkflowID
	}
	if !validWorkflowID(wf) {
		return nil, fmt.Errorf("svc client: workflow id %q must be 1-128 letters, digits or ._:-", wf)
	}
	if opts.ProcessContextHash != "" {
		if err := commitment.Validate(opts.ProcessContextHash); err != nil {
			return nil, fmt.Errorf("svc client: process context hash: %w", err)
		}
	}
	p := &Pipeline{
		key: key, keyID: keyID(key), baseURL: base, workflowID: wf, surfaceID: opts.SurfaceID,
		policy: slices.Clone(opts.Policy), pch: opts.ProcessContextHash, env: env,
		hc: opts.HTTPClient, timeout: opts.Timeout, retry: opts.RetryInterval, onFlushErr: opts.OnFlushError,
		flushSem: make(chan struct{}, 1),
	}
	if p.hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 16
		p.hc = &http.Client{Transport: t}
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.retry <= 0 {
		p.retry = DefaultRetryInterval
	}
	path := opts.QueuePath
	if path == "" {
		path = DefaultQueuePath(base, key)
	}
	q, err := openQueue(path)
	if err != nil {
		return nil, err
	}
	p.q = q
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// DefaultQueuePath is the queue file a Pipeline uses for a base URL and API
// key when Options.QueuePath is empty: under the user's cache directory,
// named by a hash of the base URL and the key's public id (never the key).
func DefaultQueuePath(baseURL, apiKey string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	sum := sha256.Sum256([]byte(strings.TrimRight(baseURL, "/") + keyID(apiKey)))
	return filepath.Join(dir, "svc", "queue-"+hex.EncodeToString(sum[:])[:16]+".jsonl")
}

// keyID is the public id of an API key (as the service computes it): its
// prefix and the first 12 hex digits of its SHA-256.
func keyID(key string) string {
	prefix := vpec.SandboxKeyPrefix
	if env, _ := vpec.EnvironmentOf(key); env == vpec.Production {
		prefix = vpec.ProductionKeyPrefix
	}
	sum := sha256.Sum256([]byte(key))
	return prefix + hex.EncodeToString(sum[:])[:12]
}

func validWorkflowID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// TestMode reports whether the API key is a sandbox key (pk_sb_).
func (p *Pipeline) TestMode() bool { return p.env == vpec.Sandbox }

// Environment is sandbox or production, from the key's prefix.
func (p *Pipeline) Environment() vpec.Environment { return p.env }

// WorkflowID is the pipeline's workflow identity.
func (p *Pipeline) WorkflowID() string { return p.workflowID }

// QueuePath is the durable queue file of the pipeline.
func (p *Pipeline) QueuePath() string { return p.q.path }

// enter admits a public call; exit ends it.
func (p *Pipeline) enter() error {
	p.life.RLock()
	if p.closed {
		p.life.RUnlock()
		return ErrPipelineClosed
	}
	return nil
}

func (p *Pipeline) exit() { p.life.RUnlock() }

// callCtx bounds a call by Options.Timeout.
func (p *Pipeline) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, p.timeout)
}

// Close stops background probing and releases the queue file. Queued
// entries stay in it for the next Pipeline on the same file. Calls after
// Close fail with ErrPipelineClosed.
func (p *Pipeline) Close() error {
	p.life.Lock()
	if p.closed {
		p.life.Unlock()
		return nil
	}
	p.closed = true
	p.life.Unlock()
	p.cancel()
	p.wg.Wait()
	if err := p.q.close(); err != nil {
		return fmt.Errorf("svc client: close pipeline: %w", err)
	}
	return nil
}

// --- HTTP ----------------------------------------------------------------------

// call sends one request, bounded by ctx. It returns the answer's body for
// 2xx; otherwise an *APIError, or an error wrapping ErrUnavailable when no
// answer came.
func (p *Pipeline) call(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	return p.callWith(ctx, method, path, body, nil)
}

// callWith is call with extra request headers.
func (p *Pipeline) callWith(ctx context.Context, method, path string, body []byte, hdr map[string]string) ([]byte, int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.baseURL+path, rd)
	if err != nil {
		return nil, 0, fmt.Errorf("svc client: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s %s: %w", ErrUnavailable, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("%w: %s %s: read answer: %w", ErrUnavailable, method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, resp.StatusCode, nil
	}
	ae := &APIError{Method: method, Path: path, Status: resp.StatusCode}
	var eb api.ErrorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
		ae.Code, ae.Message, ae.Field = eb.Error.Code, eb.Error.Message, eb.Error.Field
	} else {
		msg := strings.Join(strings.Fields(string(data)), " ")
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		ae.Message = msg
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		ae.RetryAfter = time.Duration(s) * time.Second
	}
	return data, resp.StatusCode, ae
}

// unreachable reports whether err means the service did not (usefully)
// answer.
func unreachable(err error) bool { return errors.Is(err, ErrUnavailable) }

// permanent reports whether err is the service refusing a queued entry
// for good: retrying the same bytes cannot succeed.
func permanent(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.Status {
	case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge,
		http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		return true
	case http.StatusNotFound:
		// The run does not exist (its open was refused), as opposed to a
		// misrouted base URL, which would refuse everything.
		return ae.Code == api.CodeNotFound
	}
	return false
}

// noteFailure switches to queue-only mode after an unreachable answer,
// unless the caller cancelled the call itself.
func (p *Pipeline) noteFailure(err error) {
	if !unreachable(err) || errors.Is(err, context.Canceled) {
		return
	}
	var wait time.Duration
	var ae *APIError
	if errors.As(err, &ae) {
		wait = ae.RetryAfter
	}
	p.markDown(wait)
}

// markDown records that the service is unreachable and starts a prober.
func (p *Pipeline) markDown(wait time.Duration) {
	p.stateMu.Lock()
	defer p.stateMu.Unlock()
	p.down.Store(true)
	if p.probing || p.ctx.Err() != nil {
		return
	}
	p.probing = true
	p.wg.Add(1)
	go p.probe(wait)
}

// markUp records that the service answered.
func (p *Pipeline) markUp() {
	p.stateMu.Lock()
	p.down.Store(false)
	p.stateMu.Unlock()
}

// probe polls GET /readyz with exponential backoff until the service
// answers (any answer but 502/503/504), then leaves queue-only mode.
func (p *Pipeline) probe(wait time.Duration) {
	defer p.wg.Done()
	interval := p.retry
	wait = max(wait, interval)
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			p.stateMu.Lock()
			p.probing = false
			p.stateMu.Unlock()
			return
		case <-t.C:
		}
		up := !p.down.Load() || p.ping()
		p.stateMu.Lock()
		if up {
			p.down.Store(false)
			p.probing = false
			p.stateMu.Unlock()
			p.backgroundFlush()
			return
		}
		p.stateMu.Unlock()
		interval = max(interval, min(interval*2, MaxRetryInterval))
		t.Reset(interval)
	}
}

// backgroundFlush drains the queue after the service came back, so a
// backlog is delivered without waiting for (or slowing) the host's calls.
// It runs on the prober's goroutine and stops when the Pipeline closes.
func (p *Pipeline) backgroundFlush() {
	if p.q.count() == 0 {
		return
	}
	select {
	case p.flushSem <- struct{}{}:
	default:
		return // a call is flushing
	}
	defer func() { <-p.flushSem }()
	if _, err := p.flushLocked(p.ctx, nil, nil); err != nil && !unreachable(err) {
		p.reportFlushError(err)
	}
}

func (p *Pipeline) ping() bool {
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.baseURL+"/readyz", nil)
	if err != nil {
		return false
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := p.hc.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return false
	}
	return true
}

// --- queue delivery -------------------------------------------------------------

// autoFlush delivers queued entries at the start of a call, when the
// service is believed up, within half the call's budget. It never waits
// for another flusher.
func (p *Pipeline) autoFlush(ctx context.Context) {
	if p.down.Load() || p.q.count() == 0 {
		return
	}
	select {
	case p.flushSem <- struct{}{}:
	default:
		return
	}
	defer func() { <-p.flushSem }()
	budget := p.timeout / 2
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2)
	}
	fctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	if _, err := p.flushLocked(fctx, nil, nil); err != nil && !unreachable(err) {
		p.reportFlushError(err)
	}
}

func (p *Pipeline) reportFlushError(err error) {
	if p.onFlushErr != nil && err != nil {
		p.onFlushErr(err)
	}
}

// flushFor delivers queued entries until none of run runID is left.
func (p *Pipeline) flushFor(ctx context.Context, runID string) error {
	if p.q.pendingFor(runID) == 0 {
		return nil
	}
	if p.down.Load() {
		return fmt.Errorf("%w: %d entries of run %s wait in the local queue", ErrUnavailable, p.q.pendingFor(runID), runID)
	}
	select {
	case p.flushSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for the queue: %w", ErrUnavailable, ctx.Err())
	}
	defer func() { <-p.flushSem }()
	_, err := p.flushLocked(ctx, func() bool { return p.q.pendingFor(runID) == 0 }, nil)
	if n := p.q.pendingFor(runID); n > 0 {
		if err == nil {
			err = ErrUnavailable
		}
		return fmt.Errorf("svc client: %d entries of run %s could not be delivered: %w", n, runID, err)
	}
	// The run's entries are through; report refusals on the way.
	p.reportFlushError(err)
	return nil
}

// flushLocked delivers queued entries in order until the queue is empty,
// until() holds, the service is unreachable or ctx ends. The caller holds
// flushSem. Entries the service refuses for good go to the dead-letter
// file and are reported in a *RejectedError; delivery goes on after them.
// Each run whose close it delivers is appended to sealed, if not nil.
func (p *Pipeline) flushLocked(ctx context.Context, until func() bool, sealed *[]SealedRun) (n int, err error) {
	var rejected []RejectedEntry
	defer func() {
		if perr := p.q.persist(); perr != nil && err == nil {
			err = perr
		}
		if len(rejected) > 0 {
			rerr := &RejectedError{Entries: rejected, DeadLetterPath: p.q.deadLetterPath()}
			if err == nil {
				err = rerr
			} else {
				err = errors.Join(err, rerr)
			}
		}
		if n > 0 || len(rejected) > 0 {
			p.markUp()
		}
	}()
	for {
		if until != nil && until() {
			return n, nil
		}
		e, ok := p.q.head()
		if !ok {
			return n, nil
		}
		var derr error
		var vpecID string
		if e.Kind != kindOpen && p.q.runFailed(e.RunID) {
			derr = fmt.Errorf("the run's queued open was rejected")
		} else {
			vpecID, derr = p.deliver(ctx, e)
		}
		switch {
		case derr == nil:
			p.q.pop(e)
			n++
			if e.Kind == kindClose && sealed != nil {
				*sealed = append(*sealed, SealedRun{RunID: e.RunID, VPECID: vpecID})
			}
			if e.Kind == kindClose || n%1000 == 0 {
				p.q.persist()
			}
		case permanent(derr) || (e.Kind != kindOpen && p.q.runFailed(e.RunID)):
			p.q.reject(e, derr)
			rejected = append(rejected, RejectedEntry{Kind: e.Kind, RunID: e.RunID, RecordID: e.recordID, Err: derr})
		default:
			switch {
			case !unreachable(derr):
				// The service answered (e.g. 401): it is up, but this
				// entry cannot go now; it stays at the head.
				p.markUp()
			case !(n > 0 && ctx.Err() != nil):
				// (Out of budget after progress is not an outage.)
				p.noteFailure(derr)
			}
			return n, fmt.Errorf("svc client: flush stopped with %d entries left: %w", p.q.count(), derr)
		}
	}
}

// deliver sends one queued entry; a duplicate counts as delivered. For a
// close it returns the id of the VPEC the service issued (empty when the
// service had sealed the run before and its answer does not say).
func (p *Pipeline) deliver(ctx context.Context, e entry) (vpecID string, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	run := "/api/v1/runs/" + url.PathEscape(e.RunID)
	switch e.Kind {
	case kindOpen:
		_, _, err = p.call(ctx, http.MethodPost, "/api/v1/runs", e.Body)
	case kindRecord:
		_, _, err = p.call(ctx, http.MethodPost, run+"/records", e.Body)
	case kindClose:
		var hdr map[string]string
		var qc queuedClose
		if len(e.Body) > 0 && json.Unmarshal(e.Body, &qc) == nil && qc.IdempotencyKey != "" {
			hdr = map[string]string{"Idempotency-Key": qc.IdempotencyKey}
		}
		var data []byte
		data, _, err = p.callWith(ctx, http.MethodPost, run+"/close", nil, hdr)
		switch {
		case err == nil:
			vpecID = issuedVPECID(data)
		case errors.Is(err, ErrRunSealed):
			err = nil
		}
	}
	return vpecID, err
}

// PendingQueueCount is the number of entries (run opens, records, closes)
// waiting in the local queue.
func (p *Pipeline) PendingQueueCount() (int, error) {
	if err := p.enter(); err != nil {
		return 0, err
	}
	defer p.exit()
	return p.q.count(), nil
}

// FlushQueue delivers every queued entry in order and returns how many were
// delivered (a duplicate the service already held counts as delivered).
// It tries even while the service is believed down. Each request is bounded
// by Options.Timeout; the whole flush by ctx only. It stops at the first
// unreachable answer (the error wraps ErrUnavailable); entries the service
// refuses for good are moved to the dead-letter file and reported by a
// *RejectedError (errors.Is(err, ErrRejected)) after the rest is delivered.
// Flush does the same and names each run it sealed.
func (p *Pipeline) FlushQueue(ctx context.Context) (int, error) {
	res, err := p.Flush(ctx)
	return res.Delivered, err
}

// Flush is FlushQueue reporting each run whose queued close it delivered,
// with the id of the VPEC the service issued (fetch it with FetchVPEC).
func (p *Pipeline) Flush(ctx context.Context) (FlushResult, error) {
	var res FlushResult
	if err := p.enter(); err != nil {
		return res, err
	}
	defer p.exit()
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case p.flushSem <- struct{}{}:
	case <-ctx.Done():
		return res, fmt.Errorf("svc client: flush: %w", ctx.Err())
	}
	defer func() { <-p.flushSem }()
	var err error
	res.Delivered, err = p.flushLocked(ctx, nil, &res.Sealed)
	for i := range res.Sealed {
		if s := &res.Sealed[i]; s.VPECID == "" {
			// The service had sealed the run before (a duplicate close):
			// ask it which VPEC it issued.
			s.VPECID, _ = p.issuedID(ctx, s.RunID)
		}
	}
	return res, err
}

// --- operations -----------------------------------------------------------------

// Open opens a Run (POST /api/v1/runs) with an optional policy pack id.
// The client proposes the run id, so when the service is unreachable the
// Run opens locally, the open is queued, and records chain from the
// genesis of that id; the service creates the run when the queue is
// delivered.
func (p *Pipeline) Open(ctx context.Context, policyPackID string) (*Run, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	runID := vpec.NewID("run_")
	req := api.OpenRunRequest{RunID: runID, WorkflowID: p.workflowID, SurfaceID: p.surfaceID, Policy: p.policy,
		ProcessContextHash: p.pch, PolicyPackID: policyPackID}
	body, err := document.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("svc client: open run: %w", err)
	}
	run := &Run{p: p, id: runID, workflowID: p.workflowID, env: p.env, prev: vpec.Genesis(runID),
		policySnapshotHash: policySnapshot(p.policy, policyPackID)}
	p.autoFlush(ctx)
	if !p.down.Load() {
		data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs", body)
		switch {
		case err == nil:
			var ar api.Run
			if err := json.Unmarshal(data, &ar); err != nil {
				return nil, fmt.Errorf("svc client: open run: answer: %w", err)
			}
			run.orgID, run.policySnapshotHash = ar.OrgID, ar.PolicySnapshotHash
			return run, nil
		case !unreachable(err):
			return nil, fmt.Errorf("svc client: open run: %w", err)
		}
		p.noteFailure(err)
	}
	if err := p.q.append(kindOpen, runID, body); err != nil {
		return nil, fmt.Errorf("svc client: open run while the service is unreachable: %w", err)
	}
	return run, nil
}

// policySnapshot is the policy_snapshot_hash the service computes: SHA-256
// of the canonical {"policy": sorted policies, "policy_pack_id": id}.
func policySnapshot(policy []string, packID string) string {
	sorted := append([]string(nil), policy...)
	slices.Sort(sorted)
	b, err := canonical.Marshal(map[string]any{"policy": sorted, "policy_pack_id": packID})
	if err != nil {
		return ""
	}
	return commitment.String(b)
}

// ResumeRun continues a run this organisation opened earlier (for example
// by a process that crashed) from the service's end of its chain: queued
// entries of the run are delivered first, then GET /api/v1/runs/{id}
// gives the last sequence and chain hash. It needs the service.
func (p *Pipeline) ResumeRun(ctx context.Context, runID string) (*Run, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	ar, err := p.serverRun(ctx, runID, "resume run")
	if err != nil {
		return nil, err
	}
	if ar.Status == api.RunSealed {
		return nil, fmt.Errorf("svc client: resume run %s: %w", runID, ErrRunSealed)
	}
	return p.continueRun(ar)
}

// serverRun delivers the run's queued entries, then reads the run from
// the service (GET /api/v1/runs/{id}); what names the caller in errors.
func (p *Pipeline) serverRun(ctx context.Context, runID, what string) (api.Run, error) {
	var ar api.Run
	if err := p.flushFor(ctx, runID); err != nil {
		return ar, fmt.Errorf("svc client: %s %s: %w", what, runID, err)
	}
	data, _, err := p.call(ctx, http.MethodGet, "/api/v1/runs/"+url.PathEscape(runID), nil)
	if err != nil {
		p.noteFailure(err)
		return ar, fmt.Errorf("svc client: %s %s: %w", what, runID, err)
	}
	if err := json.Unmarshal(data, &ar); err != nil {
		return ar, fmt.Errorf("svc client: %s %s: answer: %w", what, runID, err)
	}
	return ar, nil
}

// continueRun makes a Run that records after the service's last record.
func (p *Pipeline) continueRun(ar api.Run) (*Run, error) {
	prev, err := vpec.ParseHash(ar.LastChainHash)
	if err != nil {
		return nil, fmt.Errorf("svc client: run %s: last_chain_hash: %w", ar.RunID, err)
	}
	wf := ar.WorkflowID
	if wf == "" {
		wf = p.workflowID
	}
	env := ar.Environment
	if env == "" {
		env = p.env
	}
	return &Run{p: p, id: ar.RunID, workflowID: wf, orgID: ar.OrgID, env: env, policySnapshotHash: ar.PolicySnapshotHash,
		seq: ar.LastSequence, baseSeq: ar.LastSequence, prev: prev}, nil
}

// lineagePayload is the part of a lineage token's signed payload the
// client reads when the service is unreachable.
type lineagePayload struct {
	RunID         string `json:"run_id"`
	OrgID         string `json:"org_id"`
	LastSequence  int64  `json:"last_sequence"`
	LastChainHash string `json:"last_chain_hash"`
}

// resumeRequest is the body of POST /api/v1/runs/resume.
type resumeRequest struct {
	LineageToken string `json:"lineage_token"`
}

// ResumeFromLineage continues a run handed over with a lineage token (from
// RecordDelegation): the returned Run has the same run id and records from
// the token's last sequence on, chaining from its last chain hash. The
// service checks the token (POST /api/v1/runs/resume). When it is
// unreachable the token's payload is read locally and the records are
// queued; the service checks the chain when they are delivered.
func (p *Pipeline) ResumeFromLineage(ctx context.Context, token string) (*Run, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	body, err := json.Marshal(resumeRequest{LineageToken: token})
	if err != nil {
		return nil, err
	}
	p.autoFlush(ctx)
	if !p.down.Load() {
		data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs/resume", body)
		switch {
		case err == nil:
			var ar api.Run
			if err := json.Unmarshal(data, &ar); err != nil {
				return nil, fmt.Errorf("svc client: resume from lineage: answer: %w", err)
			}
			return p.continueRun(ar)
		case !unreachable(err):
			return nil, fmt.Errorf("svc client: resume from lineage: %w", err)
		}
		p.noteFailure(err)
	}
	p64, _, ok := strings.Cut(token, ".")
	raw, derr := base64.RawURLEncoding.DecodeString(p64)
	var l lineagePayload
	if !ok || derr != nil || json.Unmarshal(raw, &l) != nil || l.RunID == "" {
		return nil, fmt.Errorf("svc client: resume from lineage: the service is unreachable and the token is not <base64url payload>.<signature>: %w", ErrUnavailable)
	}
	r, err := p.continueRun(api.Run{RunID: l.RunID, OrgID: l.OrgID, LastSequence: l.LastSequence, LastChainHash: l.LastChainHash})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// RegisterCheck registers a check manifest (POST /api/v1/manifests). The
// id is content-addressed (see ManifestID), so registering again returns
// the same id. It needs the service.
func (p *Pipeline) RegisterCheck(ctx context.Context, m api.Manifest) (api.ManifestRegistration, error) {
	var reg api.ManifestRegistration
	if err := p.enter(); err != nil {
		return reg, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	body, err := document.Marshal(m.WithEmptyLists())
	if err != nil {
		return reg, fmt.Errorf("svc client: register check: %w", err)
	}
	p.autoFlush(ctx)
	data, _, err := p.call(ctx, http.MethodPost, "/api/v1/manifests", body)
	if err != nil {
		p.noteFailure(err)
		return reg, fmt.Errorf("svc client: register check %s: %w", m.Name, err)
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		return reg, fmt.Errorf("svc client: register check: answer: %w", err)
	}
	return reg, nil
}

// ManifestID computes a manifest's id locally, as the service does:
// "sha256:" of its RFC 8785 canonical JSON. Records may name it before
// the manifest is registered (for example while the service is down).
func ManifestID(m api.Manifest) (string, error) {
	raw, err := document.Marshal(m.WithEmptyLists())
	if err != nil {
		return "", err
	}
	c, err := document.SignedBytes(raw)
	if err != nil {
		return "", err
	}
	return commitment.String(c), nil
}

// reviewerRequest and reviewerResult mirror the service's reviewer key
// registration (POST /api/v1/reviewers).
type reviewerRequest struct {
	PublicKey string `json:"public_key"`
	Name      string `json:"name,omitempty"`
}

type reviewerResult struct {
	ReviewerKeyID string `json:"reviewer_key_id"`
	Name          string `json:"name,omitempty"`
	Created       bool   `json:"created"`
}

// RegisterReviewer registers a human reviewer's Ed25519 public key for the
// organisation (POST /api/v1/reviewers) and returns its reviewer key id
// (idempotent). It needs the service.
func (p *Pipeline) RegisterReviewer(ctx context.Context, pub ed25519.PublicKey, name string) (string, error) {
	if err := p.enter(); err != nil {
		return "", err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	pemKey, err := signing.MarshalPublicKeyPEM(pub)
	if err != nil {
		return "", fmt.Errorf("svc client: register reviewer: %w", err)
	}
	body, err := json.Marshal(reviewerRequest{PublicKey: string(pemKey), Name: name})
	if err != nil {
		return "", err
	}
	p.autoFlush(ctx)
	data, _, err := p.call(ctx, http.MethodPost, "/api/v1/reviewers", body)
	if err != nil {
		p.noteFailure(err)
		return "", fmt.Errorf("svc client: register reviewer: %w", err)
	}
	var res reviewerResult
	if err := json.Unmarshal(data, &res); err != nil {
		return "", fmt.Errorf("svc client: register reviewer: answer: %w", err)
	}
	return res.ReviewerKeyID, nil
}

// SetLogger attaches a callback that receives one LogEvent per record
// (docs/API.md), on the recording goroutine after the record is made (sent
// or queued) and before Record returns, outside the client's locks. With includeGapTypes the event's GapTypesEmitted is set
// (possibly empty); otherwise it is nil. A nil callback detaches.
func (p *Pipeline) SetLogger(cb func(LogEvent), includeGapTypes bool) {
	p.logMu.Lock()
	p.logger, p.logGaps = cb, includeGapTypes
	p.logMu.Unlock()
}

func (p *Pipeline) emit(rec *vpec.Record, runID, workflowID string) {
	p.logMu.RLock()
	cb, gaps := p.logger, p.logGaps
	p.logMu.RUnlock()
	if cb == nil {
		return
	}
	ev := LogEvent{RecordID: rec.RecordID, CommitmentHash: rec.CommitmentHash, CheckResult: string(rec.CheckResult),
		ProofLevel: string(rec.ProofLevel), WorkflowID: workflowID, RunID: runID, RecordedAt: rec.RecordedAt}
	if gaps {
		ev.GapTypesEmitted = []string{}
		if rec.RaisesProfileMissing() {
			ev.GapTypesEmitted = append(ev.GapTypesEmitted, vpec.GapModelProfileMissing)
		}
	}
	cb(ev)
}
