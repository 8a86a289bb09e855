// Package monitor reads svc's transparency log as an auditor does: from a
// checkpoint it verified before to the log's latest, it checks that the
// log only grew (the entries it reads, hashed onto the tree it had, give
// the new checkpoint's root) and lists the entries of the organisations
// whose monitoring keys it holds, so an organisation cannot show its
// auditor some VPECs and hide others, and the log cannot show two
// auditors two histories without one of them noticing.
package logmonitor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"
)

// ErrUnreadableEntry reports an entry of the log that is not a leaf this
// monitor can read (another leaf version): its organisation cannot be
// known, so the listing would be incomplete. Upgrade the monitor.
var ErrUnreadableEntry = errors.New("log entry cannot be read")

// Source reads a log in the C2SP tlog-tiles layout. Tessera's
// client.HTTPFetcher and client.FileFetcher are Sources; see HTTPSource
// and DirSource.
type Source interface {
	ReadCheckpoint(ctx context.Context) ([]byte, error)
	ReadTile(ctx context.Context, level, index uint64, p uint8) ([]byte, error)
	ReadEntryBundle(ctx context.Context, index uint64, p uint8) ([]byte, error)
}

// HTTPSource reads the log served at base (e.g.
// https://svc.example.com/log/) with c (http.DefaultClient if nil).
func HTTPSource(base string, c *http.Client) (Source, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("monitor: log URL %q: want http(s)://host/path/ where the log's checkpoint and tile/ are", base)
	}
	if c == nil {
		c = http.DefaultClient
	}
	f, err := client.NewHTTPFetcher(u, c)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	return f, nil
}

// DirSource reads the log in a directory (the log writer's, or a copy).
func DirSource(dir string) Source { return client.FileFetcher{Root: dir} }

// Options say what to check and list.
type Options struct {
	// Verifier holds the log key and the witness policy every checkpoint
	// read must satisfy. Required.
	Verifier *tlog.Verifier
	// Since is a checkpoint verified before (the state a previous Run
	// returned as Result.To.Note); nil reads the log from its start.
	Since []byte
	// Keys are the monitoring keys of the organisations whose entries to
	// list.
	Keys []tlog.OrgKey
	// Workflows, if not empty, lists only entries of these workflows;
	// the organisations' entries of other workflows are counted in
	// Result.OtherWorkflows.
	Workflows []string
}

// Entry is one listed entry.
type Entry struct {
	Index       uint64
	VPECID      string
	Digest      [32]byte
	IssuedAt    time.Time
	Org         string
	Workflow    string // "" when not among Options.Workflows
	Environment string
	Clean       bool
	// Duplicate is true when the same VPEC was listed before at a lower
	// index (an append repeated after a crash; harmless).
	Duplicate bool
}

// Result is what a Run verified and found.
type Result struct {
	// From is the checkpoint the run started from (nil: the log's
	// start); To is the log's latest checkpoint, verified, and consistent
	// with From: keep To.Note as the Since of the next run.
	From, To *tlog.Checkpoint
	// Entries are the keys' organisations' entries in (From, To].
	Entries []Entry
	// Scanned is the number of entries read.
	Scanned uint64
	// OtherWorkflows counts the organisations' entries of workflows not
	// among Options.Workflows.
	OtherWorkflows int
}

