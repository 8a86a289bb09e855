package client_test

import (
	"context"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// A run saved by one process and restored by another continues the same
// chain; registry calls reach the service.
func TestRunStateAndRegistry(t *testing.T) {
	ctx := context.Background()
	env := newEnv(t)
	p1 := env.pipeline()
	run, err := p1.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "pii", "m1", vpec.ResultPass, []byte("first input")); err != nil {
		t.Fatal(err)
	}
	st := run.State()
	p1.Close()

	p2 := env.pipeline()
	again, err := p2.RestoreRun(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Record(ctx, "toxicity", "m1", vpec.ResultFail, []byte("second input")); err != nil {
		t.Fatal(err)
	}
	res, err := again.Close(ctx)
	if err != nil || res.Offline {
		t.Fatalf("close: %v offline=%v", err, res != nil && res.Offline)
	}
	if rep := env.verify(res.Raw); !rep.Valid || rep.Records != 2 {
		t.Fatalf("VPEC after restore: %s, %d records", rep.Verdict, rep.Records)
	}
	if _, err := p2.RestoreRun(client.RunState{RunID: "nope", ChainHash: "x"}); err == nil {
		t.Fatal("a bad state restored")
	}
	lk, err := p2.Lookup(ctx, "sha256:0000000000000000000000000000000000000000000000000000000000000000")
	if err != nil || lk.Found {
		t.Fatalf("lookup of an unknown model: %+v %v", lk, err)
	}
	if list, err := p2.Profiles(ctx); err != nil || list == nil {
		t.Fatalf("profiles: %v %v", list, err)
	}
	cal, err := p2.RequestCalibration(ctx, client.CalibrationRequest{ONNXModelHash: "sha256:1111111111111111111111111111111111111111111111111111111111111111"})
	if err != nil || cal.Status != "queued" {
		t.Fatalf("calibration request: %+v %v", cal, err)
	}
	if got, err := p2.Calibration(ctx, cal.RequestID); err != nil || got.RequestID != cal.RequestID {
		t.Fatalf("calibration status: %+v %v", got, err)
	}
}
