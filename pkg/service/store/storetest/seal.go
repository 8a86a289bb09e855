package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// testRunMetadata: AppendRecord keeps the run's count, bytes, last
// sequence and chain hash; refused appends and duplicates change nothing.
func testRunMetadata(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	check := func(what string, count, bytes, last int64, chain string) {
		t.Helper()
		r, err := s.Run(ctx, f.org.ID, f.run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.RecordCount != count || r.RecordBytes != bytes || r.LastSequence != last || r.LastChainHash != chain {
			t.Errorf("%s: run = count %d bytes %d last %d %q; want %d %d %d %q", what, r.RecordCount, r.RecordBytes, r.LastSequence, r.LastChainHash, count, bytes, last, chain)
		}
	}
	check("empty", 0, 0, 0, "")
	n := func(r store.Record) int64 { return int64(len(r.Body)) }
	r2 := MakeRecord(f.run.ID, 2, "rec-2", 400)
	mustAppend(t, s, f.org.ID, r2)
	check("after sequence 2", 1, n(r2), 2, r2.ChainHash)
	r1 := MakeRecord(f.run.ID, 1, "rec-1", 500)
	mustAppend(t, s, f.org.ID, r1)
	check("after sequence 1 (late)", 2, n(r1)+n(r2), 2, r2.ChainHash)
	if dup, err := s.AppendRecord(ctx, f.org.ID, r1, store.Limits{}); err != nil || !dup {
		t.Fatalf("duplicate: %v, %v", dup, err)
	}
	if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, 1, "rec-x", 50), store.Limits{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("conflict: %v", err)
	}
	check("after a duplicate and a conflict", 2, n(r1)+n(r2), 2, r2.ChainHash)
	r7 := MakeRecord(f.run.ID, 7, "rec-7", 70)
	mustAppend(t, s, f.org.ID, r7)
	check("after sequence 7", 3, n(r1)+n(r2)+n(r7), 7, r7.ChainHash)
}

// testLimits: a record that would take the run past a bound gets a
// *LimitError (ErrRunFull) naming it and changes nothing; a retry of a
// stored record is still a duplicate.
func testLimits(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	r1 := MakeRecord(f.run.ID, 1, "rec-1", 500)
	r2 := MakeRecord(f.run.ID, 2, "rec-2", 600)
	big := MakeRecord(f.run.ID, 2, "rec-2", 601)
	// Exactly room for r1 and r2, with 100 bytes per record.
	lim := store.Limits{MaxRecords: 3, MaxBytes: int64(len(r1.Body)+len(r2.Body)) + 200, BytesPerRecord: 100}
	for i, st := range []struct {
		rec   store.Record
		limit string // "" for accepted
	}{
		{r1, ""},
		{big, "max_bytes"},
		{r2, ""},
		{MakeRecord(f.run.ID, 3, "rec-3", 1), "max_bytes"},
		{r1, ""}, // a duplicate, full or not
	} {
		dup, err := s.AppendRecord(ctx, f.org.ID, st.rec, lim)
		var le *store.LimitError
		switch {
		case st.limit == "" && err != nil:
			t.Errorf("%d: AppendRecord: %v", i, err)
		case st.limit != "" && (!errors.Is(err, store.ErrRunFull) || !errors.As(err, &le) || le.Limit != st.limit):
			t.Errorf("%d: AppendRecord: err = %v, want a %s LimitError", i, err, st.limit)
		case st.limit == "" && dup != (i == 4):
			t.Errorf("%d: duplicate = %v", i, dup)
		}
	}
	lim.MaxBytes = 0
	if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, 3, "rec-3", 10), lim); err != nil {
		t.Fatal(err)
	}
	var le *store.LimitError
	if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, 4, "rec-4", 10), lim); !errors.As(err, &le) || le.Limit != "max_records" || le.Max != 3 || le.Have != 3 {
		t.Errorf("fourth record: err = %v, want max_records 3", err)
	}
	r3 := MakeRecord(f.run.ID, 3, "rec-3", 10)
	if r, err := s.Run(ctx, f.org.ID, f.run.ID); err != nil || r.RecordCount != 3 || r.RecordBytes != int64(len(r1.Body)+len(r2.Body)+len(r3.Body)) {
		t.Errorf("run = %+v, %v; want 3 records", r, err)
	}
}

