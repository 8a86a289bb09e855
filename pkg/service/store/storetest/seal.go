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

// RunSeals tests the seal of the runs role (store.RunWriter): SealRun,
// the two-phase SealRecords and StoreVPEC, UnsealRecords, and seals racing
// appends.
func RunSeals(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"SealRun", testSealRun},
		{"SealRunVPECIDTaken", testSealRunVPECIDTaken},
		{"SealedRun", testSealedRun},
		{"TwoPhaseSeal", testTwoPhaseSeal},
		{"StoreVPECRefused", testStoreVPECRefused},
		{"UnsealRecords", testUnsealRecords},
		{"ConcurrentSealRun", testConcurrentSealRun},
		{"ConcurrentAppendAndSeal", testConcurrentAppendAndSeal},
		{"ConcurrentAppendAndSealRecords", testConcurrentAppendAndSealRecords},
	})
}

func testSealRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	g := seed(t, s, "beta")
	mustAppend(t, s, f.org.ID, MakeRecord(f.run.ID, 0, "rec-0", 600))
	v := store.VPEC{ID: "vpec-1", RunID: f.run.ID, OrgID: f.org.ID, IssuedAt: T0.Add(time.Hour + time.Microsecond), Body: []byte(`{"id":"vpec-1"}`)}
	seals := []struct {
		name       string
		org, run   string
		vpec       store.VPEC
		want       error
		wantNonNil bool // an error that is none of the sentinels
	}{
		{"another org's run", g.org.ID, f.run.ID, store.VPEC{ID: "vpec-x", IssuedAt: T0}, store.ErrNotFound, false},
		{"unknown run", f.org.ID, "run_nobody", store.VPEC{ID: "vpec-x", IssuedAt: T0}, store.ErrNotFound, false},
		{"vpec of another run", f.org.ID, f.run.ID, store.VPEC{ID: "vpec-x", RunID: g.run.ID, IssuedAt: T0}, nil, true},
		{"vpec of another org", f.org.ID, f.run.ID, store.VPEC{ID: "vpec-x", OrgID: g.org.ID, IssuedAt: T0}, nil, true},
		{"seal", f.org.ID, f.run.ID, v, nil, false},
		{"seal again", f.org.ID, f.run.ID, store.VPEC{ID: "vpec-2", IssuedAt: T0}, store.ErrSealed, false},
		{"seal again, same vpec", f.org.ID, f.run.ID, v, store.ErrSealed, false},
		{"seal the other org's run, ids left empty", g.org.ID, g.run.ID, store.VPEC{ID: "vpec-g", IssuedAt: T0, Body: []byte("{}")}, nil, false},
	}
	for _, c := range seals {
		err := s.SealRun(ctx, c.org, c.run, c.vpec)
		if c.wantNonNil {
			if err == nil {
				t.Errorf("SealRun %s: err = nil, want an error", c.name)
			}
			continue
		}
		wantErr(t, "SealRun "+c.name, err, c.want)
	}
	want := f.run
	want.Sealed, want.ClosedAt, want.VPECID = true, v.IssuedAt, v.ID
	if got, err := s.Run(ctx, f.org.ID, f.run.ID); err != nil || !runEqual(got, want) {
		t.Errorf("Run after SealRun = %+v, %v; want %+v", got, err, want)
	}
	if got, err := s.VPEC(ctx, f.org.ID, v.ID); err != nil || !vpecEqual(got, v) {
		t.Errorf("VPEC = %+v, %v; want %+v", got, err, v)
	}
	wantG := store.VPEC{ID: "vpec-g", RunID: g.run.ID, OrgID: g.org.ID, IssuedAt: T0, Body: []byte("{}")}
	if got, err := s.VPEC(ctx, g.org.ID, "vpec-g"); err != nil || !vpecEqual(got, wantG) {
		t.Errorf("VPEC(vpec-g) = %+v, %v; want %+v", got, err, wantG)
	}
	for _, c := range []struct{ name, org, id string }{
		{"another org's", g.org.ID, v.ID},
		{"unknown", f.org.ID, "vpec-nobody"},
		{"never stored (lost the seal)", f.org.ID, "vpec-2"},
		{"unknown org", "org_nobody", v.ID},
	} {
		if _, err := s.VPEC(ctx, c.org, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("VPEC %s: err = %v, want ErrNotFound", c.name, err)
		}
	}
}

