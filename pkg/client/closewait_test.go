package client_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// heldTSA holds every timestamp request until release is closed (or the
// request's context ends), then asks next.
type heldTSA struct {
	next    timestamp.Timestamper
	release chan struct{}
}

func (h *heldTSA) Timestamp(ctx context.Context, d []byte) ([]byte, error) {
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.next.Timestamp(ctx, d)
}

// TestCloseWaitsForWorkingService: a close the service has not answered
// within Options.Timeout, while the service still answers (it is sealing
// a large run), is not given up for an offline VPEC: the client asks for
// the run and waits, in proportion to the run's record bytes, for the
// service's VPEC. Found: `svc close` on a 104 MB run hit the 5 s timeout,
// said the service was unreachable and wrote an unsigned offline VPEC.
func TestCloseWaitsForWorkingService(t *testing.T) {
	tsa := &heldTSA{release: make(chan struct{})}
	e := newEnv(t, func(c *server.Config) { tsa.next = c.Timestamper; c.Timestamper = tsa })
	seen := make(chan struct{})
	var once sync.Once
	e.gate.setFail(func(r *http.Request, _ []byte) int {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/runs/") {
			once.Do(func() { close(seen) })
		}
		return 0
	})
	p := e.pipeline() // Timeout 2 s
	ctx := context.Background()
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := run.Record(ctx, "pii", commitment.String([]byte("m")), vpec.ResultPass, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// The close's signature waits at the authority until the client has
	// given up its first attempt and asked for the run.
	go func() {
		<-seen
		close(tsa.release)
	}()
	res, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Offline {
		t.Fatalf("the client fell back to an offline VPEC while the service was sealing the run")
	}
	select {
	case <-seen:
	default:
		t.Fatalf("the close was answered within its first timeout: the test does not exercise the wait")
	}
	e.mustValid(res, 3)
}