// testTwoPhaseSeal: SealRecords freezes the record set (appends get
// ErrSealed, exact retries of held records stay duplicates), keeps the
// idempotency key, and StoreVPEC then stores the VPEC once.
func testTwoPhaseSeal(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	r1 := MakeRecord(f.run.ID, 1, "rec-1", 100)
	mustAppend(t, s, f.org.ID, r1)
	v := store.VPEC{ID: "vpec-1", IssuedAt: T0.Add(time.Hour), Body: []byte(`{"v":1}`)}
	if err := s.StoreVPEC(ctx, f.org.ID, f.run.ID, v); !errors.Is(err, store.ErrNotSealed) {
		t.Fatalf("StoreVPEC on an open run: err = %v, want ErrNotSealed", err)
	}
	if _, _, err := s.SealRecords(ctx, "org_other", f.run.ID, "k1", T0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SealRecords of another org's run: err = %v, want ErrNotFound", err)
	}
	run, sealed, err := s.SealRecords(ctx, f.org.ID, f.run.ID, "k1", T0.Add(time.Minute))
	if err != nil || !sealed || !run.Sealed || run.CloseKey != "k1" || run.VPECID != "" || run.RecordCount != 1 || !run.ClosedAt.Equal(T0.Add(time.Minute)) {
		t.Fatalf("SealRecords = %+v, %v, %v", run, sealed, err)
	}
	if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, 2, "rec-2", 100), store.Limits{}); !errors.Is(err, store.ErrSealed) {
		t.Errorf("append after SealRecords: err = %v, want ErrSealed", err)
	}
	if dup, err := s.AppendRecord(ctx, f.org.ID, r1, store.Limits{}); err != nil || !dup {
		t.Errorf("retry of a sealed record: %v, %v; want a duplicate", dup, err)
	}
	if err := s.CreateSession(ctx, store.Session{ID: "chk_x", OrgID: f.org.ID, RunID: f.run.ID, Kind: "check", OpenedAt: T0}); !errors.Is(err, store.ErrSealed) {
		t.Errorf("CreateSession after SealRecords: err = %v, want ErrSealed", err)
	}
	again, sealed, err := s.SealRecords(ctx, f.org.ID, f.run.ID, "k2", T0.Add(2*time.Minute))
	if err != nil || sealed || again.CloseKey != "k1" || !again.ClosedAt.Equal(run.ClosedAt) {
		t.Errorf("SealRecords again = %+v, %v, %v; want the first seal, unchanged", again, sealed, err)
	}
	if err := s.SealRun(ctx, f.org.ID, f.run.ID, v); !errors.Is(err, store.ErrSealed) {
		t.Errorf("SealRun after SealRecords: err = %v, want ErrSealed", err)
	}
	if err := s.StoreVPEC(ctx, f.org.ID, f.run.ID, v); err != nil {
		t.Fatalf("StoreVPEC: %v", err)
	}
	if err := s.StoreVPEC(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-2", IssuedAt: T0, Body: []byte(`{}`)}); !errors.Is(err, store.ErrSealed) {
		t.Errorf("second StoreVPEC: err = %v, want ErrSealed", err)
	}
	got, err := s.Run(ctx, f.org.ID, f.run.ID)
	if err != nil || got.VPECID != "vpec-1" || got.CloseKey != "k1" {
		t.Errorf("Run = %+v, %v", got, err)
	}
	if stored, err := s.VPEC(ctx, f.org.ID, "vpec-1"); err != nil || string(stored.Body) != `{"v":1}` {
		t.Errorf("VPEC = %+v, %v", stored, err)
	}
}

