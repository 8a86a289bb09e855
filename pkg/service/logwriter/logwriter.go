// Package logwriter appends VPEC leaves to svc's transparency log and
// hands out receipts. The log is Tessera (github.com/transparency-dev/
// tessera): on its POSIX backend by default, a directory in the C2SP
// tlog-tiles layout that one process writes; on its MySQL backend
// (MariaDB 10.11 or MySQL 8.4) when several processes append to one log.
// Checkpoints are C2SP signed notes signed by the log's Ed25519 key (any
// crypto.Signer, so a key in an HSM works) and cosigned by the witnesses
// of a policy over the C2SP tlog-witness protocol.
//
// Append returns a durable index as soon as the entry is sequenced; a
// checkpoint covering it appears at the next checkpoint interval, and only
// then can a receipt be built (Receipt does not wait, AwaitReceipt does).
// See docs/TRANSPARENCY.md.
package logwriter

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"
	"github.com/transparency-dev/tessera/storage/posix"
)

// Defaults of Config.
const (
	// DefaultCheckpointInterval is how often a new checkpoint is
	// published while the log grows: the time to a receipt is about this
	// long (plus a witness round trip).
	DefaultCheckpointInterval = time.Second
	// MinCheckpointInterval is the POSIX backend's minimum.
	MinCheckpointInterval = 100 * time.Millisecond
	// MinCheckpointIntervalMySQL is the MySQL backend's minimum.
	MinCheckpointIntervalMySQL = time.Second
	// DefaultRepublishInterval is how often an unchanged checkpoint is
	// signed and sent to the witnesses again, so a log at rest shows it
	// is live.
	DefaultRepublishInterval = time.Minute
	// DefaultBatchMaxAge bounds how long Tessera waits for more entries
	// before it writes a batch. Append group-commits on its own (what
	// arrives during a write goes in the next batch), so this stays short.
	DefaultBatchMaxAge = time.Millisecond
	// DefaultBatchMaxSize is the largest sequencing batch.
	DefaultBatchMaxSize = 256
	// DefaultWitnessTimeout bounds one round of sending a checkpoint to
	// the witnesses.
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
	// ErrLogBusy reports a POSIX log directory another process is
	// writing: one process writes a POSIX log; several processes share a
	// log on the MySQL backend (Config.DB).
	ErrLogBusy = errors.New("another process is writing this log")
	// ErrClosed reports a call on a closed Log.
	ErrClosed = errors.New("log closed")
)

// Config configures a Log. Origin, Signer, and one of Dir and DB are
// required.
type Config struct {
	// Dir is the POSIX log's directory, created if missing. Everything
	// in it but .state/ is the public tlog-tiles tree. One process at a
	// time writes it (Open fails with ErrLogBusy for a second).
	Dir string
	// DB is a MySQL or MariaDB database (opened with the
	// github.com/go-sql-driver/mysql driver) holding the log in Tessera's
	// MySQL schema, which Open creates if missing: for several processes
	// appending to one log.
	DB *sql.DB
	// Origin names the log: the first line of its checkpoints and the
	// name of its key, a schema-less URL such as svc.example.com/log.
	Origin string
	// Signer holds the log's Ed25519 key: an ed25519.PrivateKey or any
	// crypto.Signer over an Ed25519 key (see tlog.NewNoteSigner).
	Signer crypto.Signer
	// WitnessPolicy lists the witnesses each checkpoint is sent to and
	// how many must cosign it. nil: none.
	//
	// Witnesses never hold up the log: each new checkpoint is sent to
	// them apart from appending and publishing. Until the policy is
	// satisfied for a checkpoint covering an entry, its receipt is
	// unwitnessed (Receipt.WitnessErr says why: ErrWitnessUnreachable,
	// ErrWitnessConflict, ...), OnWitness reports every failure, and a
	// verifier holding the policy rejects the receipt; a receipt asked
	// for again once a later checkpoint is cosigned is witnessed.
	WitnessPolicy *tlog.WitnessPolicy
	// WitnessTimeout bounds one round of sending a checkpoint to the
	// witnesses (default DefaultWitnessTimeout).
	WitnessTimeout time.Duration
	// OnWitness, if set, is called with the outcome of every checkpoint
	// sent to every witness, from the log's witnessing goroutines: it
	// must not block. It is how a server counts witness failures and logs
	// them.
	OnWitness func(WitnessEvent)
	// HTTPClient sends checkpoints to witnesses (default: a client with
	// http.DefaultTransport; WitnessTimeout bounds each round).
	HTTPClient *http.Client
	// CheckpointInterval (default DefaultCheckpointInterval, at least
	// MinCheckpointInterval on POSIX and MinCheckpointIntervalMySQL on
	// MySQL), RepublishInterval (default DefaultRepublishInterval),
	// BatchMaxAge and BatchMaxSize tune Tessera (see the defaults).
	CheckpointInterval time.Duration
	RepublishInterval  time.Duration
	BatchMaxAge        time.Duration
	BatchMaxSize       uint
}

