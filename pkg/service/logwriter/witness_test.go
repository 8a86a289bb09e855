package logwriter_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/internal/witnesstest"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
)

// events collects OnWitness calls.
type events struct {
	mu  sync.Mutex
	evs []logwriter.WitnessEvent
}

func (e *events) add(ev logwriter.WitnessEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, ev)
}

func (e *events) count(class error) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.evs {
		if class == nil && ev.Err == nil && ev.Status == 200 || class != nil && errors.Is(ev.Err, class) {
			n++
		}
	}
	return n
}

func (e *events) status(code int, class error) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.evs {
		if ev.Status == code && errors.Is(ev.Err, class) {
			n++
		}
	}
	return n
}

func (e *events) all() []logwriter.WitnessEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]logwriter.WitnessEvent(nil), e.evs...)
}

func appendN(t *testing.T, l *logwriter.Log, prefix string, n int) ([]tlog.Leaf, []uint64) {
	t.Helper()
	leaves := make([]tlog.Leaf, n)
	idx := make([]uint64, n)
	for i := range n {
		leaves[i] = tlogtest.Leaf(t, tlogtest.Entry(prefix, i, "org-a", "wf", true))
		a, err := l.Append(context.Background(), leaves[i])
		if err != nil {
			t.Fatal(err)
		}
		idx[i] = a.Index
	}
	return leaves, idx
}

func await(t *testing.T, l *logwriter.Log, index uint64) *logwriter.Receipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := l.AwaitReceipt(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func subject(l tlog.Leaf) tlog.Subject { return tlog.Subject{VPECID: l.VPECID, Digest: l.Digest} }

// backend opens a new, empty log of a backend.
type backend struct {
	name string
	open func(t *testing.T, seed string, mod func(*logwriter.Config)) *logwriter.Log
}

// backends are the POSIX backend and, when a MariaDB server is available
// (SVC_TEST_MARIADB_DSN), the MySQL backend.
func backends(t *testing.T) []backend {
	bs := []backend{{"posix", func(t *testing.T, seed string, mod func(*logwriter.Config)) *logwriter.Log {
		return tlogtest.OpenLog(t, t.TempDir(), seed, mod)
	}}}
	if os.Getenv("SVC_TEST_MARIADB_DSN") != "" || os.Getenv("SVC_REQUIRE_MARIADB") == "1" {
		bs = append(bs, backend{"mysql", func(t *testing.T, seed string, mod func(*logwriter.Config)) *logwriter.Log {
			db, _ := tlogtest.MariaDB(t)
			return tlogtest.OpenLog(t, "", seed, func(c *logwriter.Config) {
				c.DB, c.CheckpointInterval = db, logwriter.MinCheckpointIntervalMySQL
				if mod != nil {
					mod(c)
				}
			})
		}})
	}
	return bs
}

// TestWitnessed: with a real witness (omniwitness on loopback) in the
// policy, receipts carry its cosignature and verify under the policy; a
// verifier whose policy wants another witness too rejects them by name.
func TestWitnessed(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testWitnessed(t, b) })
	}
}

func testWitnessed(t *testing.T, b backend) {
	logKey := tlogtest.LogKey(t, "log")
	w := witnesstest.Start(t, "witness.test/w1", witnesstest.Log{Origin: tlogtest.Origin, VKey: logKey.String()})
	policy := w.PolicyLine("w1") + "quorum w1\n"
	var ev events
	l := b.open(t, "log", func(c *logwriter.Config) {
		c.WitnessPolicy = tlogtest.Policy(t, policy)
		c.OnWitness = ev.add
	})
	leaves, idx := appendN(t, l, "w", 5)
	r := await(t, l, idx[4])
	if !r.Witnessed || r.WitnessErr != nil {
		t.Fatalf("receipt: Witnessed %v, WitnessErr %v; want witnessed", r.Witnessed, r.WitnessErr)
	}
	v := tlogtest.Verifier(t, "log", policy)
	got, err := v.VerifyReceipt(r.JSON, subject(leaves[4]))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Checkpoint.Cosignatures) != 1 || got.Checkpoint.Cosignatures[0].Witness != "witness.test/w1" {
		t.Errorf("cosignatures %+v, want one by witness.test/w1", got.Checkpoint.Cosignatures)
	}
	if ev.count(nil) == 0 {
		t.Error("OnWitness saw no cosignature")
	}

	other := witnesstest.New(t, "witness.test/w2") // never started: never cosigns
	strict := tlogtest.Verifier(t, "log", w.PolicyLine("w1")+other.PolicyLine("w2")+"group both all w1 w2\nquorum both\n")
	if _, err := strict.VerifyReceipt(r.JSON, subject(leaves[4])); !errors.Is(err, tlog.ErrWitnessPolicy) {
		t.Errorf("a policy wanting w1 and w2: %v, want ErrWitnessPolicy", err)
	}
}