// testEachRecord: EachRecord streams every record in sequence order across
// its pages, and stops at fn's error.
func testEachRecord(t *testing.T, s store.Store) {
	const n, workers = 600, 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, int64(i+1), fmt.Sprintf("rec-%d", i+1), 120), store.Limits{}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var next int64 = 1
	if err := s.EachRecord(ctx, f.run.ID, func(r store.Record) error {
		if r.Sequence != next || r.RecordID != fmt.Sprintf("rec-%d", next) {
			return fmt.Errorf("record %s at %d, want sequence %d", r.RecordID, r.Sequence, next)
		}
		next++
		return nil
	}); err != nil || next != n+1 {
		t.Fatalf("EachRecord: %v after %d records", err, next-1)
	}
	stop := errors.New("stop")
	seen := 0
	if err := s.EachRecord(ctx, f.run.ID, func(store.Record) error {
		if seen++; seen == 300 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || seen != 300 {
		t.Errorf("EachRecord stopping: %v after %d", err, seen)
	}
	if err := s.EachRecord(ctx, "run_nobody", func(store.Record) error { return stop }); err != nil {
		t.Errorf("EachRecord of an unknown run: %v", err)
	}
}

// testConcurrentAppendAndSealRecords: appends racing SealRecords either
// commit before it (and are in the record set read after it) or get
// ErrSealed; the set read after the seal never changes.
func testConcurrentAppendAndSealRecords(t *testing.T, s store.Store) {
	const n, workers = 160, 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	var ok atomic.Int32
	acked := make([]atomic.Bool, n+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w + 1; i <= n; i += workers {
				_, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, int64(i), fmt.Sprintf("rec-%d", i), 200), store.Limits{})
				switch {
				case err == nil:
					ok.Add(1)
					acked[i].Store(true)
				case !errors.Is(err, store.ErrSealed):
					t.Errorf("AppendRecord(%d): %v", i, err)
				}
			}
		})
	}
	var sealedSet map[int64]bool
	wg.Go(func() {
		for deadline := time.Now().Add(30 * time.Second); ok.Load() < n/4 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		run, sealed, err := s.SealRecords(ctx, f.org.ID, f.run.ID, "", T0)
		if err != nil || !sealed {
			t.Errorf("SealRecords: %v, %v", sealed, err)
			return
		}
		sealedSet = map[int64]bool{}
		if err := s.EachRecord(ctx, f.run.ID, func(r store.Record) error { sealedSet[r.Sequence] = true; return nil }); err != nil {
			t.Error(err)
		}
		if int64(len(sealedSet)) != run.RecordCount {
			t.Errorf("SealRecords said %d records, %d read", run.RecordCount, len(sealedSet))
		}
	})
	wg.Wait()
	if sealedSet == nil {
		return
	}
	for i := 1; i <= n; i++ {
		if acked[i].Load() != sealedSet[int64(i)] {
			t.Errorf("record %d: acknowledged %v, in the sealed set %v", i, acked[i].Load(), sealedSet[int64(i)])
		}
	}
	if len(sealedSet) < n/4 {
		t.Errorf("%d records sealed, want at least %d", len(sealedSet), n/4)
	}
}

// testUnsealRecords: a run sealed without a VPEC is opened again by the
// key that sealed it, and only then; appends work again afterwards.
func testUnsealRecords(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	mustAppend(t, s, f.org.ID, MakeRecord(f.run.ID, 1, "rec-1", 100))
	if err := s.UnsealRecords(ctx, f.org.ID, f.run.ID, "k"); !errors.Is(err, store.ErrNotSealed) {
		t.Errorf("UnsealRecords of an open run: %v, want ErrNotSealed", err)
	}
	if _, _, err := s.SealRecords(ctx, f.org.ID, f.run.ID, "k", T0); err != nil {
		t.Fatal(err)
	}
	if err := s.UnsealRecords(ctx, f.org.ID, f.run.ID, "other"); !errors.Is(err, store.ErrSealed) {
		t.Errorf("UnsealRecords with another key: %v, want ErrSealed", err)
	}
	if err := s.UnsealRecords(ctx, "org_other", f.run.ID, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UnsealRecords of another org's run: %v, want ErrNotFound", err)
	}
	if err := s.UnsealRecords(ctx, f.org.ID, f.run.ID, "k"); err != nil {
		t.Fatalf("UnsealRecords: %v", err)
	}
	r, err := s.Run(ctx, f.org.ID, f.run.ID)
	if err != nil || r.Sealed || !r.ClosedAt.IsZero() || r.CloseKey != "" || r.RecordCount != 1 {
		t.Errorf("run after UnsealRecords = %+v, %v", r, err)
	}
	mustAppend(t, s, f.org.ID, MakeRecord(f.run.ID, 2, "rec-2", 100))
	if _, _, err := s.SealRecords(ctx, f.org.ID, f.run.ID, "k2", T0); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreVPEC(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if err := s.UnsealRecords(ctx, f.org.ID, f.run.ID, "k2"); !errors.Is(err, store.ErrSealed) {
		t.Errorf("UnsealRecords of a run with a VPEC: %v, want ErrSealed", err)
	}
}
