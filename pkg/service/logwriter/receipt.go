package logwriter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/transparency-dev/tessera/client"

	"github.com/svc-gov/svc/pkg/core/tlog"
)

// Receipt is a receipt for one entry, with the log's view of its
// witnessing.
type Receipt struct {
	// JSON is the receipt document (tlog.Receipt's canonical JSON), what
	// a client stores beside the VPEC and a verifier checks.
	JSON []byte
	// Receipt is the parsed document.
	Receipt *tlog.Receipt
	// Checkpoint is the receipt's checkpoint, verified against the log
	// key (and its cosignatures against the policy, if any).
	Checkpoint *tlog.Checkpoint
	// Witnessed is true when the log has a witness policy that requires
	// cosignatures and the receipt's checkpoint satisfies it.
	Witnessed bool
	// WitnessErr is non-nil when the policy requires cosignatures and the
	// checkpoint lacks them: it matches ErrUnwitnessed and
	// tlog.ErrWitnessPolicy, and each witness's last failure
	// (ErrWitnessUnreachable, ErrWitnessConflict, ErrWitnessRejected).
	// The receipt is still a valid proof of inclusion under the log's
	// key; a verifier with the policy rejects it. A later receipt for the
	// same index, once a checkpoint is witnessed, is witnessed.
	WitnessErr error
}

// errWitnessPending is the cause of an unwitnessed receipt whose
// checkpoint the witnesses have not answered for yet.
var errWitnessPending = errors.New("the witnesses have not answered for a checkpoint covering the entry yet")

// Receipt returns a receipt for the entry at index without waiting: with
// a witness policy, against the newest checkpoint the witnesses cosigned
// if it covers the entry, else (unwitnessed, with the reason) against the
// latest published one; before a checkpoint covers the entry it fails
// with ErrNotIntegrated.
func (l *Log) Receipt(ctx context.Context, index uint64) (*Receipt, error) {
	if l.closed.Load() {
		return nil, ErrClosed
	}
	if l.cosign != nil {
		if s := l.cosign.state(); s.bestSize > index {
			return l.build(ctx, index, s.best, nil)
		}
	}
	cp, size, err := l.latest(ctx)
	if err != nil {
		return nil, err
	}
	if size <= index {
		return nil, fmt.Errorf("logwriter: receipt for index %d: %w (the latest checkpoint has %d entries; checkpoints follow every checkpoint interval)", index, ErrNotIntegrated, size)
	}
	if l.cosign != nil {
		if wcp, cause, ok := l.cosign.state().covering(index); ok {
			return l.build(ctx, index, wcp, cause)
		}
		return l.build(ctx, index, cp, errWitnessPending)
	}
	return l.build(ctx, index, cp, nil)
}

// AwaitReceipt waits for the receipt of the entry at index and returns
// it. Without a witness policy that is as soon as a checkpoint covers the
// entry (about one checkpoint interval after Append). With one, it waits
// until the witnesses cosigned a checkpoint covering it, or until they
// failed to (the receipt is then unwitnessed and says why: a round of
// witnessing ends within WitnessTimeout). It gives up when ctx ends.
func (l *Log) AwaitReceipt(ctx context.Context, index uint64) (*Receipt, error) {
	t := time.NewTicker(l.poll)
	defer t.Stop()
	for {
		if l.closed.Load() {
			return nil, ErrClosed
		}
		var changed <-chan struct{}
		if l.cosign != nil {
			s := l.cosign.state()
			if cp, cause, ok := s.covering(index); ok {
				return l.build(ctx, index, cp, cause)
			}
			changed = s.changed
		} else {
			s := l.pub.state()
			if s.size > index {
				return l.build(ctx, index, s.cp, nil)
			}
			changed = s.changed
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("logwriter: waiting for the receipt of index %d: %w", index, context.Cause(ctx))
		case <-changed:
		case <-t.C:
		}
	}
}

// publishedWatch is the newest published checkpoint one goroutine
// (watchPublished) has read and verified, shared by every receipt waiting
// for a checkpoint: N waiters cost one read a poll, not N.
type publishedWatch struct {
	mu sync.Mutex
	s  published
}