// TestWitnessUnreachable documents the policy for a witness that cannot
// be reached: the log opens, appends and publishes anyway (fail-open);
// each receipt is marked unwitnessed with the cause (ErrUnwitnessed,
// ErrWitnessUnreachable), OnWitness reports it, a verifier holding the
// policy rejects the receipt (ErrWitnessPolicy) while the log's signature
// alone still verifies; once the witness is up, the next checkpoints are
// cosigned and receipts are witnessed again.
func TestWitnessUnreachable(t *testing.T) {
	witnesstest.Binary(t) // skips up front without one
	logKey := tlogtest.LogKey(t, "log")
	w := witnesstest.New(t, "witness.test/down") // not running yet
	policy := w.PolicyLine("w") + "quorum w\n"
	var ev events
	l := tlogtest.OpenLog(t, t.TempDir(), "log", func(c *logwriter.Config) {
		c.WitnessPolicy = tlogtest.Policy(t, policy)
		c.OnWitness = ev.add
		c.WitnessTimeout = 2 * time.Second
	})
	leaves, idx := appendN(t, l, "u", 3)
	r := await(t, l, idx[2])
	if r.Witnessed {
		t.Fatal("a receipt from a log whose only witness is down says it is witnessed")
	}
	for _, class := range []error{logwriter.ErrUnwitnessed, tlog.ErrWitnessPolicy, logwriter.ErrWitnessUnreachable} {
		if !errors.Is(r.WitnessErr, class) {
			t.Errorf("WitnessErr %v does not match %v", r.WitnessErr, class)
		}
	}
	if ev.count(logwriter.ErrWitnessUnreachable) == 0 || l.Stats().WitnessFailures[logwriter.ErrWitnessUnreachable] == 0 {
		t.Errorf("no unreachable-witness signal: events %d, stats %v", ev.count(logwriter.ErrWitnessUnreachable), l.Stats().WitnessFailures)
	}
	if _, err := tlogtest.Verifier(t, "log", policy).VerifyReceipt(r.JSON, subject(leaves[2])); !errors.Is(err, tlog.ErrWitnessPolicy) {
		t.Errorf("verifier with the policy: %v, want ErrWitnessPolicy", err)
	}
	if _, err := tlogtest.Verifier(t, "log", "quorum none\n").VerifyReceipt(r.JSON, subject(leaves[2])); err != nil {
		t.Errorf("verifier trusting the log key alone: %v", err)
	}

	// The witness comes up; later checkpoints are cosigned.
	w.Start(t, witnesstest.Log{Origin: tlogtest.Origin, VKey: logKey.String()})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for n := 0; ; n++ {
		more, midx := appendN(t, l, "v"+string(rune('a'+n%26)), 1)
		r, err := l.AwaitReceipt(ctx, midx[0])
		if err != nil {
			t.Fatalf("no witnessed receipt after the witness came up: %v", err)
		}
		if r.Witnessed {
			if _, err := tlogtest.Verifier(t, "log", policy).VerifyReceipt(r.JSON, subject(more[0])); err != nil {
				t.Fatal(err)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWitnessSplitView: a witness that cosigned one history of the log
// refuses a checkpoint of another history under the same origin and key
// (omniwitness answers 409). The log surfaces it: the receipt is
// unwitnessed with ErrWitnessConflict, OnWitness and Stats count it, and
// the two histories' checkpoints fail a consistency check by name.
func TestWitnessSplitView(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testWitnessSplitView(t, b) })
	}
}

func testWitnessSplitView(t *testing.T, b backend) {
	logKey := tlogtest.LogKey(t, "log")
	w := witnesstest.Start(t, "witness.test/w1", witnesstest.Log{Origin: tlogtest.Origin, VKey: logKey.String()})
	policy := w.PolicyLine("w1") + "quorum w1\n"
	v := tlogtest.Verifier(t, "log", policy)

	a := b.open(t, "log", func(c *logwriter.Config) { c.WitnessPolicy = tlogtest.Policy(t, policy) })
	_, aidx := appendN(t, a, "a", 3)
	ra := await(t, a, aidx[2])
	if !ra.Witnessed {
		t.Fatalf("history A: %v", ra.WitnessErr)
	}

	// History B: the same origin and key, other entries (an operator
	// showing a second view of the log).
	var ev events
	lb := b.open(t, "log", func(c *logwriter.Config) {
		c.WitnessPolicy = tlogtest.Policy(t, policy)
		c.OnWitness = ev.add
	})
	bl, bidx := appendN(t, lb, "b", 3)
	rb := await(t, lb, bidx[2])
	if rb.Witnessed {
		t.Fatal("the witness cosigned a second history")
	}
	for _, class := range []error{logwriter.ErrUnwitnessed, logwriter.ErrWitnessConflict} {
		if !errors.Is(rb.WitnessErr, class) {
			t.Errorf("WitnessErr %v does not match %v", rb.WitnessErr, class)
		}
	}
	// omniwitness refuses B's first checkpoint, smaller than the one it
	// cosigned, with 409 and its size, and B's checkpoint of the same size
	// with a different root with 422 (its consistency check fails).
	for _, status := range []int{409, 422} {
		if ev.status(status, logwriter.ErrWitnessConflict) == 0 {
			t.Errorf("no conflict answered with HTTP %d; events: %+v", status, ev.all())
		}
	}
	if ev.count(logwriter.ErrWitnessConflict) == 0 || lb.Stats().WitnessFailures[logwriter.ErrWitnessConflict] == 0 {
		t.Errorf("no split-view signal: events %d, stats %v", ev.count(logwriter.ErrWitnessConflict), lb.Stats().WitnessFailures)
	}
	if _, err := v.VerifyReceipt(rb.JSON, subject(bl[2])); !errors.Is(err, tlog.ErrWitnessPolicy) {
		t.Errorf("history B's receipt under the policy: %v, want ErrWitnessPolicy", err)
	}
	none := tlogtest.Verifier(t, "log", "quorum none\n")
	ca, err := none.VerifyCheckpoint(ra.Checkpoint.Note)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := none.VerifyCheckpoint(rb.Checkpoint.Note)
	if err != nil {
		t.Fatal(err)
	}
	if err := none.VerifyConsistency(ca, cb, nil); !errors.Is(err, tlog.ErrInconsistent) {
		t.Errorf("checkpoints of A and B (%d and %d entries): %v, want ErrInconsistent", ca.Size, cb.Size, err)
	}
}

// TestSlowWitness: a witness that accepts connections and never answers
// holds up neither appends nor publication: entries get their indexes,
// checkpoints cover them, and Receipt returns unwitnessed receipts saying
// the witnesses have not answered (on the MySQL backend too, where
// Tessera's own witnessing would hold the tree-state row while it waits).
func TestSlowWitness(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var held []net.Conn
			var mu sync.Mutex
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					mu.Lock()
					held = append(held, c)
					mu.Unlock()
				}
			}()
			t.Cleanup(func() {
				ln.Close()
				mu.Lock()
				for _, c := range held {
					c.Close()
				}
				mu.Unlock()
			})
			w := witnesstest.New(t, "witness.test/slow")
			policy := fmt.Sprintf("witness w %s http://%s\nquorum w\n", w.VKey, ln.Addr())
			l := b.open(t, "log", func(c *logwriter.Config) {
				c.WitnessPolicy = tlogtest.Policy(t, policy)
				c.WitnessTimeout = time.Hour
			})
			_, idx := appendN(t, l, "s", 5)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for {
				r, err := l.Receipt(ctx, idx[4])
				if errors.Is(err, logwriter.ErrNotIntegrated) {
					select {
					case <-ctx.Done():
						t.Fatalf("no checkpoint covers the entries while a witness hangs: %v", err)
					case <-time.After(20 * time.Millisecond):
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if r.Witnessed || !errors.Is(r.WitnessErr, logwriter.ErrUnwitnessed) {
					t.Errorf("receipt while the only witness hangs: Witnessed %v, %v", r.Witnessed, r.WitnessErr)
				}
				break
			}
			// Appends still go through.
			if _, err := l.Append(ctx, tlogtest.Leaf(t, tlogtest.Entry("s", 9, "org-a", "wf", true))); err != nil {
				t.Fatal(err)
			}
		})
	}
}
