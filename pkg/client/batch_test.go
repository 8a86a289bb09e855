package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// countPaths makes the gate count the record requests that reach the
// service: single appends and batches (and how many records those held).
type pathCount struct{ single, batches, batched atomic.Int64 }

func (e *env) countPaths(refuseBatch int) *pathCount {
	c := &pathCount{}
	e.gate.setFail(func(r *http.Request, body []byte) int {
		switch {
		case strings.HasSuffix(r.URL.Path, "/records:batch"):
			if refuseBatch != 0 {
				return refuseBatch
			}
			c.batches.Add(1)
			c.batched.Add(int64(strings.Count(string(body), `"record_id":`)))
		case strings.HasSuffix(r.URL.Path, "/records"):
			c.single.Add(1)
		}
		return 0
	})
	return c
}

// items makes n batch items with distinct inputs.
func items(n int, tag string) []client.BatchItem {
	out := make([]client.BatchItem, n)
	for i := range out {
		out[i] = client.BatchItem{Check: "c", ManifestID: manifest, Result: vpec.ResultPass, Input: fmt.Appendf(nil, "%s %d", tag, i)}
	}
	return out
}

// Run.RecordBatch sends one batch request and chains the records with the
// run's single records; the VPEC holds them all.
func TestRunRecordBatch(t *testing.T) {
	e := newEnv(t)
	c := e.countPaths(0)
	p := e.pipeline()
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("first")); err != nil {
		t.Fatal(err)
	}
	res, err := run.RecordBatch(ctx, items(5, "batch"))
	if err != nil || len(res) != 5 {
		t.Fatalf("RecordBatch = %v, %v", res, err)
	}
	for i, r := range res {
		if r.Queued || r.Sequence != int64(i+2) || r.Duplicate {
			t.Errorf("result %d = %+v, want sequence %d stored", i, r, i+2)
		}
	}
	if _, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("last")); err != nil {
		t.Fatal(err)
	}
	if c.batches.Load() != 1 || c.batched.Load() != 5 || c.single.Load() != 2 {
		t.Errorf("%d batch requests of %d records and %d single appends; want 1 of 5 and 2", c.batches.Load(), c.batched.Load(), c.single.Load())
	}
	// Invalid items are refused before anything is sent.
	bad := items(2, "bad")
	bad[1].Result = "maybe"
	if _, err := run.RecordBatch(ctx, bad); !errors.Is(err, client.ErrInvalidRecord) {
		t.Errorf("RecordBatch with an invalid item: %v, want ErrInvalidRecord", err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 7)
}

// Records queued during an outage (by Record and RecordBatch) are flushed
// with the batch API, in order, none lost; the host never waits on the
// service (fail-open as before).
func TestFlushSendsBatches(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline(func(o *client.Options) { o.RetryInterval = time.Hour })
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	e.gate.set(unavailable)
	for i := range 30 {
		if r, err := run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "queued %d", i)); err != nil || !r.Queued {
			t.Fatalf("record %d during the outage: %+v %v", i, r, err)
		}
	}
	res, err := run.RecordBatch(ctx, items(1200, "queued batch"))
	if err != nil || len(res) != 1200 || !res[0].Queued || !res[1199].Queued || res[1199].Sequence != 1230 {
		t.Fatalf("RecordBatch during the outage: %d results, %v", len(res), err)
	}
	e.gate.set(pass)
	c := e.countPaths(0)
	if n, err := p.FlushQueue(ctx); n != 1230 || err != nil {
		t.Fatalf("flush: %d, %v", n, err)
	}
	// 1230 records, at most 1000 per batch: two batch requests at least,
	// no single appends.
	if c.single.Load() != 0 || c.batches.Load() < 2 || c.batched.Load() != 1230 {
		t.Errorf("flush: %d single appends, %d batches of %d records; want 0 and all 1230 in batches", c.single.Load(), c.batches.Load(), c.batched.Load())
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 1230)
}

