package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestLogMetrics: a close appends one log entry (counted, once the
// background append is done), and the entry's
// time from append to the first checkpoint that covers it is observed once,
// when the server hears of that checkpoint: not for a checkpoint that does
// not cover it, not again for a later one.
func TestLogMetrics(t *testing.T) {
	l := tlogtest.OpenLog(t, t.TempDir(), "log", nil)
	s := svctest.New(t, nil, func(c *server.Config) {
		c.Log = &server.TransparencyLog{Log: l, Secret: make([]byte, 32), ReceiptRetryAfter: logwriter.MinCheckpointInterval}
	})
	ctx := context.Background()
	p := s.Pipeline(t)
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "pii_scan", "sha256:"+fmt.Sprintf("%064x", 1), vpec.ResultPass, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The close answered once the VPEC was stored; its append finishes
	// in the background.
	if err := s.Server.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	integrated := func() float64 {
		return sample(scrape(t, s.URL), "svc_log_integration_duration_seconds", nil)
	}
	if got := sample(scrape(t, s.URL), "svc_log_entries_appended_total", nil); got != 1 {
		t.Errorf("svc_log_entries_appended_total = %v after one close, want 1", got)
	}
	for _, c := range []struct {
		size uint64
		want float64
	}{
		{0, 0}, // a checkpoint of the empty log covers nothing
		{1, 1}, // the entry at index 0 is integrated now
		{2, 1}, // and not observed again
	} {
		s.Server.CheckpointPublished(c.size, time.Now())
		if got := integrated(); got != c.want {
			t.Errorf("after a checkpoint of size %d: %v integration samples, want %v", c.size, got, c.want)
		}
	}
}
