package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunRuns tests the runs role (store.RunStore) short of the seal:
// creating and reading runs, appending and reading records, the run's
// metadata and limits, listings, concurrent appends.
func RunRuns(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"Runs", testRuns},
		{"AppendRecord", testAppendRecord},
		{"AppendRecordNoChangeOnError", testAppendRecordNoChange},
		{"Records", testRecords},
		{"EachRecord", testEachRecord},
		{"EachRecordBody", testEachRecordBody},
		{"RunMetadata", testRunMetadata},
		{"Limits", testLimits},
		{"OrgIsolation", testOrgIsolation},
		{"RunsOfOrg", testRunsOfOrg},
		{"RunsOfOrgEnvironment", testRunsOfOrgEnvironment},
		{"RunsOfOrgIsolation", testRunsOfOrgIsolation},
		{"ConcurrentAppendDistinct", testConcurrentAppendDistinct},
		{"ConcurrentAppendSame", testConcurrentAppendSame},
	})
}

func runEqual(a, b store.Run) bool {
	return a.ID == b.ID && a.OrgID == b.OrgID && a.WorkflowID == b.WorkflowID && a.SurfaceID == b.SurfaceID &&
		a.PolicyPackID == b.PolicyPackID && a.PolicySnapshotHash == b.PolicySnapshotHash &&
		a.ProcessContextHash == b.ProcessContextHash && a.Environment == b.Environment &&
		a.APIKeyID == b.APIKeyID && a.Sealed == b.Sealed && utcEqual(a.OpenedAt, b.OpenedAt) &&
		utcEqual(a.ClosedAt, b.ClosedAt) && a.VPECID == b.VPECID
}

func recordEqual(a, b store.Record) bool {
	return a.RunID == b.RunID && a.RecordID == b.RecordID && a.Sequence == b.Sequence &&
		a.ChainHash == b.ChainHash && bytes.Equal(a.Body, b.Body)
}

func testRuns(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	g := seed(t, s, "beta")
	got, err := s.Run(ctx, f.org.ID, f.run.ID)
	if err != nil || !runEqual(got, f.run) {
		t.Fatalf("Run = %+v, %v; want %+v", got, err, f.run)
	}
	if got.Sealed || !got.ClosedAt.IsZero() || got.VPECID != "" {
		t.Errorf("a new run is not open: %+v", got)
	}
	sealedInput := newRun(f.org.ID, f.key.ID, "run_claims_sealed")
	sealedInput.Sealed, sealedInput.ClosedAt, sealedInput.VPECID = true, T0, "vpec-x"
	creates := []struct {
		name string
		run  store.Run
		want error
	}{
		{"id taken", newRun(f.org.ID, f.key.ID, f.run.ID), store.ErrExists},
		{"id taken by another org", newRun(g.org.ID, g.key.ID, f.run.ID), store.ErrExists},
		{"unknown org", newRun("org_nobody", f.key.ID, "run_nobody"), store.ErrNotFound},
		{"stored open whatever it says", sealedInput, nil},
	}
	for _, c := range creates {
		wantErr(t, "CreateRun "+c.name, s.CreateRun(ctx, c.run), c.want)
	}
	if got, err := s.Run(ctx, f.org.ID, sealedInput.ID); err != nil || got.Sealed || !got.ClosedAt.IsZero() || got.VPECID != "" {
		t.Errorf("CreateRun of a run marked sealed: Run = %+v, %v; want it open", got, err)
	}
	lookups := []struct{ name, org, run string }{
		{"unknown run", f.org.ID, "run_nobody"},
		{"another org's run", f.org.ID, g.run.ID},
		{"unknown org", "org_nobody", f.run.ID},
		{"empty ids", "", ""},
	}
	for _, c := range lookups {
		if _, err := s.Run(ctx, c.org, c.run); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Run %s: err = %v, want ErrNotFound", c.name, err)
		}
	}
}

