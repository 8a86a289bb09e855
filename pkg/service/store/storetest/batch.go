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

// RunBatches tests store.RunWriter.AppendRecords: a batch is stored all or
// nothing, each record as AppendRecord would store it after the ones
// before it (duplicates, conflicts, limits, a sealed run), and a batch
// racing a seal is wholly in the sealed record set or wholly refused.
func RunBatches(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"AppendRecords", testAppendRecords},
		{"AppendRecordsLimits", testAppendRecordsLimits},
		{"AppendRecordsSealed", testAppendRecordsSealed},
		{"AppendRecordsRacingSeal", testAppendRecordsRacingSeal},
	})
}

// batchOf makes records from..to (inclusive) of run, each size bytes.
func batchOf(runID string, from, to int64, size int) []store.Record {
	var out []store.Record
	for i := from; i <= to; i++ {
		out = append(out, MakeRecord(runID, i, fmt.Sprintf("rec-%d", i), size))
	}
	return out
}

// wantBatchError checks that err is a *store.BatchError at index matching
// want (nil: no error).
func wantBatchError(t *testing.T, what string, err error, index int, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s: err = %v, want nil", what, err)
		}
		return
	}
	var be *store.BatchError
	if !errors.As(err, &be) || be.Index != index || !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want a BatchError at index %d matching %v", what, err, index, want)
	}
}

// wantStored checks the run holds exactly the records with sequences
// 1..n, and its metadata says so.
func wantStored(t *testing.T, s store.Store, f fixture, what string, n int64) {
	t.Helper()
	ctx := context.Background()
	recs, err := s.Records(ctx, f.run.ID)
	if err != nil {
		t.Fatalf("%s: Records: %v", what, err)
	}
	if int64(len(recs)) != n {
		t.Errorf("%s: %d records stored, want %d", what, len(recs), n)
	}
	var bytes int64
	for i, r := range recs {
		if want := MakeRecord(f.run.ID, int64(i+1), fmt.Sprintf("rec-%d", i+1), len(r.Body)); !recordEqual(r, want) {
			t.Errorf("%s: record %d = %s, want %s", what, i, r.Body, want.Body)
		}
		bytes += int64(len(r.Body))
	}
	run, err := s.Run(ctx, f.org.ID, f.run.ID)
	if err != nil {
		t.Fatalf("%s: Run: %v", what, err)
	}
	if run.RecordCount != n || run.RecordBytes != bytes || run.LastSequence != n || (n > 0 && run.LastChainHash != recs[n-1].ChainHash) {
		t.Errorf("%s: run metadata count=%d bytes=%d last=%d %s; want %d, %d, %d", what, run.RecordCount, run.RecordBytes, run.LastSequence, run.LastChainHash, n, bytes, n)
	}
}

// testAppendRecords: batches in order; replays are duplicates; a batch
// with one refused record stores nothing and names it.
func testAppendRecords(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	g := seed(t, s, "beta")
	conflicting := MakeRecord(f.run.ID, 3, "rec-3", 400) // rec-3 stored at 100 bytes
	otherRun := MakeRecord(g.run.ID, 6, "rec-6", 100)
	steps := []struct {
		name     string
		org      string
		recs     []store.Record
		wantDups []bool
		index    int
		wantErr  error
		stored   int64 // records 1..stored in the run after the step
	}{
		{"empty", f.org.ID, nil, []bool{}, 0, nil, 0},
		{"first batch", f.org.ID, batchOf(f.run.ID, 1, 3, 100), []bool{false, false, false}, 0, nil, 3},
		{"replayed", f.org.ID, batchOf(f.run.ID, 1, 3, 100), []bool{true, true, true}, 0, nil, 3},
		{"stored ones then new ones", f.org.ID, batchOf(f.run.ID, 2, 5, 100), []bool{true, true, false, false}, 0, nil, 5},
		{"new then a conflicting id", f.org.ID, append(batchOf(f.run.ID, 6, 7, 100), conflicting), nil, 2, store.ErrConflict, 5},
		{"new then a taken sequence", f.org.ID, append(batchOf(f.run.ID, 6, 7, 100), MakeRecord(f.run.ID, 4, "rec-x", 100)), nil, 2, store.ErrConflict, 5},
		{"the same record twice", f.org.ID, append(batchOf(f.run.ID, 6, 6, 100), MakeRecord(f.run.ID, 6, "rec-6b", 100)), nil, 1, store.ErrConflict, 5},
		{"another run in the batch", f.org.ID, append(batchOf(f.run.ID, 6, 6, 100), otherRun), nil, 1, store.ErrConflict, 5},
		{"another org's run", g.org.ID, batchOf(f.run.ID, 6, 7, 100), nil, 0, store.ErrNotFound, 5},
		{"unknown run", f.org.ID, batchOf("run_nobody", 1, 2, 100), nil, 0, store.ErrNotFound, 5},
		{"next batch", f.org.ID, batchOf(f.run.ID, 6, 8, 100), []bool{false, false, false}, 0, nil, 8},
		// The run's last sequence and chain hash are the highest
		// sequence's, not the batch's last record's.
		{"out of order", f.org.ID, []store.Record{MakeRecord(f.run.ID, 10, "rec-10", 100), MakeRecord(f.run.ID, 9, "rec-9", 100)}, []bool{false, false}, 0, nil, 10},
	}
	for _, st := range steps {
		dups, err := s.AppendRecords(ctx, st.org, st.recs, store.Limits{})
		wantBatchError(t, "AppendRecords "+st.name, err, st.index, st.wantErr)
		if st.wantErr == nil && fmt.Sprint(dups) != fmt.Sprint(st.wantDups) {
			t.Errorf("AppendRecords %s: duplicates = %v, want %v", st.name, dups, st.wantDups)
		}
		wantStored(t, s, f, st.name, st.stored)
	}
	if recs, _ := s.Records(ctx, g.run.ID); len(recs) != 0 {
		t.Errorf("the other org's run holds %d records, want 0", len(recs))
	}
}

