package vpec_test

import (
	"context"
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestSealCancelled: Seal passes its context to the timestamper; a caller
// that has gone away gets ctx's error (errors.Is) and a VPEC with neither
// signature nor token, never a half-sealed one.
func TestSealCancelled(t *testing.T) {
	f := newFixture(t)
	v := &vpec.VPEC{VPECID: vpec.NewID("vpec_"), RunID: vpec.NewID("run_"), WorkflowID: "wf", OrgID: "org_1",
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", IssuedAt: vpec.FormatTime(timeNow())}
	vpec.Finish(v, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := vpec.Seal(ctx, v, f.signer, f.tsa)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Seal with a cancelled context: %v, want context.Canceled", err)
	}
	if v.Signature != "" || v.TimestampRFC3161 != "" {
		t.Errorf("cancelled Seal left signature %q, token %d bytes", v.Signature, len(v.TimestampRFC3161))
	}
	if err := vpec.Seal(context.Background(), v, f.signer, f.tsa); err != nil || v.Signature == "" || v.TimestampRFC3161 == "" {
		t.Fatalf("Seal after the cancelled one: %v", err)
	}
}