func testAppendRecord(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	g := seed(t, s, "beta")
	r0 := MakeRecord(f.run.ID, 0, "rec-0", 600)
	r1 := MakeRecord(f.run.ID, 1, "rec-1", 600)
	changedBody := r0
	changedBody.Body = append(bytes.Clone(r0.Body[:len(r0.Body)-2]), `y"}`...)
	changedChain := r0
	changedChain.ChainHash = "sha256:other"
	movedSeq := r0
	movedSeq.Sequence = 7
	seqTaken := MakeRecord(f.run.ID, 0, "rec-other", 600)
	binary := store.Record{RunID: f.run.ID, RecordID: "rec-bin", Sequence: 2, ChainHash: "h", Body: []byte{0, 1, 2, 0xff, '\'', '"', 0}}
	steps := []struct {
		name    string
		org     string
		rec     store.Record
		wantDup bool
		wantErr error
	}{
		{"first", f.org.ID, r0, false, nil},
		{"same again", f.org.ID, r0, true, nil},
		{"same id, different body", f.org.ID, changedBody, false, store.ErrConflict},
		{"same id, different chain hash", f.org.ID, changedChain, false, store.ErrConflict},
		{"same id and body, other sequence", f.org.ID, movedSeq, false, store.ErrConflict},
		{"sequence taken by another id", f.org.ID, seqTaken, false, store.ErrConflict},
		{"next", f.org.ID, r1, false, nil},
		{"next again", f.org.ID, r1, true, nil},
		{"arbitrary bytes", f.org.ID, binary, false, nil},
		{"another org's run", g.org.ID, MakeRecord(f.run.ID, 3, "rec-3", 10), false, store.ErrNotFound},
		{"unknown run", f.org.ID, MakeRecord("run_nobody", 0, "rec-0", 10), false, store.ErrNotFound},
		{"unknown org", "org_nobody", MakeRecord(f.run.ID, 3, "rec-3", 10), false, store.ErrNotFound},
		{"same record id in another run", g.org.ID, MakeRecord(g.run.ID, 0, "rec-0", 600), false, nil},
	}
	for _, st := range steps {
		dup, err := s.AppendRecord(ctx, st.org, st.rec, store.Limits{})
		wantErr(t, "AppendRecord "+st.name, err, st.wantErr)
		if dup != st.wantDup {
			t.Errorf("AppendRecord %s: duplicate = %v, want %v", st.name, dup, st.wantDup)
		}
	}
	for _, want := range []store.Record{r0, r1, binary} {
		got, err := s.RecordBySequence(ctx, f.run.ID, want.Sequence)
		if err != nil || !recordEqual(got, want) {
			t.Errorf("RecordBySequence(%d) = %+v, %v; want %+v", want.Sequence, got, err, want)
		}
	}
	for _, c := range []struct {
		run string
		seq int64
	}{{f.run.ID, 3}, {f.run.ID, 7}, {f.run.ID, -1}, {"run_nobody", 0}} {
		if _, err := s.RecordBySequence(ctx, c.run, c.seq); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RecordBySequence(%s, %d): err = %v, want ErrNotFound", c.run, c.seq, err)
		}
	}
}