// Log is an open transparency log. Its methods are safe for concurrent
// use.
type Log struct {
	key      tlog.LogKey
	self     *tlog.Verifier // the log key, no witnesses
	policy   *tlog.Verifier // the log key and the configured policy; nil without one
	add      tessera.AddFn
	shutdown func(context.Context) error
	reader   tessera.LogReader
	cancel   context.CancelFunc
	bg       context.Context
	group    groupCommit
	cosign   *cosigner // nil without a policy that requires cosignatures
	unlock   func()    // releases the POSIX writer lock
	poll     time.Duration
	pub      publishedWatch // without a cosigner: the newest published checkpoint
	closed   atomic.Bool
	closeMu  sync.Mutex
	stats    struct{ appended, duplicates atomic.Uint64 }
}

// Open opens (creating if needed) the log and starts publishing
// checkpoints (and sending them to witnesses). Close it to stop.
func Open(ctx context.Context, cfg Config) (*Log, error) {
	if (cfg.Dir == "") == (cfg.DB == nil) {
		return nil, fmt.Errorf("logwriter: give the log a directory (Config.Dir) or a MySQL database (Config.DB), not both")
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
	l := &Log{key: key, self: self, unlock: func() {}}

	minCI := MinCheckpointInterval
	if cfg.DB != nil {
		minCI = MinCheckpointIntervalMySQL
	}
	ci := cfg.CheckpointInterval
	if ci == 0 {
		ci = max(DefaultCheckpointInterval, minCI)
	}
	if ci < minCI {
		return nil, fmt.Errorf("logwriter: checkpoint interval %v is below the backend's minimum %v", ci, minCI)
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
	opts := tessera.NewAppendOptions().
		WithCheckpointSigner(ns).
		WithCheckpointInterval(ci).
		WithCheckpointRepublishInterval(rep).
		WithBatching(size, age).
		WithAntispam(tessera.DefaultAntispamInMemorySize, nil)

	var driver tessera.Driver
	if cfg.DB != nil {
		if driver, err = openMySQL(ctx, cfg.DB); err != nil {
			return nil, fmt.Errorf("logwriter: %w", err)
		}
	} else {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("logwriter: %w", err)
		}
		if l.unlock, err = lockWriter(cfg.Dir); err != nil {
			return nil, fmt.Errorf("logwriter: %w", err)
		}
		// Tessera's client for witnesses stays unused: svc's cosigner
		// sends checkpoints to witnesses.
		if driver, err = posix.New(ctx, posix.Config{Path: cfg.Dir}); err != nil {
			l.unlock()
			return nil, fmt.Errorf("logwriter: POSIX storage in %s: %w", cfg.Dir, err)
		}
	}
	// Tessera's background work (sequencing, publishing) and the
	// cosigner live until Close, not until Open's context ends.
	bg, cancel := context.WithCancel(context.Background())
	app, shutdown, reader, err := tessera.NewAppender(bg, driver, opts)
	if err != nil {
		cancel()
		l.unlock()
		return nil, fmt.Errorf("logwriter: open the log: %w", err)
	}
	l.add, l.shutdown, l.reader, l.cancel, l.bg = app.Add, shutdown, reader, cancel, bg

	if p := cfg.WitnessPolicy; p != nil && p.RequiresCosignatures() {
		hc := cfg.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		to := cfg.WitnessTimeout
		if to == 0 {
			to = DefaultWitnessTimeout
		}
		if l.policy, err = tlog.NewVerifier(key, p); err == nil {
			l.cosign, err = newCosigner(l, p, hc, cfg.OnWitness, to, max(ci, time.Second), rep)
		}
		if err != nil {
			_ = l.Close(ctx)
			return nil, fmt.Errorf("logwriter: witness policy: %w", err)
		}
		go l.cosign.run(bg, l.poll)
	} else {
		l.pub.s.changed = make(chan struct{})
		go l.watchPublished(bg)
	}
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
// sequenced. The entry is not yet covered by a checkpoint: see Receipt and
// AwaitReceipt.
//
// Appends are group-committed: while one batch is being written (a few
// synced file writes, or one transaction), the appends that arrive queue
// up and go to Tessera together as the next batch, so the log's
// throughput grows with the number of concurrent callers while one caller
// alone waits for one batch. If ctx ends first, Append returns its error,
// and the entry may still be appended; appending the same leaf again from
// this process returns its index (Dup).
func (l *Log) Append(ctx context.Context, leaf tlog.Leaf) (Appended, error) {
	if l.closed.Load() {
		return Appended{}, ErrClosed
	}
	p := &pending{entry: tessera.NewEntry(leaf.Marshal()), done: make(chan struct{})}
	l.group.mu.Lock()
	l.group.queue = append(l.group.queue, p)
	start := !l.group.running
	l.group.running = true
	l.group.mu.Unlock()
	if start {
		go l.commit()
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return Appended{}, fmt.Errorf("logwriter: append %s: %w (it may still be appended: append it again to learn its index)", leaf.VPECID, context.Cause(ctx))
	}
	if p.err != nil {
		return Appended{}, fmt.Errorf("logwriter: append %s: %w", leaf.VPECID, p.err)
	}
	if p.idx.IsDup {
		l.stats.duplicates.Add(1)
	} else {
		l.stats.appended.Add(1)
	}
	return Appended{Index: p.idx.Index, Dup: p.idx.IsDup}, nil
}

// pending is one queued Append.
type pending struct {
	entry *tessera.Entry
	done  chan struct{}
	idx   tessera.Index
	err   error
}

// groupCommit queues the appends that arrive while a batch is written.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*pending
	running bool
}

// commit hands the queued appends to Tessera as one batch, waits for
// their indexes, and repeats until the queue is empty.
func (l *Log) commit() {
	for {
		l.group.mu.Lock()
		batch := l.group.queue
		l.group.queue = nil
		if len(batch) == 0 {
			l.group.running = false
			l.group.mu.Unlock()
			return
		}
		l.group.mu.Unlock()
		futures := make([]tessera.IndexFuture, len(batch))
		for i, p := range batch {
			futures[i] = l.add(l.bg, p.entry)
		}
		for i, f := range futures {
			batch[i].idx, batch[i].err = f()
			close(batch[i].done)
		}
	}
}

// Checkpoint returns the latest checkpoint to show the world: the newest
// one the witnesses cosigned as the policy requires, or, without a policy
// or before any, the latest published (signature lines sorted).
func (l *Log) Checkpoint(ctx context.Context) ([]byte, error) {
	if l.cosign != nil {
		if s := l.cosign.state(); s.best != nil {
			return s.best, nil
		}
	}
	cp, _, err := l.latest(ctx)
	return cp, err
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
	// WitnessFailures counts checkpoints a witness failed to cosign, by
	// class: ErrWitnessUnreachable, ErrWitnessConflict,
	// ErrWitnessRejected.
	WitnessFailures map[error]uint64
	// Witnesses is the last event per witness of the policy.
	Witnesses []WitnessEvent
	// WitnessedSize is the size of the newest checkpoint the witnesses
	// cosigned as the policy requires (0 without a policy).
	WitnessedSize uint64
}

// Witnessing reports whether the log has a witness policy that requires
// cosignatures (its receipts are then witnessed or say why not).
func (l *Log) Witnessing() bool { return l.cosign != nil }

// Stats returns the counters.
func (l *Log) Stats() Stats {
	s := Stats{Appended: l.stats.appended.Load(), Duplicates: l.stats.duplicates.Load(), WitnessFailures: map[error]uint64{}}
	if l.cosign != nil {
		s.WitnessFailures, s.Witnesses = l.cosign.snapshot()
		s.WitnessedSize = l.cosign.state().bestSize
	}
	return s
}

// Close stops appending, waits (bounded by ctx) until a checkpoint covers
// every entry this process appended, and stops the log's background work.
func (l *Log) Close(ctx context.Context) error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed.Swap(true) {
		return nil
	}
	var err error
	if l.shutdown != nil {
		err = l.shutdown(ctx)
	}
	if l.cancel != nil {
		l.cancel()
	}
	l.unlock()
	if err != nil {
		return fmt.Errorf("logwriter: close: %w", err)
	}
	return nil
}

// entryBundleWidth is the number of entries in a full entry bundle.
const entryBundleWidth = layout.EntryBundleWidth
