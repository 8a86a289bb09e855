// Package logwriter appends VPEC leaves to svc's transparency log and
// hands out receipts. The log is Tessera (github.com/transparency-dev/
// tessera) on its POSIX backend: a directory in the C2SP tlog-tiles layout
// that a file server can serve as is, with C2SP signed-note checkpoints
// signed by the log's Ed25519 key (any crypto.Signer, so a key in an HSM
// works) and cosigned by the witnesses of a policy over the C2SP
// tlog-witness protocol.
//
// Append returns a durable index as soon as the entry is sequenced; a
// checkpoint covering it appears at the next checkpoint interval, and only
// then can a receipt be built (Receipt does not wait, AwaitReceipt does).
// Several processes may append to one directory at once (Tessera
// serialises them with POSIX advisory locks), on one host or on a shared
// filesystem with coherent POSIX locks such as CephFS, not NFS. See
// docs/TRANSPARENCY.md.
package logwriter

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gov/svc/pkg/tlog"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"
	"github.com/transparency-dev/tessera/storage/posix"
)

// Defaults of Config.
const (
	// DefaultCheckpointInterval is how often a new checkpoint is
	// published (and sent to the witnesses) while the log grows: the
	// time to receipt is about this long.
	DefaultCheckpointInterval = time.Second
	// MinCheckpointInterval is the POSIX backend's minimum.
	MinCheckpointInterval = 100 * time.Millisecond
	// DefaultRepublishInterval is how often an unchanged checkpoint is
	// signed and witnessed again, so a log at rest still shows it is live
	// and a witness that was away cosigns it.
	DefaultRepublishInterval = time.Minute
	// DefaultBatchMaxAge bounds how long Append waits for other entries
	// to share a sequencing batch (one set of synced file writes).
	DefaultBatchMaxAge = 2 * time.Millisecond
	// DefaultBatchMaxSize is the largest sequencing batch.
	DefaultBatchMaxSize = 256
	// DefaultWitnessTimeout bounds the wait for the witnesses of one
	// checkpoint; a checkpoint is published when it runs out, cosigned by
	// whoever answered (see Config.WitnessPolicy).
	DefaultWitnessTimeout = 5 * time.Second
)

// Errors, matchable with errors.Is.
var (
	// ErrNotIntegrated reports a receipt asked for before a checkpoint
	// covers the entry: ask again after the checkpoint interval, or use
	// AwaitReceipt.
	ErrNotIntegrated = errors.New("no checkpoint covers the entry yet")
	// ErrUnwitnessed reports a receipt whose checkpoint lacks the
	// cosignatures the witness policy requires.
	ErrUnwitnessed = errors.New("checkpoint not witnessed")
	// ErrWitnessUnreachable reports a witness that could not be reached
	// or did not answer in time.
	ErrWitnessUnreachable = errors.New("witness unreachable")
	// ErrWitnessConflict reports a witness that refused a checkpoint
	// because it has cosigned a different history of this log: a split
	// view, a fork or a rollback (HTTP 409 or 422 from tlog-witness).
	ErrWitnessConflict = errors.New("witness saw a different history of this log")
	// ErrWitnessRejected reports a witness that refused a checkpoint for
	// another reason: it does not know this log (404), does not trust
	// its key (403), or answered otherwise.
	ErrWitnessRejected = errors.New("witness refused the checkpoint")
	// ErrClosed reports a call on a closed Log.
	ErrClosed = errors.New("log closed")
)

