package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/vpec"
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
