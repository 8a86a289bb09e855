package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/server"
)

// closeWithKey closes runID with an Idempotency-Key and a query, and
// returns the status, the body and the log index header.
func (e *env) closeWithKey(key, runID, idem, query string) (int, []byte, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+"/api/v1/runs/"+runID+"/close"+query, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Error(err)
		return 0, nil, ""
	}
	defer resp.Body.Close()
	buf, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, buf, resp.Header.Get(api.HeaderLogIndex)
}

// TestCloseAnswersBeforeLog: a close without wait answers once the VPEC
// is stored, without a log index; the background append records the
// index, and the receipt verifies for that VPEC. A retry with the same
// Idempotency-Key asking for the index gets it. Any other wait value is
// 400 naming wait, and leaves the run open.
func TestCloseAnswersBeforeLog(t *testing.T) {
	ctx := context.Background()
	le := newLogEnv(t)
	e, srv, v := le.env, le.srv, le.verifier

	run := e.open(e.keyA)
	code, doc, idx := e.closeWithKey(e.keyA, run.RunID, "k1", "")
	if code != 200 || idx != "" {
		t.Fatalf("close: %d, %s %q; want 200 without an index", code, api.HeaderLogIndex, idx)
	}
	sub := subjectOf(t, doc)
	if err := srv.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := e.st.VPECInfo(ctx, "org_alpha", sub.VPECID)
	if err != nil || !info.Logged || info.LogIndex != 0 {
		t.Fatalf("after the background append: logged %v at %d, %v; want index 0", info.Logged, info.LogIndex, err)
	}
	code, receipt := e.do("GET", "/api/v1/vpecs/"+sub.VPECID+"/receipt?wait=10s", e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("receipt: %d %s", code, receipt)
	}
	if got, err := v.VerifyReceipt(receipt, sub); err != nil || got.Index != 0 {
		t.Fatalf("receipt: index %d, %v", got.Index, err)
	}
	code, again, idx := e.closeWithKey(e.keyA, run.RunID, "k1", "?wait=log-index")
	if code != 200 || idx != "0" || string(again) != string(doc) {
		t.Errorf("retry asking for the index: %d, index %q, same VPEC %v", code, idx, string(again) == string(doc))
	}

	for _, q := range []string{"?wait=receipt", "?wait=", "?wait=LOG-INDEX", "?wait=log-index&wait=log-index", "?wait=log-index%00", "?wait=log%zzindex", "?wait=log-index;x"} {
		run := e.open(e.keyA)
		code, body, _ := e.closeWithKey(e.keyA, run.RunID, "", q)
		if code != 400 || !strings.Contains(string(body), `"wait"`) {
			t.Errorf("close%s: %d %s; want 400 naming wait", q, code, body)
		}
		if code, body := e.do("GET", "/api/v1/runs/"+run.RunID, e.keyA, nil, nil); code != 200 || !strings.Contains(string(body), `"status":"open"`) {
			t.Errorf("close%s refused, the run: %d %s; want it open", q, code, body)
		}
	}
}

// TestBackgroundAppendFails: while the log fails, a close without wait
// still answers its VPEC (stored, owed to the log: counted in
// svc_log_append_failures_total), a close asking for the index fails
// visibly (503 log_unavailable) and so does a receipt request; once the
// log is back, KeepLogging appends both and their receipts verify.
func TestBackgroundAppendFails(t *testing.T) {
	ctx := context.Background()
	le := newLogEnv(t)
	e, srv, v := le.env, le.srv, le.verifier
	server.SetAppendFault(srv, func() error { return errors.New("log disk full") })

	code, doc, idx := e.closeWithKey(e.keyA, e.open(e.keyA).RunID, "", "")
	if code != 200 || idx != "" {
		t.Fatalf("close while the log fails: %d %s %q; want the VPEC", code, doc, idx)
	}
	code, body, _ := e.closeWithKey(e.keyA, e.open(e.keyA).RunID, "", "?wait=log-index")
	if code != 503 || !strings.Contains(string(body), api.CodeLogUnavailable) {
		t.Fatalf("close asking for the index while the log fails: %d %s; want 503 %s", code, body, api.CodeLogUnavailable)
	}
	if err := srv.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	sub := subjectOf(t, doc)
	if code, body := e.do("GET", "/api/v1/vpecs/"+sub.VPECID+"/receipt", e.keyA, nil, nil); code != 503 {
		t.Errorf("receipt while the log fails: %d %s; want 503", code, body)
	}
	if got := sample(scrape(t, e.url), "svc_log_append_failures_total", nil); got != 1 {
		t.Errorf("svc_log_append_failures_total = %v, want 1", got)
	}
	if vs, err := e.st.VPECsNotLogged(ctx, 0); err != nil || len(vs) != 2 {
		t.Fatalf("VPECsNotLogged = %d, %v; want both VPECs", len(vs), err)
	}

	server.SetAppendFault(srv, nil)
	kctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { srv.KeepLogging(kctx, 10*time.Millisecond); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		vs, err := e.st.VPECsNotLogged(ctx, 0)
		if err == nil && len(vs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("KeepLogging left %d VPECs out of the log, %v", len(vs), err)
		}
	}
	code, receipt := e.do("GET", "/api/v1/vpecs/"+sub.VPECID+"/receipt?wait=10s", e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("receipt: %d %s", code, receipt)
	}
	if _, err := v.VerifyReceipt(receipt, sub); err != nil {
		t.Error(err)
	}
	if st := le.log.Stats(); st.Appended != 2 {
		t.Errorf("log appended %d leaves, want 2", st.Appended)
	}
}