// testAppendRecordsLimits: the limits apply as each record is added; a
// batch that would pass one stores nothing and names the first record
// past it.
func testAppendRecordsLimits(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	lim := store.Limits{MaxRecords: 5, MaxBytes: 5*400 + 5*10, BytesPerRecord: 10}
	steps := []struct {
		name   string
		recs   []store.Record
		index  int
		limit  string
		stored int64
	}{
		{"fits", batchOf(f.run.ID, 1, 3, 400), 0, "", 3},
		{"one record too many", batchOf(f.run.ID, 4, 6, 400), 2, "max_records", 3},
		{"one byte too many", append(batchOf(f.run.ID, 4, 4, 400), MakeRecord(f.run.ID, 5, "rec-5", 401)), 1, "max_bytes", 3},
		{"fills it exactly", batchOf(f.run.ID, 4, 5, 400), 0, "", 5},
		{"replayed when full", batchOf(f.run.ID, 4, 5, 400), 0, "", 5},
	}
	for _, st := range steps {
		_, err := s.AppendRecords(ctx, f.org.ID, st.recs, lim)
		if st.limit == "" {
			wantBatchError(t, st.name, err, 0, nil)
		} else {
			var le *store.LimitError
			wantBatchError(t, st.name, err, st.index, store.ErrRunFull)
			if !errors.As(err, &le) || le.Limit != st.limit {
				t.Errorf("%s: err = %v, want a %s LimitError", st.name, err, st.limit)
			}
		}
		wantStored(t, s, f, st.name, st.stored)
	}
}

// testAppendRecordsSealed: a sealed run takes no new record in a batch;
// a replay of records it holds is acknowledged as duplicates.
func testAppendRecordsSealed(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	if _, err := s.AppendRecords(ctx, f.org.ID, batchOf(f.run.ID, 1, 3, 100), store.Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SealRecords(ctx, f.org.ID, f.run.ID, "k", T0); err != nil {
		t.Fatal(err)
	}
	_, err := s.AppendRecords(ctx, f.org.ID, batchOf(f.run.ID, 3, 4, 100), store.Limits{})
	wantBatchError(t, "a stored record and a new one", err, 1, store.ErrSealed)
	dups, err := s.AppendRecords(ctx, f.org.ID, batchOf(f.run.ID, 1, 3, 100), store.Limits{})
	if err != nil || fmt.Sprint(dups) != "[true true true]" {
		t.Errorf("replay into the sealed run = %v, %v; want all duplicates", dups, err)
	}
	wantStored(t, s, f, "sealed", 3)
}

// testAppendRecordsRacingSeal: batches racing SealRecords are either
// wholly in the record set read after the seal (and acknowledged) or
// wholly refused with ErrSealed; none lands after it, none in part.
func testAppendRecordsRacingSeal(t *testing.T, s store.Store) {
	const batches, size, workers = 40, 10, 4
	ctx := context.Background()
	f := seed(t, s, "acme")
	acked := make([]atomic.Bool, batches)
	var ok atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for b := w; b < batches; b += workers {
				from := int64(b*size + 1)
				_, err := s.AppendRecords(ctx, f.org.ID, batchOf(f.run.ID, from, from+size-1, 200), store.Limits{})
				switch {
				case err == nil:
					acked[b].Store(true)
					ok.Add(1)
				case !errors.Is(err, store.ErrSealed):
					t.Errorf("AppendRecords(batch %d): %v", b, err)
				}
			}
		})
	}
	var atSeal []store.Record
	wg.Go(func() {
		for deadline := time.Now().Add(30 * time.Second); ok.Load() < batches/4 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if _, _, err := s.SealRecords(ctx, f.org.ID, f.run.ID, "", T0); err != nil {
			t.Errorf("SealRecords: %v", err)
		}
		var err error
		if atSeal, err = s.Records(ctx, f.run.ID); err != nil {
			t.Errorf("Records: %v", err)
		}
	})
	wg.Wait()
	got, err := s.Records(ctx, f.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(atSeal) {
		t.Errorf("%d records when the seal returned, %d later: a batch landed in the sealed run", len(atSeal), len(got))
	}
	held := make(map[int64]bool, len(got))
	for _, r := range got {
		held[r.Sequence] = true
	}
	for b := range batches {
		for i := range int64(size) {
			if seq := int64(b*size+1) + i; held[seq] != acked[b].Load() {
				t.Errorf("batch %d acknowledged=%v, but sequence %d stored=%v", b, acked[b].Load(), seq, held[seq])
			}
		}
	}
	if int(ok.Load())*size != len(got) || ok.Load() < batches/4 {
		t.Errorf("%d batches acknowledged, %d records stored", ok.Load(), len(got))
	}
}
