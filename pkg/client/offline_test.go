package client_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// offlineClosed closes a run of two records while the service is down and
// returns the run, its unsigned VPEC and the queue path.
func offlineClosed(t *testing.T, e *env) (*client.Run, *client.VPECResult, string) {
	t.Helper()
	qpath := filepath.Join(t.TempDir(), "q.jsonl")
	down := e.pipeline(func(o *client.Options) { o.BaseURL = closedURL(t); o.QueuePath = qpath })
	run, err := down.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"a", "b"} {
		if _, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte(in)); err != nil {
			t.Fatal(err)
		}
	}
	v, err := run.Close(ctx)
	if err != nil || !v.Offline {
		t.Fatalf("offline close: %v", err)
	}
	down.Close()
	return run, v, qpath
}

// The unsigned offline VPEC carries the marker, and the verifier says what
// it is (never VALID, never SCHEMA ERROR). Flush names the sealed run and
// its VPEC id; GetVPEC fetches it by run id and by VPEC id.
func TestOfflineVPECMarkerAndFlushReport(t *testing.T) {
	e := newEnv(t)
	run, v, qpath := offlineClosed(t, e)
	if v.VPEC.Schema != vpec.OfflineSchema || v.VPEC.Signature != "" || v.VPEC.SigningKeyID != "" || v.VPEC.TimestampRFC3161 != "" {
		t.Fatalf("offline VPEC schema %q signature %q", v.VPEC.Schema, v.VPEC.Signature)
	}
	rep := e.verify(v.Raw)
	want := "UNSIGNED OFFLINE VPEC: fetch the signed one with svc vpec get " + run.ID()
	if rep.Valid || rep.Verdict != want || rep.Check(verify.CheckSchema).Code != verify.CodeUnsignedOffline {
		t.Fatalf("verdict %q (valid %v), want %q", rep.Verdict, rep.Valid, want)
	}

	up := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	// GetVPEC by run id delivers the run's queued entries first.
	signed, err := up.GetVPEC(ctx, run.ID())
	if err != nil {
		t.Fatalf("GetVPEC before flush: %v", err)
	}
	e.mustValid(signed, 2)
	open, err := up.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.GetVPEC(ctx, open.ID()); !errors.Is(err, client.ErrNotIssued) {
		t.Fatalf("GetVPEC of an open run: %v, want ErrNotIssued", err)
	}
	res, err := up.Flush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// FetchVPEC above delivered the run's entries: nothing is left.
	if res.Delivered != 0 || len(res.Sealed) != 0 {
		t.Fatalf("second flush %+v", res)
	}
}

// Flush reports each run whose close it delivered, with the VPEC id the
// service issued, and GetVPEC by that id returns the signed VPEC.
func TestFlushReportsSealedRuns(t *testing.T) {
	e := newEnv(t)
	run, _, qpath := offlineClosed(t, e)
	up := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	res, err := up.Flush(ctx)
	if err != nil || res.Delivered != 4 || len(res.Sealed) != 1 || res.Sealed[0].RunID != run.ID() ||
		!strings.HasPrefix(res.Sealed[0].VPECID, "vpec_") {
		t.Fatalf("flush %+v: %v", res, err)
	}
	byID, err := up.GetVPEC(ctx, res.Sealed[0].VPECID)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(byID, 2)
	byRun, err := up.GetVPEC(ctx, run.ID())
	if err != nil || string(byRun.Raw) != string(byID.Raw) {
		t.Fatalf("by run: %v", err)
	}
}