// testSealRunVPECIDTaken: a VPEC id already issued for another run gives
// ErrExists and leaves the run open.
func testSealRunVPECIDTaken(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	second := newRun(f.org.ID, f.key.ID, "run_second")
	if err := s.CreateRun(ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	err := s.SealRun(ctx, f.org.ID, second.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")})
	wantErr(t, "SealRun with a taken vpec id", err, store.ErrExists)
	if got, err := s.Run(ctx, f.org.ID, second.ID); err != nil || !runEqual(got, second) {
		t.Errorf("Run after a failed SealRun = %+v, %v; want it unchanged and open", got, err)
	}
	mustAppend(t, s, f.org.ID, MakeRecord(second.ID, 0, "rec-0", 100))
}

func testSealedRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	r0 := MakeRecord(f.run.ID, 0, "rec-0", 600)
	mustAppend(t, s, f.org.ID, r0)
	if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	appends := []struct {
		name string
		org  string
		rec  store.Record
		want error
	}{
		{"new record", f.org.ID, MakeRecord(f.run.ID, 1, "rec-1", 600), store.ErrSealed},
		{"a duplicate of a stored record", f.org.ID, r0, nil},
		{"a conflicting record", f.org.ID, MakeRecord(f.run.ID, 0, "rec-x", 600), store.ErrSealed},
		{"another org", "org_nobody", MakeRecord(f.run.ID, 1, "rec-1", 600), store.ErrNotFound},
	}
	for _, c := range appends {
		dup, err := s.AppendRecord(ctx, c.org, c.rec, store.Limits{})
		wantErr(t, "AppendRecord "+c.name, err, c.want)
		if dup != (c.want == nil) {
			t.Errorf("AppendRecord %s: duplicate = %v", c.name, dup)
		}
	}
	got, err := s.Records(ctx, f.run.ID)
	if err != nil || len(got) != 1 || !recordEqual(got[0], r0) {
		t.Errorf("Records of the sealed run = %+v, %v; want only rec-0", got, err)
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

// testStoreVPECRefused: StoreVPEC into another organisation's sealed
// run, or with a VPEC id another run holds, is refused and writes nothing:
// the run still takes its own VPEC afterwards.
func testStoreVPECRefused(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	g := seed(t, s, "beta")
	for _, x := range []fixture{f, g} {
		mustAppend(t, s, x.org.ID, MakeRecord(x.run.ID, 1, "rec-1", 100))
		if _, sealed, err := s.SealRecords(ctx, x.org.ID, x.run.ID, "k", T0); err != nil || !sealed {
			t.Fatalf("SealRecords(%s) = %v, %v", x.run.ID, sealed, err)
		}
	}
	if err := s.StoreVPEC(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-f", IssuedAt: T0, Body: []byte(`{"f":1}`)}); err != nil {
		t.Fatalf("StoreVPEC(%s): %v", f.run.ID, err)
	}
	if err := s.StoreVPEC(ctx, f.org.ID, g.run.ID, store.VPEC{ID: "vpec-x", IssuedAt: T0, Body: []byte(`{}`)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("StoreVPEC into another org's run: err = %v, want ErrNotFound", err)
	}
	if err := s.StoreVPEC(ctx, g.org.ID, g.run.ID, store.VPEC{ID: "vpec-f", IssuedAt: T0, Body: []byte(`{"g":1}`)}); !errors.Is(err, store.ErrExists) {
		t.Errorf("StoreVPEC with the id of another run's VPEC: err = %v, want ErrExists", err)
	}
	if r, err := s.Run(ctx, g.org.ID, g.run.ID); err != nil || r.VPECID != "" || !r.Sealed {
		t.Errorf("run after the refused StoreVPECs = %+v, %v; want sealed, without a VPEC", r, err)
	}
	if v, err := s.VPEC(ctx, f.org.ID, "vpec-f"); err != nil || string(v.Body) != `{"f":1}` || v.RunID != f.run.ID {
		t.Errorf("VPEC vpec-f = %+v, %v; want the first run's, unchanged", v, err)
	}
	if err := s.StoreVPEC(ctx, g.org.ID, g.run.ID, store.VPEC{ID: "vpec-g", IssuedAt: T0, Body: []byte(`{"g":2}`)}); err != nil {
		t.Fatalf("StoreVPEC(%s) after the refusals: %v", g.run.ID, err)
	}
	if r, err := s.Run(ctx, g.org.ID, g.run.ID); err != nil || r.VPECID != "vpec-g" {
		t.Errorf("Run = %+v, %v; want vpec-g", r, err)
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

// testConcurrentSealRun: of 8 goroutines sealing one run, exactly one
// succeeds; the others get ErrSealed and their VPECs are not stored.
func testConcurrentSealRun(t *testing.T, s store.Store) {
	const workers = 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	for round := range 3 {
		run := newRun(f.org.ID, f.key.ID, fmt.Sprintf("run_seal_%d", round))
		if err := s.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []string
		start := make(chan struct{})
		for w := range workers {
			wg.Go(func() {
				id := fmt.Sprintf("vpec-%d-%d", round, w)
				<-start
				err := s.SealRun(ctx, f.org.ID, run.ID, store.VPEC{ID: id, IssuedAt: T0.Add(time.Duration(w) * time.Second), Body: []byte(id)})
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, id)
					mu.Unlock()
				case !errors.Is(err, store.ErrSealed):
					t.Errorf("round %d: SealRun(%s): %v, want nil or ErrSealed", round, id, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: %d SealRun calls succeeded (%v), want 1", round, len(winners), winners)
		}
		got, err := s.Run(ctx, f.org.ID, run.ID)
		if err != nil || !got.Sealed || got.VPECID != winners[0] {
			t.Errorf("round %d: Run = %+v, %v; want sealed with %s", round, got, err, winners[0])
		}
		v, err := s.VPEC(ctx, f.org.ID, winners[0])
		if err != nil || !got.ClosedAt.Equal(v.IssuedAt) || string(v.Body) != winners[0] {
			t.Errorf("round %d: VPEC = %+v, %v; run closed at %v", round, v, err, got.ClosedAt)
		}
		for w := range workers {
			if id := fmt.Sprintf("vpec-%d-%d", round, w); id != winners[0] {
				if _, err := s.VPEC(ctx, f.org.ID, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("round %d: the losing VPEC %s: err = %v, want ErrNotFound", round, id, err)
				}
			}
		}
	}
}

// testConcurrentAppendAndSeal: appends racing a seal either land before it
// (and are kept) or fail with ErrSealed; none lands after it.
func testConcurrentAppendAndSeal(t *testing.T, s store.Store) {
	const n, workers = 120, 4
	ctx := context.Background()
	f := seed(t, s, "acme")
	var wg sync.WaitGroup
	var ok, atSeal atomic.Int32
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				_, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, int64(i), fmt.Sprintf("rec-%d", i), 300), store.Limits{})
				switch {
				case err == nil:
					ok.Add(1)
				case !errors.Is(err, store.ErrSealed):
					t.Errorf("AppendRecord(%d): %v", i, err)
				}
			}
		})
	}
	wg.Go(func() {
		for deadline := time.Now().Add(30 * time.Second); ok.Load() < n/4 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
			t.Errorf("SealRun: %v", err)
		}
		recs, err := s.Records(ctx, f.run.ID)
		if err != nil {
			t.Errorf("Records: %v", err)
		}
		atSeal.Store(int32(len(recs)))
	})
	wg.Wait()
	got, err := s.Records(ctx, f.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != int(atSeal.Load()) {
		t.Errorf("Records: %d when SealRun returned, %d later: appends landed in the sealed run", atSeal.Load(), len(got))
	}
	if len(got) != int(ok.Load()) {
		t.Errorf("Records: %d stored, but %d appends succeeded", len(got), ok.Load())
	}
	if len(got) < n/4 {
		t.Errorf("Records: %d stored, want at least %d", len(got), n/4)
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