// published is a verified published checkpoint (sorted signature lines)
// and its size; changed is closed when a larger one is seen.
type published struct {
	cp      []byte
	size    uint64
	changed chan struct{}
}

func (w *publishedWatch) state() published {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.s
}

// watchPublished reads the published checkpoint every poll until ctx
// ends, and wakes the waiters when it grew.
func (l *Log) watchPublished(ctx context.Context) {
	t := time.NewTicker(l.poll)
	defer t.Stop()
	for {
		if cp, size, err := l.latest(ctx); err == nil {
			l.pub.mu.Lock()
			if size > l.pub.s.size || l.pub.s.cp == nil {
				close(l.pub.s.changed)
				l.pub.s = published{cp: cp, size: size, changed: make(chan struct{})}
			}
			l.pub.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// latest reads the published checkpoint, verifies it against the log key
// and returns it with its signature lines sorted, and its size.
func (l *Log) latest(ctx context.Context) ([]byte, uint64, error) {
	raw, err := l.reader.ReadCheckpoint(ctx)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, fmt.Errorf("logwriter: %w (no checkpoint published yet)", ErrNotIntegrated)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("logwriter: read the checkpoint: %w", err)
	}
	sorted, err := tlog.SortSignatures(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("logwriter: the published checkpoint: %w", err)
	}
	cp, err := l.self.VerifyCheckpoint(sorted)
	if err != nil {
		return nil, 0, fmt.Errorf("logwriter: the published checkpoint: %w", err)
	}
	return sorted, cp.Size, nil
}

// build makes and checks the receipt of index against checkpoint cp
// (sorted signature lines); cause is why cp may lack cosignatures.
func (l *Log) build(ctx context.Context, index uint64, cp []byte, cause error) (*Receipt, error) {
	ck, err := l.self.VerifyCheckpoint(cp)
	if err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}
	pb, err := client.NewProofBuilder(ctx, ck.Size, l.reader.ReadTile)
	if err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}
	hashes, err := pb.InclusionProof(ctx, index)
	if err != nil {
		return nil, fmt.Errorf("logwriter: inclusion proof for index %d in %d entries: %w", index, ck.Size, err)
	}
	bundle, err := client.GetEntryBundle(ctx, l.reader.ReadEntryBundle, index/entryBundleWidth, ck.Size)
	if err != nil {
		return nil, fmt.Errorf("logwriter: entry %d: %w", index, err)
	}
	i := index % entryBundleWidth
	if i >= uint64(len(bundle.Entries)) {
		return nil, fmt.Errorf("logwriter: entry %d: its bundle holds %d entries", index, len(bundle.Entries))
	}
	leaf, err := tlog.ParseLeaf(bundle.Entries[i])
	if err != nil {
		return nil, fmt.Errorf("logwriter: entry %d: %w", index, err)
	}
	r := &tlog.Receipt{LogIndex: index, Leaf: leaf, Checkpoint: cp, InclusionProof: make([][32]byte, len(hashes))}
	for j, h := range hashes {
		if len(h) != 32 {
			return nil, fmt.Errorf("logwriter: inclusion proof for index %d: a hash of %d bytes", index, len(h))
		}
		copy(r.InclusionProof[j][:], h)
	}
	doc, err := r.Marshal()
	if err != nil {
		return nil, fmt.Errorf("logwriter: %w", err)
	}
	subject := tlog.Subject{VPECID: leaf.VPECID, Digest: leaf.Digest}
	// Check it as a verifier will, so the log never hands out a receipt
	// that does not verify under its own key.
	v, err := l.self.VerifyReceipt(doc, subject)
	if err != nil {
		return nil, fmt.Errorf("logwriter: the receipt for index %d does not verify: %w", index, err)
	}
	out := &Receipt{JSON: doc, Receipt: r, Checkpoint: v.Checkpoint}
	if l.policy != nil {
		w, err := l.policy.VerifyReceipt(doc, subject)
		if err != nil {
			out.WitnessErr = errors.Join(fmt.Errorf("logwriter: receipt for index %d: %w: %w", index, ErrUnwitnessed, err), cause)
		} else {
			out.Witnessed, out.Checkpoint = true, w.Checkpoint
		}
	}
	return out, nil
}