// A service slower than the Timeout for a full batch (here: any batch of
// more than 100 records answers only after the client gave up) still
// gets the whole queue: the flush halves the batch until it goes through,
// in the same flush, none lost or doubled.
func TestFlushShrinksSlowBatches(t *testing.T) {
	e := newEnv(t)
	const timeout = 300 * time.Millisecond
	p := e.pipeline(func(o *client.Options) { o.RetryInterval = time.Hour; o.Timeout = timeout })
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	e.gate.set(unavailable)
	if _, err := run.RecordBatch(ctx, items(1230, "slow")); err != nil {
		t.Fatal(err)
	}
	e.gate.set(pass)
	var slow, fast atomic.Int64
	e.gate.setFail(func(r *http.Request, body []byte) int {
		if !strings.HasSuffix(r.URL.Path, "/records:batch") {
			return 0
		}
		if strings.Count(string(body), `"record_id":`) <= 100 {
			fast.Add(1)
			return 0
		}
		slow.Add(1)
		<-r.Context().Done() // the client gave up; the service goes on
		return 0
	})
	if n, err := p.FlushQueue(ctx); n != 1230 || err != nil {
		t.Fatalf("flush: %d, %v; want all 1230 records in one flush", n, err)
	}
	if slow.Load() == 0 || fast.Load() < 13 {
		t.Errorf("%d slow and %d fast batches; want the full batch timed out and at least 13 batches of at most 100", slow.Load(), fast.Load())
	}
	e.gate.setFail(nil)
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 1230)
}

// Against a service without the batch API (it answers 404 or 405 on the
// batch path), the flush and RecordBatch fall back to single appends.
func TestBatchFallsBackOnOlderService(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			e := newEnv(t)
			p := e.pipeline(func(o *client.Options) { o.RetryInterval = time.Hour })
			run, err := p.Open(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			e.gate.set(unavailable)
			for i := range 10 {
				run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "queued %d", i))
			}
			e.gate.set(pass)
			c := e.countPaths(status)
			if n, err := p.FlushQueue(ctx); n != 10 || err != nil {
				t.Fatalf("flush: %d, %v", n, err)
			}
			res, err := run.RecordBatch(ctx, items(4, "direct"))
			if err != nil || len(res) != 4 || res[3].Queued || res[3].Sequence != 14 {
				t.Fatalf("RecordBatch: %v, %v", res, err)
			}
			if c.single.Load() != 14 || c.batches.Load() != 0 {
				t.Errorf("%d single appends, %d batches; want 14 and 0", c.single.Load(), c.batches.Load())
			}
			v, err := run.Close(ctx)
			if err != nil {
				t.Fatal(err)
			}
			e.mustValid(v, 14)
		})
	}
}

// A queued batch the service refuses (the run was sealed elsewhere) is
// delivered one by one: each refused record is dead-lettered on its own,
// the flush goes on with the next run.
func TestFlushRefusedBatchGoesOneByOne(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline(func(o *client.Options) { o.RetryInterval = time.Hour })
	run, _ := p.Open(ctx, "")
	run.Record(ctx, "c", manifest, vpec.ResultPass, []byte("1"))
	e.gate.set(unavailable)
	for i := range 3 {
		run.Record(ctx, "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "queued %d", i))
	}
	other, _ := p.Open(ctx, "")
	other.RecordBatch(ctx, items(3, "other"))
	e.gate.set(pass)
	elsewhere := e.pipeline()
	r, err := elsewhere.ResumeRun(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c := e.countPaths(0)
	n, err := p.FlushQueue(ctx)
	var rej *client.RejectedError
	if n != 4 || !errors.As(err, &rej) || len(rej.Entries) != 3 || !errors.Is(rej.Entries[0].Err, client.ErrRunSealed) {
		t.Fatalf("flush: %d, %v", n, err)
	}
	if c.single.Load() != 3 || c.batches.Load() != 2 {
		t.Errorf("%d single appends, %d batches; want 3 (the refused batch one by one) and 2 (the refused one, the other run's)", c.single.Load(), c.batches.Load())
	}
	v, err := other.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 3)
}
