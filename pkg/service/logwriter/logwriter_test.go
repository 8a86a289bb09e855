package logwriter_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
)

// TestAppendReceipt: entries appended concurrently get distinct durable
// indexes at once; a receipt is refused (ErrNotIntegrated) until a
// checkpoint covers the entry, then every receipt verifies offline for
// its VPEC and no other; appending the same leaf again returns its index.
func TestAppendReceipt(t *testing.T) {
	ctx := context.Background()
	l := tlogtest.OpenLog(t, t.TempDir(), "log", func(c *logwriter.Config) {
		c.CheckpointInterval = time.Second // long enough to ask before it
	})
	const n = 40
	leaves := make([]tlog.Leaf, n)
	idx := make([]uint64, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		leaves[i] = tlogtest.Leaf(t, tlogtest.Entry("a", i, "org-a", "wf", i%3 != 0))
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := l.Append(ctx, leaves[i])
			if err != nil {
				errs <- err
				return
			}
			if a.Dup {
				errs <- errors.New("a new leaf reported as a duplicate")
			}
			idx[i] = a.Index
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, i := range idx {
		if seen[i] || i >= n {
			t.Fatalf("indexes %v are not a permutation of 0..%d", idx, n-1)
		}
		seen[i] = true
	}

	// Right after Append, no checkpoint covers all entries yet (the
	// first checkpoint comes at most a second later).
	last := slicesMax(idx)
	if _, err := l.Receipt(ctx, last); !errors.Is(err, logwriter.ErrNotIntegrated) {
		t.Fatalf("Receipt before a checkpoint covers index %d: %v, want ErrNotIntegrated", last, err)
	}

	v := tlogtest.Verifier(t, "log", "quorum none\n")
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i, leaf := range leaves {
		r, err := l.AwaitReceipt(wctx, idx[i])
		if err != nil {
			t.Fatal(err)
		}
		if r.Witnessed || r.WitnessErr != nil {
			t.Errorf("a log without witnesses: Witnessed %v, WitnessErr %v", r.Witnessed, r.WitnessErr)
		}
		got, err := v.VerifyReceipt(r.JSON, tlog.Subject{VPECID: leaf.VPECID, Digest: leaf.Digest})
		if err != nil {
			t.Fatalf("receipt %d: %v", i, err)
		}
		if got.Index != idx[i] || got.Leaf != leaf {
			t.Errorf("receipt %d: index %d leaf %s, want %d %s", i, got.Index, got.Leaf.VPECID, idx[i], leaf.VPECID)
		}
		other := leaves[(i+1)%n]
		if _, err := v.VerifyReceipt(r.JSON, tlog.Subject{VPECID: other.VPECID, Digest: other.Digest}); !errors.Is(err, tlog.ErrWrongVPEC) {
			t.Errorf("receipt %d checked for another VPEC: %v, want ErrWrongVPEC", i, err)
		}
		// The non-blocking form now answers too.
		if _, err := l.Receipt(ctx, idx[i]); err != nil {
			t.Errorf("Receipt(%d) after AwaitReceipt: %v", idx[i], err)
		}
	}

	a, err := l.Append(ctx, leaves[7])
	if err != nil {
		t.Fatal(err)
	}
	if !a.Dup || a.Index != idx[7] {
		t.Errorf("appending leaf 7 again: %+v, want Dup at index %d", a, idx[7])
	}
	if s := l.Stats(); s.Appended != n || s.Duplicates != 1 {
		t.Errorf("stats %+v, want %d appended and 1 duplicate", s, n)
	}
}

func slicesMax(s []uint64) uint64 {
	m := s[0]
	for _, v := range s {
		m = max(m, v)
	}
	return m
}
