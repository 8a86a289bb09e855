package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/service/server"
)

// slowTSA answers each request after delay; a request whose caller goes
// away fails, delay later (an authority far away, its connection torn
// down slowly).
type slowTSA struct {
	next    timestamp.Timestamper
	delay   time.Duration
	calls   atomic.Int32
	entered chan struct{} // gets one value per request, when it arrives
	dropped chan struct{} // gets one value per request whose caller went away
}

func (s *slowTSA) Timestamp(ctx context.Context, d []byte) ([]byte, error) {
	s.calls.Add(1)
	select {
	case s.entered <- struct{}{}:
	default:
	}
	select {
	case <-time.After(s.delay):
		return s.next.Timestamp(ctx, d)
	case <-ctx.Done():
		select {
		case s.dropped <- struct{}{}:
		default:
		}
		time.Sleep(s.delay)
		return nil, ctx.Err()
	}
}

// TestCloseRetriedAfterItsClientLeft: a close whose client times out while
// the timestamp authority is slow is abandoned (nobody waits for it); its
// client's retry with the same Idempotency-Key, arriving while the
// abandoned build still runs, is not given that build's cancellation
// (499) but closes again and gets the VPEC.
func TestCloseRetriedAfterItsClientLeft(t *testing.T) {
	e := newEnv(t)
	tsa := &slowTSA{next: e.mat.TSA, delay: 600 * time.Millisecond, entered: make(chan struct{}, 1), dropped: make(chan struct{}, 1)}
	srv, err := server.New(server.Config{Storage: server.StorageOf(e.st), Signer: e.mat.Signer, Timestamper: tsa, Trust: e.mat.Trust})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e.url = hs.URL
	run := e.open(e.keyA)

	// The client gives up once the build waits on the authority (not after
	// a fixed time: under the race detector the build can take longer than
	// any short timeout to get there, and then nothing was abandoned).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-tsa.entered:
		case <-time.After(time.Minute):
		}
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/api/v1/runs/"+run.RunID+"/close", nil)
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	req.Header.Set("Idempotency-Key", "retry-me")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the first close answered %d before its client's timeout; the authority was not slow enough", resp.StatusCode)
	}
	// The server sees its client gone when it reads the closed connection;
	// a retry that comes before that joins the first build and gets its
	// VPEC, which is right but not this test's case. Wait until the first
	// build is abandoned (its timestamp request cancelled, the authority
	// still slow to give up on it).
	select {
	case <-tsa.dropped:
	case <-time.After(time.Minute):
		t.Fatal("the first close's timestamp request was not cancelled a minute after its client left")
	}
	code, body, _ := e.closeWithKey(e.keyA, run.RunID, "retry-me", "")
	if code != 200 {
		t.Fatalf("the retry with the same key: %d %s; want the VPEC", code, body)
	}
	if sub := subjectOf(t, body); sub.VPECID == "" {
		t.Fatalf("the retry's answer is no VPEC: %s", body)
	}
	if n := tsa.calls.Load(); n != 2 {
		t.Errorf("%d timestamp requests; want 2 (the abandoned build's and the retry's)", n)
	}
}
