package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunHandles tests one database opened several times, as by several
// processes (svc serve beside svc admin, or several servers on one
// PostgreSQL database): handles are open on the same empty database. Each
// handle appends every record of one run (a client retrying against
// another server), in opposite orders, with several goroutines, while
// every handle creates organisations: every record is stored once and the
// others are duplicates, and each handle reads what the others wrote. Then
// all handles seal fresh runs at once: exactly one seal of each run wins,
// and an append through another handle after a seal gets store.ErrSealed.
func RunHandles(t *testing.T, handles []store.Store) {
	ctx := context.Background()
	if err := handles[0].CreateOrg(ctx, store.Org{ID: "org_a", Name: "a", Tier: "enterprise", CreatedAt: T0}); err != nil {
		t.Fatal(err)
	}
	if err := handles[len(handles)-1].CreateRun(ctx, store.Run{ID: "run_1", OrgID: "org_a", OpenedAt: T0}); err != nil {
		t.Fatal(err)
	}
	const n, workers = 400, 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := map[int]int{}
	for i, h := range handles {
		for w := range workers {
			wg.Go(func() {
				for k := w; k < n; k += workers {
					j := k
					if i%2 == 1 {
						j = n - 1 - k
					}
					rec := MakeRecord("run_1", int64(j), fmt.Sprintf("rec-%d", j), 600)
					dup, err := h.AppendRecord(ctx, "org_a", rec, store.Limits{})
					if err != nil {
						t.Errorf("handle %d: AppendRecord(%d): %v", i, j, err)
						continue
					}
					if !dup {
						mu.Lock()
						stored[j]++
						mu.Unlock()
					}
				}
			})
		}
		wg.Go(func() {
			for j := range 50 {
				name := fmt.Sprintf("org-%d-%d", i, j)
				if err := h.CreateOrg(ctx, store.Org{ID: name, Name: name, Tier: "standard", CreatedAt: T0}); err != nil {
					t.Errorf("handle %d: CreateOrg: %v", i, err)
				}
				if _, err := h.OrgByName(ctx, name); err != nil {
					t.Errorf("handle %d: OrgByName: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	if len(stored) != n {
		t.Errorf("%d records stored, want %d", len(stored), n)
	}
	for j, c := range stored {
		if c != 1 {
			t.Errorf("record %d reported stored %d times", j, c)
		}
	}
	for i, h := range handles {
		recs, err := h.Records(ctx, "run_1")
		if err != nil || len(recs) != n {
			t.Fatalf("handle %d: Records = %d, %v; want %d", i, len(recs), err, n)
		}
		for j, r := range recs {
			if r.Sequence != int64(j) {
				t.Fatalf("handle %d: Records[%d].Sequence = %d", i, j, r.Sequence)
			}
		}
		other := (i + 1) % len(handles)
		if _, err := h.OrgByName(ctx, fmt.Sprintf("org-%d-49", other)); err != nil {
			t.Errorf("handle %d does not see handle %d's org: %v", i, other, err)
		}
	}

	for round := range 5 {
		runID := fmt.Sprintf("run_seal_%d", round)
		if err := handles[0].CreateRun(ctx, store.Run{ID: runID, OrgID: "org_a", OpenedAt: T0}); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 2*len(handles))
		start := make(chan struct{})
		for i := range errs {
			h := handles[i%len(handles)]
			wg.Go(func() {
				<-start
				errs[i] = h.SealRun(ctx, "org_a", runID, store.VPEC{ID: fmt.Sprintf("vpec-%d-%d", round, i), IssuedAt: T0, Body: []byte("{}")})
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrSealed):
				t.Errorf("round %d: SealRun %d: %v", round, i, err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d seals won (%v), want 1", round, won, errs)
		}
	}
	if err := handles[0].SealRun(ctx, "org_a", "run_1", store.VPEC{ID: "vpec-1", IssuedAt: T0, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	last := handles[len(handles)-1]
	if _, err := last.AppendRecord(ctx, "org_a", MakeRecord("run_1", n, "late", 10), store.Limits{}); !errors.Is(err, store.ErrSealed) {
		t.Errorf("AppendRecord through another handle after the seal: %v, want ErrSealed", err)
	}
}
