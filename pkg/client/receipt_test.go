package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// closeOne opens a run, records one check and closes it.
func closeOne(t *testing.T, p *client.Pipeline) *client.VPECResult {
	t.Helper()
	run, err := p.Open(ctx, "pp_2026q4")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte("x")); err != nil {
		t.Fatal(err)
	}
	res, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// receiptVerifier checks receipts against a log's key alone.
func receiptVerifier(t *testing.T, key tlog.LogKey) *tlog.Verifier {
	t.Helper()
	none, err := tlog.ParseWitnessPolicy([]byte("quorum none\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := tlog.NewVerifier(key, none)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func subject(t *testing.T, raw []byte) tlog.Subject {
	t.Helper()
	d, err := vpec.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return tlog.Subject{VPECID: d.VPEC.VPECID, Digest: tlog.DigestParts(d.SignedParts)}
}

// TestCloseFetchesReceipt: after an online close the client fetches the
// VPEC's receipt in the background (AwaitReceipt), and with
// WaitForReceipt the close returns with it already there; both verify
// against the log key for that VPEC. GetReceipt fetches one on demand.
func TestCloseFetchesReceipt(t *testing.T) {
	withLog, l := svctest.WithLog(t)
	e := newEnv(t, withLog)
	v := receiptVerifier(t, l.Key())
	for _, wait := range []bool{false, true} {
		// A generous Timeout: the receipt comes one checkpoint (100 ms)
		// after the close on an idle machine, much later on a busy one.
		p := e.pipeline(func(o *client.Options) { o.WaitForReceipt = wait; o.Timeout = time.Minute })
		res := closeOne(t, p)
		e.mustValid(res, 1)
		var receipt []byte
		var err error
		if wait {
			receipt, err = res.Receipt()
		} else {
			actx, cancel := context.WithTimeout(ctx, time.Minute)
			receipt, err = res.AwaitReceipt(actx)
			cancel()
		}
		if err != nil {
			t.Fatalf("wait %v: receipt: %v", wait, err)
		}
		if _, err := v.VerifyReceipt(receipt, subject(t, res.Raw)); err != nil {
			t.Errorf("wait %v: VerifyReceipt: %v", wait, err)
		}
		again, err := p.GetReceipt(ctx, res.VPEC.VPECID, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.VerifyReceipt(again, subject(t, res.Raw)); err != nil {
			t.Errorf("GetReceipt: %v", err)
		}
	}
}

// TestReceiptFailOpen: without a log on the service the close still
// returns its VPEC and the receipt is ErrNoReceipt; an offline VPEC has
// none either.
func TestReceiptFailOpen(t *testing.T) {
	e := newEnv(t, func(*server.Config) {})
	p := e.pipeline()
	res := closeOne(t, p)
	e.mustValid(res, 1)
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := res.AwaitReceipt(actx); !errors.Is(err, client.ErrNoReceipt) {
		t.Errorf("receipt from a service without a log: %v, want ErrNoReceipt", err)
	}
	if _, err := p.GetReceipt(ctx, res.VPEC.VPECID, 0); !errors.Is(err, client.ErrNoReceipt) {
		t.Errorf("GetReceipt from a service without a log: %v, want ErrNoReceipt", err)
	}
	e.gate.set(unavailable)
	off := closeOne(t, p)
	if !off.Offline {
		t.Fatal("the close with the service down was not offline")
	}
	if _, err := off.Receipt(); !errors.Is(err, client.ErrNoReceipt) {
		t.Errorf("offline VPEC's receipt: %v, want ErrNoReceipt", err)
	}
}
