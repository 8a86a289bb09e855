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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
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
	// WaitForReceipt makes Run.Close wait, within Timeout, for the VPEC's
	// transparency log receipt (about one checkpoint interval of the
	// service, 1 s by default) before it returns. Either way the receipt
	// is fetched in the background and kept (VPECResult.Receipt); a close
	// whose receipt does not come in time still returns its VPEC.
	WaitForReceipt bool
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
	// waitReceipt is Options.WaitForReceipt.
	waitReceipt bool

	// life: public entry points hold it shared; Close takes it exclusively.
	life   sync.RWMutex
	closed bool

	// flushSem admits one flusher at a time.
	flushSem chan struct{}

	// down is set while the service is unreachable; a prober clears it.
	down atomic.Bool
	// noBatch is set once the service answered that it has no batch API
	// (an older service): records then go one by one.
	noBatch atomic.Bool
	// batchLimit is the most records a flush sends in one batch request
	// (0: api.MaxBatchRecords). A batch that runs out of the Timeout halves
	// it; a batch delivered doubles it back.
	batchLimit atomic.Int32
	stateMu    sync.Mutex
	probing    bool
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup

	logMu   sync.RWMutex
	logger  func(LogEvent)
	logGaps bool
}

// NewPipeline checks opts, applies defaults and opens (and locks) the
// queue file. It makes no network call.
func NewPipeline(opts Options) (*Pipeline, error) {
	key, base, env, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	wf := opts.WorkflowID
	if wf == "" {
		wf = DefaultWorkflowID
	}
	if !api.ValidWorkflowID(wf) {
		return nil, fmt.Errorf("svc client: workflow id %q must be 1-128 letters, digits or ._:-", wf)
	}
	if opts.ProcessContextHash != "" {
		if err := commitment.Validate(opts.ProcessContextHash); err != nil {
			return nil, fmt.Errorf("svc client: process context hash: %w", err)
		}
	}
	p := &Pipeline{
		key: key, keyID: api.KeyID(key), baseURL: base, workflowID: wf, surfaceID: opts.SurfaceID,
		policy: slices.Clone(opts.Policy), pch: opts.ProcessContextHash, env: env,
		hc: opts.HTTPClient, timeout: opts.Timeout, retry: opts.RetryInterval, onFlushErr: opts.OnFlushError, waitReceipt: opts.WaitForReceipt,
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
	if opts.QueuePath == "" {
		// The default file's name is a hash: say whose it is, for
		// ReadQueue (svc queue status).
		writeQueueMeta(path, base, p.keyID)
	}
	p.q = q
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// resolve applies the defaults of the key and base URL (the environment,
// then DefaultBaseURL) and checks them.
func resolve(opts Options) (key, base string, env vpec.Environment, err error) {
	key = opts.APIKey
	if key == "" {
		key = os.Getenv(EnvAPIKey)
	}
	if key == "" {
		return "", "", "", ErrNoAPIKey
	}
	env, ok := api.EnvironmentOf(key)
	if !ok {
		return "", "", "", ErrInvalidAPIKey
	}
	base = opts.BaseURL
	if base == "" {
		base = os.Getenv(EnvBaseURL)
	}
	if base == "" {
		base = DefaultBaseURL
	}
	base = strings.TrimRight(base, "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", "", fmt.Errorf("svc client: base URL %q must be http(s)://host[:port]", base)
	}
	return key, base, env, nil
}

// QueuePathFor is the queue file a Pipeline made with opts uses (its
// QueuePath, or the default one for its base URL and key), found without
// opening or creating anything.
func QueuePathFor(opts Options) (string, error) {
	if opts.QueuePath != "" {
		return opts.QueuePath, nil
	}
	key, base, _, err := resolve(opts)
	if err != nil {
		return "", err
	}
	return DefaultQueuePath(base, key), nil
}

// DefaultQueuePath is the queue file a Pipeline uses for a base URL and API
// key when Options.QueuePath is empty: under the user's cache directory,
// named by a hash of the base URL and the key's public id (never the key).
func DefaultQueuePath(baseURL, apiKey string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	sum := sha256.Sum256([]byte(strings.TrimRight(baseURL, "/") + api.KeyID(apiKey)))
	return filepath.Join(dir, "svc", "queue-"+hex.EncodeToString(sum[:])[:16]+".jsonl")
}

// TestMode reports whether the API key is a sandbox key (pk_sb_).
func (p *Pipeline) TestMode() bool { return p.env == vpec.Sandbox }

// Environment is sandbox or production, from the key's prefix.
func (p *Pipeline) Environment() vpec.Environment { return p.env }

// WorkflowID is the pipeline's workflow identity.
func (p *Pipeline) WorkflowID() string { return p.workflowID }

// BaseURL is the address of the service the pipeline talks to.
func (p *Pipeline) BaseURL() string { return p.baseURL }

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