// TestCloseRacesItsReceipt: closes without wait, each raced by a request
// for its receipt and by a retry of the same close asking for the index,
// put each VPEC in the log once: as many leaves as VPECs, every receipt
// verifying at the index the retry answered.
func TestCloseRacesItsReceipt(t *testing.T) {
	ctx := context.Background()
	le := newLogEnv(t)
	e, srv, v := le.env, le.srv, le.verifier
	const n = 12
	runs := make([]string, n)
	for i := range runs {
		runs[i] = e.open(e.keyA).RunID
	}
	type result struct {
		sub     tlog.Subject
		index   string
		receipt []byte
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i, id := range runs {
		wg.Go(func() {
			idem := fmt.Sprintf("race-%d", i)
			code, doc, _ := e.closeWithKey(e.keyA, id, idem, "")
			if code != 200 {
				t.Errorf("close %d: %d %s", i, code, doc)
				return
			}
			sub := subjectOf(t, doc)
			var inner sync.WaitGroup
			inner.Go(func() {
				code, rc := e.do("GET", "/api/v1/vpecs/"+sub.VPECID+"/receipt?wait=20s", e.keyA, nil, nil)
				if code != 200 {
					t.Errorf("receipt %d: %d %s", i, code, rc)
				}
				results[i].receipt = rc
			})
			inner.Go(func() {
				code, _, idx := e.closeWithKey(e.keyA, id, idem, "?wait=log-index")
				if code != 200 || idx == "" {
					t.Errorf("retry %d: %d, index %q", i, code, idx)
				}
				results[i].index = idx
			})
			inner.Wait()
			results[i].sub = sub
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if err := srv.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for i, r := range results {
		got, err := v.VerifyReceipt(r.receipt, r.sub)
		if err != nil {
			t.Errorf("receipt %d: %v", i, err)
			continue
		}
		if fmt.Sprint(got.Index) != r.index || seen[got.Index] {
			t.Errorf("VPEC %d: receipt at %d, retry answered %s, index seen before %v", i, got.Index, r.index, seen[got.Index])
		}
		seen[got.Index] = true
	}
	if st := le.log.Stats(); st.Appended != n {
		t.Errorf("the log appended %d leaves for %d VPECs (duplicates %d)", st.Appended, n, st.Duplicates)
	}
}

// TestReceiptWaitsForTheBatch: a receipt asked for while the VPEC's leaf
// waits for its background batch does not append the leaf alone: without
// wait it is 503 receipt_pending at once; with wait it comes once the
// batch is appended and a checkpoint covers it. Closes within one batch
// window share one batch: their leaves are appended together.
func TestReceiptWaitsForTheBatch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	l, v := openTestLog(t, t.TempDir())
	srv, err := server.New(server.Config{Storage: server.StorageOf(e.st), Signer: e.mat.Signer, Timestamper: e.mat.TSA, Trust: e.mat.Trust,
		Log: &server.TransparencyLog{Log: l, Secret: make([]byte, 32), Store: e.st, ReceiptRetryAfter: 100 * time.Millisecond, BatchWindow: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e.url = hs.URL

	var subs []tlog.Subject
	for range 3 {
		code, doc, _ := e.closeWithKey(e.keyA, e.open(e.keyA).RunID, "", "")
		if code != 200 {
			t.Fatalf("close: %d %s", code, doc)
		}
		subs = append(subs, subjectOf(t, doc))
	}
	code, body := e.do("GET", "/api/v1/vpecs/"+subs[0].VPECID+"/receipt", e.keyA, nil, nil)
	if code != 503 || !strings.Contains(string(body), api.CodeReceiptPending) || !strings.Contains(string(body), "queued") {
		t.Fatalf("receipt of a queued leaf without wait: %d %s; want 503 receipt_pending saying it is queued", code, body)
	}
	if st := l.Stats(); st.Appended != 0 {
		t.Fatalf("the receipt request appended %d leaves; want them left to their batch", st.Appended)
	}
	code, receipt := e.do("GET", "/api/v1/vpecs/"+subs[2].VPECID+"/receipt?wait=30s", e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("receipt with wait: %d %s", code, receipt)
	}
	if _, err := v.VerifyReceipt(receipt, subs[2]); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Appended != 3 || st.Duplicates != 0 {
		t.Errorf("log stats %+v; want the 3 leaves appended once each", st)
	}
}

// TestKeepLoggingAppendsWhatAStoppedProcessOwed: a VPEC stored without a
// log index more than OwedGrace ago (a server sharing the store died
// before its background append) is appended by another server's sweep
// with no failure of its own; a VPEC stored just now (another live
// server's queued leaf) is left to its owner.
func TestKeepLoggingAppendsWhatAStoppedProcessOwed(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	// The "other process": a server on the same store without a log, one
	// close an hour ago, one now.
	var now atomic.Pointer[time.Time]
	old := time.Now().Add(-time.Hour)
	now.Store(&old)
	other, err := server.New(server.Config{Storage: server.StorageOf(e.st), Signer: e.mat.Signer, Timestamper: e.mat.TSA, Trust: e.mat.Trust,
		Now: func() time.Time { return *now.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	ohs := httptest.NewServer(other)
	t.Cleanup(ohs.Close)
	e.url = ohs.URL
	oldDoc, _ := e.closeRun(e.keyA, e.open(e.keyA).RunID)
	fresh := time.Now()
	now.Store(&fresh)
	youngDoc, _ := e.closeRun(e.keyA, e.open(e.keyA).RunID)

	l, v := openTestLog(t, t.TempDir())
	srv, _ := startLogServer(t, e.st, e.mat, l, make([]byte, 32))
	kctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { srv.KeepLogging(kctx, 10*time.Millisecond); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	oldSub, youngSub := subjectOf(t, oldDoc), subjectOf(t, youngDoc)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		info, err := e.st.VPECInfo(ctx, "org_alpha", oldSub.VPECID)
		if err == nil && info.Logged {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep did not append the VPEC owed for an hour: %+v, %v", info, err)
		}
	}
	time.Sleep(100 * time.Millisecond) // ten more sweeps
	if info, err := e.st.VPECInfo(ctx, "org_alpha", youngSub.VPECID); err != nil || info.Logged {
		t.Errorf("the sweep appended a VPEC stored just now (another server's queued leaf): %+v, %v", info, err)
	}
	rc, err := l.AwaitReceipt(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyReceipt(rc.JSON, oldSub); err != nil {
		t.Errorf("receipt of the owed VPEC: %v", err)
	}
}

// TestLogOrder pins what docs/TRANSPARENCY.md ("Log order") promises: a
// close that waited for its index (?wait=log-index) is before, in the
// log, every close that started after its answer; closes answered in one
// batch window get distinct indices in no set order, and every one of
// them is in the log once.
func TestLogOrder(t *testing.T) {
	ctx := context.Background()
	le := newLogEnv(t)
	e, srv := le.env, le.srv

	last := int64(-1)
	for i := range 4 {
		run := e.open(e.keyA)
		code, _, idx := e.closeWithKey(e.keyA, run.RunID, "", "?wait=log-index")
		var n int64
		if _, err := fmt.Sscan(idx, &n); code != 200 || err != nil {
			t.Fatalf("close %d: %d, index %q", i, code, idx)
		}
		if n <= last {
			t.Fatalf("close %d waited for index %d, after a close that waited for %d", i, n, last)
		}
		last = n
	}

	const parallel = 8
	subs := make([]string, parallel)
	var wg sync.WaitGroup
	for i := range parallel {
		run := e.open(e.keyA)
		wg.Go(func() {
			code, doc, _ := e.closeWithKey(e.keyA, run.RunID, "", "")
			if code != 200 {
				t.Errorf("close: %d %s", code, doc)
				return
			}
			subs[i] = subjectOf(t, doc).VPECID
		})
	}
	wg.Wait()
	if err := srv.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	for _, id := range subs {
		info, err := e.st.VPECInfo(ctx, "org_alpha", id)
		if err != nil || !info.Logged {
			t.Fatalf("%s: logged %v, %v", id, info.Logged, err)
		}
		if int64(info.LogIndex) <= last {
			t.Errorf("%s at index %d, not after the waited closes (last %d)", id, info.LogIndex, last)
		}
		if other, dup := seen[int64(info.LogIndex)]; dup {
			t.Errorf("%s and %s both at index %d", id, other, info.LogIndex)
		}
		seen[int64(info.LogIndex)] = id
	}
	if len(seen) != parallel {
		t.Errorf("%d distinct indices for %d closes", len(seen), parallel)
	}
}
