package statefile_test

import (
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// service is a real service on loopback that a test can make look down
// (503 from a "proxy" in front of it).
type service struct {
	tb   testing.TB
	sv   *svctest.Service
	down atomic.Bool
}

func newService(tb testing.TB) *service {
	s := &service{tb: tb}
	s.sv = svctest.New(tb, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.down.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, "upstream unavailable")
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	return s
}

// pipeline opens a Pipeline on the service with its queue at queue (a
// temporary file when empty), closed at cleanup.
func (s *service) pipeline(queue string) *client.Pipeline {
	s.tb.Helper()
	if queue == "" {
		queue = filepath.Join(s.tb.TempDir(), "queue.jsonl")
	}
	p, err := client.NewPipeline(client.Options{APIKey: s.sv.Key, BaseURL: s.sv.URL, WorkflowID: "claims", QueuePath: queue,
		Timeout: 2 * time.Second, RetryInterval: 20 * time.Millisecond})
	if err != nil {
		s.tb.Fatal(err)
	}
	s.tb.Cleanup(func() { p.Close() })
	return p
}

// verify checks a VPEC offline against the service's trust bundle.
func (s *service) verify(doc []byte) *verify.Report {
	r, err := verify.Verify(doc, verify.Options{Trust: s.sv.Material.Trust})
	if r == nil { // the options are refused: a bug in the test
		panic(err)
	}
	return r
}

// offlineClosed closes a run of two records while the service is down and
// returns the run, its unsigned VPEC and the queue path; the service is up
// again after.
func (s *service) offlineClosed() (*client.Run, *client.VPECResult, string) {
	s.tb.Helper()
	qpath := filepath.Join(s.tb.TempDir(), "q.jsonl")
	p := s.pipeline(qpath)
	run, err := p.Open(ctx, "")
	if err != nil {
		s.tb.Fatal(err)
	}
	s.down.Store(true)
	defer s.down.Store(false)
	for _, in := range []string{"a", "b"} {
		if _, err := run.Record(ctx, "c", "m1", vpec.ResultPass, []byte(in)); err != nil {
			s.tb.Fatal(err)
		}
	}
	v, err := run.Close(ctx)
	if err != nil || !v.Offline {
		s.tb.Fatalf("offline close: %v", err)
	}
	p.Close()
	return run, v, qpath
}
