package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// dropFirstClose is a transport that delivers every request but loses the
// answer to the first close: the service issues the VPEC, the client sees
// a broken connection.
type dropFirstClose struct {
	dropped atomic.Int32
	keys    []string
}

var errLost = errors.New("connection reset (response lost)")

func (d *dropFirstClose) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/close") {
		return resp, err
	}
	d.keys = append(d.keys, req.Header.Get("Idempotency-Key"))
	if d.dropped.Add(1) == 1 {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errLost
	}
	return resp, nil
}

// TestCloseResponseLost (D8): a close whose response is lost is retried
// with the same Idempotency-Key and returns the VPEC the service issued,
// signed and VALID, not an offline one; the service holds that VPEC.
func TestCloseResponseLost(t *testing.T) {
	e := newEnv(t)
	tr := &dropFirstClose{}
	p := e.pipeline(func(o *client.Options) { o.HTTPClient = &http.Client{Transport: tr} })
	ctx := context.Background()
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	manifest := "sha256:" + strings.Repeat("ab", 32)
	for i := range 3 {
		if _, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := run.Close(ctx)
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	if res.Offline {
		t.Fatalf("Close returned an offline VPEC after a lost response")
	}
	e.mustValid(res, 3)
	if len(tr.keys) != 2 || tr.keys[0] == "" || tr.keys[0] != tr.keys[1] {
		t.Errorf("close requests carried keys %q, want the same key twice", tr.keys)
	}
	sr, code := e.serverRun(run.ID())
	if code != 200 || sr.VPECID != res.VPEC.VPECID {
		t.Errorf("the service's run: %d vpec %s; the client got %s", code, sr.VPECID, res.VPEC.VPECID)
	}
	if _, err := run.Close(ctx); !errors.Is(err, client.ErrRunSealed) {
		t.Errorf("second Close: %v, want ErrRunSealed", err)
	}
}

// flakyTSA fails while down is set.
type flakyTSA struct {
	next timestamp.Timestamper
	down atomic.Bool
}

func (f *flakyTSA) Timestamp(ctx context.Context, d []byte) ([]byte, error) {
	if f.down.Load() {
		return nil, errors.New("TSA unreachable")
	}
	return f.next.Timestamp(ctx, d)
}

// TestCloseAfterTimestampFailure: a Close while the service's timestamp
// authority fails (502: the run's records are sealed, no VPEC) is retried
// with the same Idempotency-Key, then queued with that key (the client
// answers offline); once the authority is back, delivering the queued
// close completes the same close (not 409), and FetchVPEC returns the
// service's VPEC.
func TestCloseAfterTimestampFailure(t *testing.T) {
	tsa := &flakyTSA{}
	e := newEnv(t, func(c *server.Config) { tsa.next = c.Timestamper; c.Timestamper = tsa })
	var flushErr atomic.Pointer[error]
	p := e.pipeline(func(o *client.Options) {
		o.Timeout = 300 * time.Millisecond
		o.OnFlushError = func(err error) { flushErr.Store(&err) }
	})
	ctx := context.Background()
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	manifest := "sha256:" + strings.Repeat("ab", 32)
	for i := range 2 {
		if _, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	tsa.down.Store(true)
	res, err := run.Close(ctx)
	if err != nil || !res.Offline {
		t.Fatalf("Close with the TSA down: %v, offline %v; want an offline VPEC", err, res != nil && res.Offline)
	}
	if sr, _ := e.serverRun(run.ID()); sr.Status != api.RunSealed || sr.VPECID != "" {
		t.Fatalf("the service's run: %s vpec %q; want sealed without a VPEC", sr.Status, sr.VPECID)
	}
	tsa.down.Store(false)
	// The pipeline's prober may deliver the queued close in the background
	// once the authority is back (a slow machine gives it the time); either
	// way the close is delivered exactly once and nothing is refused.
	n, err := p.FlushQueue(ctx)
	if err != nil || n > 1 {
		t.Fatalf("FlushQueue: %d, %v; want the close delivered", n, err)
	}
	if left, _ := p.PendingQueueCount(); left != 0 {
		t.Fatalf("%d entries still queued after FlushQueue delivered %d", left, n)
	}
	if ep := flushErr.Load(); ep != nil {
		t.Fatalf("a background flush reported %v", *ep)
	}
	got, err := p.FetchVPEC(ctx, run.ID())
	if err != nil {
		t.Fatalf("FetchVPEC: %v", err)
	}
	e.mustValid(got, 2)
}