// Config configures a Log. Dir, Origin and Signer are required.
type Config struct {
	// Dir is the log's directory, created if missing. Everything in it
	// but .state/ is the public tlog-tiles tree.
	Dir string
	// Origin names the log: the first line of its checkpoints and the
	// name of its key, a schema-less URL such as svc.example.com/log.
	Origin string
	// Signer holds the log's Ed25519 key: an ed25519.PrivateKey or any
	// crypto.Signer over an Ed25519 key (see tlog.NewNoteSigner).
	Signer crypto.Signer
	// WitnessPolicy lists the witnesses each checkpoint is sent to and
	// how many must cosign it. nil: none.
	//
	// An unreachable or refusing witness does not stop the log: a
	// checkpoint is published with the cosignatures that arrived within
	// WitnessTimeout (Tessera's fail-open mode), its receipts say they are
	// unwitnessed and why (Receipt.WitnessErr), OnWitness is called, and
	// a later checkpoint that satisfies the policy makes later receipts
	// witnessed. Verifiers apply the policy themselves and reject an
	// unwitnessed receipt.
	WitnessPolicy *tlog.WitnessPolicy
	// WitnessTimeout bounds the wait for witnesses per checkpoint
	// (default DefaultWitnessTimeout).
	WitnessTimeout time.Duration
	// OnWitness, if set, is called for every answer of (or failure to
	// reach) a witness, from Tessera's publishing goroutine: it must not
	// block. It is how a server counts witness failures and logs them.
	OnWitness func(WitnessEvent)
	// HTTPClient sends checkpoints to witnesses (default: a client with
	// http.DefaultTransport; its Transport is wrapped to observe answers).
	HTTPClient *http.Client
	// CheckpointInterval (default DefaultCheckpointInterval, at least
	// MinCheckpointInterval), RepublishInterval (default
	// DefaultRepublishInterval), BatchMaxAge and BatchMaxSize tune
	// Tessera (see the defaults).
	CheckpointInterval time.Duration
	RepublishInterval  time.Duration
	BatchMaxAge        time.Duration
	BatchMaxSize       uint
}

// Log is an open transparency log. Its methods are safe for concurrent
// use.
type Log struct {
	dir      string
	key      tlog.LogKey
	self     *tlog.Verifier // the log key, no witnesses
	policy   *tlog.Verifier // the log key and the configured policy; nil without one
	add      tessera.AddFn
	shutdown func(context.Context) error
	reader   tessera.LogReader
	cancel   context.CancelFunc
	watch    *witnessWatch
	poll     time.Duration
	closed   atomic.Bool
	stats    stats
	closeMu  sync.Mutex
}

type stats struct {
	appended, duplicates atomic.Uint64
}

// Open opens (creating if needed) the log in cfg.Dir and starts
// publishing checkpoints. Close it to stop.
func Open(ctx context.Context, cfg Config) (*Log, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("logwriter: no log directory (Config.Dir)")
	}
	ns, err := tlog.NewNoteSigner(cfg.Origin, cfg.Signer)
	if err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}
	key, err := tlog.NewLogKey(cfg.Origin, cfg.Signer.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}
	none, err := tlog.ParseWitnessPolicy([]byte("quorum none\n"))
	if err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}
	self, err := tlog.NewVerifier(key, none)
	if err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}
	l := &Log{dir: cfg.Dir, key: key, self: self}
	ci := cfg.CheckpointInterval
	if ci == 0 {
		ci = DefaultCheckpointInterval
	}
	if ci < MinCheckpointInterval {
		return nil, fmt.Errorf("logwriter: checkpoint interval %v is below the POSIX backend's minimum %v", ci, MinCheckpointInterval)
	}
	l.poll = min(ci/5, 50*time.Millisecond)
	rep := cfg.RepublishInterval
	if rep == 0 {
		rep = DefaultRepublishInterval
	}
	rep = max(rep, ci)
	age, size := cfg.BatchMaxAge, cfg.BatchMaxSize
	if age == 0 {
		age = DefaultBatchMaxAge
	}
	if size == 0 {
		size = DefaultBatchMaxSize
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}

	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	l.watch = newWitnessWatch(base, cfg.WitnessPolicy, cfg.OnWitness)
	hc.Transport = l.watch

	opts := tessera.NewAppendOptions().
		WithCheckpointSigner(ns).
		WithCheckpointInterval(ci).
		WithCheckpointRepublishInterval(rep).
		WithBatching(size, age).
		WithAntispam(tessera.DefaultAntispamInMemorySize, nil)
	if cfg.WitnessPolicy != nil && cfg.WitnessPolicy.RequiresCosignatures() {
		group, err := tessera.NewWitnessGroupFromPolicy(cfg.WitnessPolicy.Text())
		if err != nil {
			return nil, fmt.Errorf("logwriter: witness policy: %w", err)
		}
		to := cfg.WitnessTimeout
		if to == 0 {
			to = DefaultWitnessTimeout
		}
		opts.WithWitnesses(group, &tessera.WitnessOptions{Timeout: to, FailOpen: true})
		if l.policy, err = tlog.NewVerifier(key, cfg.WitnessPolicy); err != nil {
			return nil, fmt.Errorf("logwriter: %w", err)
		}
	}

	driver, err := posix.New(ctx, posix.Config{Path: cfg.Dir, HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("logwriter: POSIX storage in %s: %w", cfg.Dir, err)
	}
	// Tessera's background work (sequencing, publishing, witnessing)
	// lives until Close, not until Open's context ends.
	bg, cancel := context.WithCancel(context.Background())
	app, shutdown, reader, err := tessera.NewAppender(bg, driver, opts)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("logwriter: open the log in %s: %w", cfg.Dir, err)
	}
	l.add, l.shutdown, l.reader, l.cancel = app.Add, shutdown, reader, cancel
	return l, nil
}