// testAppendRecordNoChange: a rejected append changes nothing.
func testAppendRecordNoChange(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	r0 := MakeRecord(f.run.ID, 0, "rec-0", 600)
	mustAppend(t, s, f.org.ID, r0)
	bad := MakeRecord(f.run.ID, 0, "rec-x", 600)
	if _, err := s.AppendRecord(ctx, f.org.ID, bad, store.Limits{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("AppendRecord: err = %v, want ErrConflict", err)
	}
	moved := r0
	moved.Sequence = 1
	if _, err := s.AppendRecord(ctx, f.org.ID, moved, store.Limits{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("AppendRecord: err = %v, want ErrConflict", err)
	}
	got, err := s.Records(ctx, f.run.ID)
	if err != nil || len(got) != 1 || !recordEqual(got[0], r0) {
		t.Fatalf("Records = %+v, %v; want only rec-0", got, err)
	}
}

func testRecords(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := seed(t, s, "acme")
	got, err := s.Records(ctx, f.run.ID)
	if err != nil || len(got) != 0 {
		t.Fatalf("Records of an empty run = %+v, %v", got, err)
	}
	got, err = s.Records(ctx, "run_nobody")
	if err != nil || len(got) != 0 {
		t.Fatalf("Records of an unknown run = %+v, %v", got, err)
	}
	var want []store.Record
	for _, seq := range []int64{5, 0, 12, 3, 1, 100, 2} { // stored out of order, with gaps
		rec := MakeRecord(f.run.ID, seq, fmt.Sprintf("rec-%d", seq), 200+int(seq))
		mustAppend(t, s, f.org.ID, rec)
		want = append(want, rec)
	}
	sort.Slice(want, func(i, j int) bool { return want[i].Sequence < want[j].Sequence })
	got, err = s.Records(ctx, f.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Records: %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !recordEqual(got[i], want[i]) {
			t.Errorf("Records[%d] = %+v, want %+v", i, got[i], want[i])
		}
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

// testEachRecordBody: EachRecordBody gives what EachRecord gives
// (sequence and body of every record, in sequence order, across pages),
// stops at fn's error, and reads an unknown run as empty.
func testEachRecordBody(t *testing.T, s store.Store) {
	const n = 600
	ctx := context.Background()
	f := seed(t, s, "acme")
	for i := range n {
		// Sizes vary so that each body's bounds in the page matter.
		if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, int64(i+1), fmt.Sprintf("rec-%d", i+1), 300+i%37), store.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := s.Records(ctx, f.run.ID)
	if err != nil || len(want) != n {
		t.Fatalf("Records: %d, %v", len(want), err)
	}
	i := 0
	if err := s.EachRecordBody(ctx, f.run.ID, func(seq int64, body []byte) error {
		if i >= n || seq != want[i].Sequence || !bytes.Equal(body, want[i].Body) {
			return fmt.Errorf("record %d: sequence %d, body %q", i, seq, body)
		}
		i++
		return nil
	}); err != nil || i != n {
		t.Fatalf("EachRecordBody: %v after %d records", err, i)
	}
	stop := errors.New("stop")
	seen := 0
	if err := s.EachRecordBody(ctx, f.run.ID, func(int64, []byte) error {
		if seen++; seen == 300 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || seen != 300 {
		t.Errorf("EachRecordBody stopping: %v after %d", err, seen)
	}
	if err := s.EachRecordBody(ctx, "run_nobody", func(int64, []byte) error { return stop }); err != nil {
		t.Errorf("EachRecordBody of an unknown run: %v", err)
	}
}

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

// testOrgIsolation: two organisations with runs, VPECs and manifests of
// the same ids see only their own.
func testOrgIsolation(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	for _, f := range []fixture{a, b} {
		if _, err := s.PutManifest(ctx, store.Manifest{OrgID: f.org.ID, ID: "sha256:same", Name: f.org.Name, Body: []byte(f.org.Name), CreatedAt: T0}); err != nil {
			t.Fatal(err)
		}
		if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-" + f.org.Name, IssuedAt: T0, Body: []byte(f.org.Name)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ me, other fixture }{{a, b}, {b, a}} {
		if m, err := s.Manifest(ctx, c.me.org.ID, "sha256:same"); err != nil || string(m.Body) != c.me.org.Name || m.OrgID != c.me.org.ID {
			t.Errorf("Manifest of %s = %+v, %v", c.me.org.Name, m, err)
		}
		checks := []struct {
			name string
			err  error
		}{
			{"Run", func() error { _, err := s.Run(ctx, c.me.org.ID, c.other.run.ID); return err }()},
			{"VPEC", func() error { _, err := s.VPEC(ctx, c.me.org.ID, "vpec-"+c.other.org.Name); return err }()},
			{"AppendRecord", func() error {
				_, err := s.AppendRecord(ctx, c.me.org.ID, MakeRecord(c.other.run.ID, 9, "rec-9", 10), store.Limits{})
				return err
			}()},
			{"SealRun", s.SealRun(ctx, c.me.org.ID, c.other.run.ID, store.VPEC{ID: "vpec-z", IssuedAt: T0})},
		}
		for _, ch := range checks {
			if !errors.Is(ch.err, store.ErrNotFound) {
				t.Errorf("%s of %s's resource as %s: err = %v, want ErrNotFound", ch.name, c.other.org.Name, c.me.org.Name, ch.err)
			}
		}
	}
}

// testRunsOfOrg: RunsOfOrg lists most recently opened first, filtered by
// workflow, state and limit.
func testRunsOfOrg(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme") // run_acme, opened T0+2s, workflow wf-claims
	for i := 1; i <= 3; i++ {
		r := newRun(a.org.ID, a.key.ID, fmt.Sprintf("run_%d", i))
		r.OpenedAt = T0.Add(time.Duration(10+i) * time.Second)
		if i == 3 {
			r.WorkflowID = "wf-other"
		}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SealRun(ctx, a.org.ID, "run_2", store.VPEC{ID: "vpec_2", IssuedAt: T0.Add(20 * time.Second), Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	ids := func(rs []store.Run) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return fmt.Sprint(out)
	}
	for _, c := range []struct {
		f    store.RunFilter
		want string
	}{
		{store.RunFilter{}, "[run_3 run_2 run_1 run_acme]"},
		{store.RunFilter{Limit: 2}, "[run_3 run_2]"},
		{store.RunFilter{WorkflowID: "wf-claims"}, "[run_2 run_1 run_acme]"},
		{store.RunFilter{State: "sealed"}, "[run_2]"},
		{store.RunFilter{State: "open", WorkflowID: "wf-claims"}, "[run_1 run_acme]"},
		{store.RunFilter{WorkflowID: "nope"}, "[]"},
	} {
		got, err := s.RunsOfOrg(ctx, a.org.ID, c.f)
		if err != nil || ids(got) != c.want {
			t.Errorf("RunsOfOrg(%+v) = %s, %v; want %s", c.f, ids(got), err, c.want)
		}
	}
	got, _ := s.RunsOfOrg(ctx, a.org.ID, store.RunFilter{State: "sealed"})
	if len(got) == 1 && (got[0].VPECID != "vpec_2" || !got[0].Sealed) {
		t.Errorf("sealed run = %+v", got[0])
	}
}

// testRunsOfOrgEnvironment: RunsOfOrg filters by environment.
func testRunsOfOrgEnvironment(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme") // run_acme: production
	sb := sandboxKey(t, s, a)
	run := newRun(a.org.ID, sb.ID, "run_sb")
	run.Environment, run.OpenedAt = "sandbox", T0.Add(time.Minute)
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    store.RunFilter
		want []string
	}{
		{store.RunFilter{}, []string{"run_sb", "run_acme"}},
		{store.RunFilter{Environment: "sandbox"}, []string{"run_sb"}},
		{store.RunFilter{Environment: "production"}, []string{"run_acme"}},
		{store.RunFilter{Environment: "sandbox", State: "sealed"}, nil},
	} {
		got, err := s.RunsOfOrg(ctx, a.org.ID, c.f)
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if err != nil || fmt.Sprint(ids) != fmt.Sprint(c.want) {
			t.Errorf("RunsOfOrg(%+v) = %v, %v; want %v", c.f, ids, err, c.want)
		}
	}
}

// testRunsOfOrgIsolation: RunsOfOrg lists the organisation's runs only; an
// unknown organisation has an empty list.
func testRunsOfOrgIsolation(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, f := range []fixture{seed(t, s, "acme"), seed(t, s, "beta")} {
		runs, err := s.RunsOfOrg(ctx, f.org.ID, store.RunFilter{})
		if err != nil || len(runs) != 1 || runs[0].OrgID != f.org.ID {
			t.Errorf("RunsOfOrg(%s) = %+v, %v", f.org.Name, runs, err)
		}
	}
	if runs, err := s.RunsOfOrg(ctx, "org_nope", store.RunFilter{}); err != nil || len(runs) != 0 || runs == nil {
		t.Errorf("RunsOfOrg(unknown org) = %#v, %v; want an empty list", runs, err)
	}
}

// testConcurrentAppendDistinct: 200 distinct records from 8 goroutines are
// all stored exactly once.
func testConcurrentAppendDistinct(t *testing.T, s store.Store) {
	const n, workers = 200, 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				rec := MakeRecord(f.run.ID, int64(i), fmt.Sprintf("rec-%d", i), 600)
				dup, err := s.AppendRecord(ctx, f.org.ID, rec, store.Limits{})
				if err != nil || dup {
					errs <- fmt.Errorf("AppendRecord(%d) = %v, %v", i, dup, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.Records(ctx, f.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("Records: %d, want %d", len(got), n)
	}
	for i, r := range got {
		if want := MakeRecord(f.run.ID, int64(i), fmt.Sprintf("rec-%d", i), 600); !recordEqual(r, want) {
			t.Fatalf("Records[%d] = %s/%d, want %s/%d", i, r.RecordID, r.Sequence, want.RecordID, want.Sequence)
		}
	}
}

// testConcurrentAppendSame: one record appended by 8 goroutines at once is
// stored once; the others are told it is a duplicate.
func testConcurrentAppendSame(t *testing.T, s store.Store) {
	const workers = 8
	ctx := context.Background()
	f := seed(t, s, "acme")
	for round := range 5 {
		rec := MakeRecord(f.run.ID, int64(round), fmt.Sprintf("rec-%d", round), 600)
		var stored, dups atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range workers {
			wg.Go(func() {
				<-start
				dup, err := s.AppendRecord(ctx, f.org.ID, rec, store.Limits{})
				switch {
				case err != nil:
					t.Errorf("round %d: AppendRecord: %v", round, err)
				case dup:
					dups.Add(1)
				default:
					stored.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if stored.Load() != 1 || dups.Load() != workers-1 {
			t.Errorf("round %d: %d stored, %d duplicates; want 1 and %d", round, stored.Load(), dups.Load(), workers-1)
		}
	}
	got, err := s.Records(ctx, f.run.ID)
	if err != nil || len(got) != 5 {
		t.Fatalf("Records = %d, %v; want 5", len(got), err)
	}
}