// Run reads the log from Options.Since to its latest checkpoint. It fails
// with tlog.ErrLogShrank if the latest checkpoint is smaller than Since,
// with tlog.ErrInconsistent if the log's tiles or entries do not extend
// the tree Since committed to (a split view or a rewritten history) or do
// not hash to the latest checkpoint, with the verifier's errors if a
// checkpoint is not the log's or lacks the policy's cosignatures, and
// with ErrUnreadableEntry for an entry it cannot read.
func Run(ctx context.Context, src Source, opts Options) (*Result, error) {
	v := opts.Verifier
	if v == nil {
		return nil, fmt.Errorf("monitor: no verifier (log key and witness policy)")
	}
	raw, err := src.ReadCheckpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("monitor: read the log's checkpoint: %w", err)
	}
	to, err := v.VerifyCheckpoint(raw)
	if err != nil {
		return nil, fmt.Errorf("monitor: the log's checkpoint: %w", err)
	}
	res := &Result{To: to}
	rf := compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	rng := rf.NewEmptyRange(0)
	if opts.Since != nil {
		from, err := v.VerifyCheckpoint(opts.Since)
		if err != nil {
			return nil, fmt.Errorf("monitor: the checkpoint to start from: %w", err)
		}
		res.From = from
		if to.Size < from.Size {
			return nil, fmt.Errorf("monitor: %w: the log's checkpoint has %d entries, the one verified before %d", tlog.ErrLogShrank, to.Size, from.Size)
		}
		if to.Size == from.Size && to.Root != from.Root {
			return nil, fmt.Errorf("monitor: %w: the log's checkpoint and the one verified before both have %d entries and different roots: a split view", tlog.ErrInconsistent, to.Size)
		}
		if from.Size > 0 {
			nodes, err := client.FetchRangeNodes(ctx, from.Size, src.ReadTile)
			if err != nil {
				return nil, fmt.Errorf("monitor: read the tree of %d entries: %w", from.Size, err)
			}
			if rng, err = rf.NewRange(0, from.Size, nodes); err != nil {
				return nil, fmt.Errorf("monitor: %w: the log's tiles for %d entries: %v", tlog.ErrInconsistent, from.Size, err)
			}
			root, err := rng.GetRootHash(nil)
			if err != nil || string(root) != string(from.Root[:]) {
				return nil, fmt.Errorf("monitor: %w: the log's tree of %d entries is not the one its checkpoint verified before commits to: the log shows another history (a split view)", tlog.ErrInconsistent, from.Size)
			}
		}
	}
	seen := map[string]bool{}
	workflows := opts.Workflows
	for b := rng.End() / layout.EntryBundleWidth; b*layout.EntryBundleWidth < to.Size; b++ {
		bundle, err := client.GetEntryBundle(ctx, src.ReadEntryBundle, b, to.Size)
		if err != nil {
			return nil, fmt.Errorf("monitor: read entries: %w", err)
		}
		first := b * layout.EntryBundleWidth
		want := min(to.Size-first, layout.EntryBundleWidth)
		if uint64(len(bundle.Entries)) > want {
			// A source may return a fuller bundle than asked for (Tessera's
			// MySQL storage does): the entries past the checkpoint are not
			// read.
			bundle.Entries = bundle.Entries[:want]
		}
		if uint64(len(bundle.Entries)) != want {
			return nil, fmt.Errorf("monitor: %w: entry bundle %d holds %d entries, the checkpoint implies %d", tlog.ErrInconsistent, b, len(bundle.Entries), want)
		}
		for i, data := range bundle.Entries {
			index := first + uint64(i)
			if index < rng.End() {
				continue
			}
			h := tlog.LeafHash(data)
			if err := rng.Append(h[:], nil); err != nil {
				return nil, fmt.Errorf("monitor: %w", err)
			}
			res.Scanned++
			leaf, err := tlog.ParseLeaf(data)
			if err != nil {
				return nil, fmt.Errorf("monitor: %w: entry %d: %w", ErrUnreadableEntry, index, err)
			}
			for _, k := range opts.Keys {
				o, mine, err := k.Open(leaf, workflows...)
				if err != nil {
					return nil, fmt.Errorf("monitor: %w: entry %d: %w", ErrUnreadableEntry, index, err)
				}
				if !mine {
					continue
				}
				if len(workflows) > 0 && o.Workflow == "" {
					res.OtherWorkflows++
					continue
				}
				res.Entries = append(res.Entries, Entry{
					Index: index, VPECID: leaf.VPECID, Digest: leaf.Digest, IssuedAt: leaf.IssuedAt,
					Org: o.Org, Workflow: o.Workflow, Environment: o.Environment, Clean: o.Clean,
					Duplicate: seen[leaf.VPECID],
				})
				seen[leaf.VPECID] = true
			}
		}
	}
	root, err := rng.GetRootHash(nil)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	if rng.End() != to.Size || string(root) != string(to.Root[:]) {
		return nil, fmt.Errorf("monitor: %w: the log's entries do not hash to its checkpoint of %d entries (served entries differ from the tree)", tlog.ErrInconsistent, to.Size)
	}
	return res, nil
}

// ConsistencyProof reads from the log's tiles the RFC 6962 consistency
// proof from its tree of older entries to its tree of newer entries (for
// tlog.Verifier.VerifyConsistency, which needs no trust in the source).
func ConsistencyProof(ctx context.Context, src Source, older, newer uint64) ([][]byte, error) {
	pb, err := client.NewProofBuilder(ctx, newer, src.ReadTile)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	p, err := pb.ConsistencyProof(ctx, older, newer)
	if err != nil {
		return nil, fmt.Errorf("monitor: consistency proof %d→%d: %w", older, newer, err)
	}
	return p, nil
}
