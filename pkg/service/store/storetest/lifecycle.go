package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunLifecycle tests what is not one role: readiness (Ping), and that no
// write succeeds with a cancelled context, whatever its role.
func RunLifecycle(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"Ping", func(t *testing.T, s store.Store) { testPing(t, s) }},
		{"CancelledContext", testCancelledContext},
	})
}

func testPing(t *testing.T, s store.Pinger) {
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// testCancelledContext: no method succeeds with a cancelled context.
func testCancelledContext(t *testing.T, s store.Store) {
	f := seed(t, s, "acme")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.AppendRecord(ctx, f.org.ID, MakeRecord(f.run.ID, 0, "rec-0", 100), store.Limits{}); err == nil {
		t.Errorf("AppendRecord with a cancelled context: err = nil")
	}
	if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "v", IssuedAt: T0}); err == nil {
		t.Errorf("SealRun with a cancelled context: err = nil")
	}
	if _, err := s.Run(ctx, f.org.ID, f.run.ID); err == nil {
		t.Errorf("Run with a cancelled context: err = nil")
	}
	if err := s.CreateSession(ctx, newSession(f, "chk_1")); err == nil {
		t.Errorf("CreateSession with a cancelled context: err = nil")
	}
	if _, err := s.Session(context.Background(), f.org.ID, "chk_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Session after CreateSession with a cancelled context: err = %v, want ErrNotFound", err)
	}
	if err := s.CreateSession(context.Background(), newSession(f, "chk_2")); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSession(ctx, f.org.ID, "chk_2", T0, "sha256:c", nil); err == nil {
		t.Errorf("CloseSession with a cancelled context: err = nil")
	}
	if got, err := s.Session(context.Background(), f.org.ID, "chk_2"); err != nil || !got.ClosedAt.IsZero() {
		t.Errorf("Session after CloseSession with a cancelled context = %+v, %v; want it open", got, err)
	}
	if err := s.CreateCalibrationRequest(ctx, newCal(f.org.ID, "cal_req_1", "sha256:m", T0)); err == nil {
		t.Errorf("CreateCalibrationRequest with a cancelled context: err = nil")
	}
	got, err := s.Run(context.Background(), f.org.ID, f.run.ID)
	if err != nil || got.Sealed {
		t.Errorf("Run = %+v, %v; want it open", got, err)
	}
	if recs, err := s.Records(context.Background(), f.run.ID); err != nil || len(recs) != 0 {
		t.Errorf("Records = %d, %v; want none", len(recs), err)
	}
}