// Key returns the log's public key: what verifiers trust (its text form is
// the C2SP note verifier key that goes in the trust bundle).
func (l *Log) Key() tlog.LogKey { return l.key }

// Appended is the result of Append.
type Appended struct {
	// Index is the entry's index in the log, durable: the entry stays at
	// this index even if the process dies now.
	Index uint64
	// Dup is true when the same leaf was appended before (by this
	// process) and Index is its earlier index.
	Dup bool
}

// Append adds a leaf to the log and returns its index once it is durably
// sequenced (within BatchMaxAge plus the time to write a batch). The
// entry is not yet covered by a checkpoint: see Receipt and AwaitReceipt.
func (l *Log) Append(ctx context.Context, leaf tlog.Leaf) (Appended, error) {
	if l.closed.Load() {
		return Appended{}, ErrClosed
	}
	idx, err := l.add(ctx, tessera.NewEntry(leaf.Marshal()))()
	if err != nil {
		return Appended{}, fmt.Errorf("logwriter: append %s: %w", leaf.VPECID, err)
	}
	if idx.IsDup {
		l.stats.duplicates.Add(1)
	} else {
		l.stats.appended.Add(1)
	}
	return Appended{Index: idx.Index, Dup: idx.IsDup}, nil
}

// Checkpoint returns the latest published checkpoint, as published (its
// signature lines in Tessera's order).
func (l *Log) Checkpoint(ctx context.Context) ([]byte, error) {
	cp, err := l.reader.ReadCheckpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("logwriter: read the checkpoint: %w", err)
	}
	return cp, nil
}

// ConsistencyProof returns the RFC 6962 consistency proof from the tree of
// size older to the tree of size newer, from the log's tiles. newer must
// not exceed the latest checkpoint's size.
func (l *Log) ConsistencyProof(ctx context.Context, older, newer uint64) ([][]byte, error) {
	pb, err := client.NewProofBuilder(ctx, newer, l.reader.ReadTile)
	if err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}
	p, err := pb.ConsistencyProof(ctx, older, newer)
	if err != nil {
		return nil, fmt.Errorf("logwriter: consistency proof %d→%d: %w", older, newer, err)
	}
	return p, nil
}

// Stats counts what this process did.
type Stats struct {
	Appended   uint64 // leaves appended
	Duplicates uint64 // appends that found the same leaf already appended
	// WitnessFailures counts witness answers that were failures, by
	// class: ErrWitnessUnreachable, ErrWitnessConflict,
	// ErrWitnessRejected.
	WitnessFailures map[error]uint64
	// Witnesses is the last event per witness of the policy.
	Witnesses []WitnessEvent
}

// Stats returns the counters.
func (l *Log) Stats() Stats {
	f, last := l.watch.snapshot()
	return Stats{Appended: l.stats.appended.Load(), Duplicates: l.stats.duplicates.Load(), WitnessFailures: f, Witnesses: last}
}

// Close stops appending, waits (bounded by ctx) until a checkpoint covers
// every entry this process appended, and stops the log's background
// work.
func (l *Log) Close(ctx context.Context) error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed.Swap(true) {
		return nil
	}
	err := l.shutdown(ctx)
	l.cancel()
	if err != nil {
		return fmt.Errorf("logwriter: close: %w", err)
	}
	return nil
}

// entryBundleWidth is the number of entries in a full entry bundle.
const entryBundleWidth = layout.EntryBundleWidth
