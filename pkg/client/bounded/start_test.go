//go:build cgo

package bounded_test

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
)

// TestStartWait: Start gives the verdict, score and probabilities at once
// and Wait makes the same six records as Check for the same inputs (every
// field but the run-specific ids, times and chain), with the same trace;
// with several checks started before any Wait, the records follow the
// order of the Waits, and commit to the input even when the caller
// overwrote its buffer after Start; repeated and concurrent Waits record once; the
// VPEC verifies with the profile.
func TestStartWait(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{})
	svc := newService(t)
	ctx := context.Background()
	p, _, signed := svc.publishProfile(t, m, 30)
	c, err := bounded.New(p, m, bounded.Options{Trust: svc.mat.Trust, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	inputs := []string{"Patient Jane Roe, SSN 078-05-1120", "hello there", "my card is 4111 1111 1111 1111", "call me tomorrow", "ok"}

	// Check, one after the other.
	run1, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var checked []*bounded.Result
	for _, in := range inputs {
		res, err := c.Check(ctx, run1, "pii_detection", "manifest-1", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		checked = append(checked, res)
	}
	v1, err := run1.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Start every input first, then Wait (twice, concurrently) in order.
	run2, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var pending []*bounded.Pending
	for i, in := range inputs {
		buf := []byte(in)
		pd, err := c.Start(ctx, run2, "pii_detection", "manifest-1", buf)
		if err != nil {
			t.Fatal(err)
		}
		for j := range buf {
			buf[j] = 'x' // the caller reuses its buffer: the records still commit to the input
		}
		want := checked[i]
		if pd.Verdict != want.Verdict || pd.Score != want.Score || !slices.Equal(pd.Probabilities, want.Probabilities) {
			t.Fatalf("input %d: Start verdict %s score %v probabilities %v; Check %s %v %v", i, pd.Verdict, pd.Score, pd.Probabilities, want.Verdict, want.Score, want.Probabilities)
		}
		pending = append(pending, pd)
	}
	for i, pd := range pending {
		results := make([]*bounded.Result, 2)
		var wg sync.WaitGroup
		for k := range results {
			wg.Go(func() {
				var err error
				if results[k], err = pd.Wait(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, want := results[0], checked[i]
		if got != results[1] {
			t.Fatalf("input %d: two Waits returned two results", i)
		}
		if got.Verdict != want.Verdict || got.Score != want.Score || got.StageType != want.StageType || got.ProofLevel != want.ProofLevel ||
			got.ProfileID != want.ProfileID || len(got.Records) != 6 || !reflect.DeepEqual(got.Trace, want.Trace) {
			t.Fatalf("input %d: Start+Wait %+v, Check %+v", i, got, want)
		}
	}
	v2, err := run2.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(v1.VPEC.Records) != 6*len(inputs) || len(v2.VPEC.Records) != len(v1.VPEC.Records) {
		t.Fatalf("%d records by Check, %d by Start+Wait, want %d each", len(v1.VPEC.Records), len(v2.VPEC.Records), 6*len(inputs))
	}
	for i := range v1.VPEC.Records {
		a, b := v1.VPEC.Records[i], v2.VPEC.Records[i]
		if a.ProofLevel != vpec.Mathematical && a.ProofLevel != vpec.OperatorBound {
			t.Fatalf("record %d: proof level %s", i, a.ProofLevel)
		}
		a.RecordID, a.RecordedAt, a.ChainHash, a.Sequence = "", "", "", 0
		b.RecordID, b.RecordedAt, b.ChainHash, b.Sequence = "", "", "", 0
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("record %d differs:\nCheck      %+v\nStart+Wait %+v", i, a, b)
		}
	}
	if rep := svc.verify(t, v2.Raw, signed); !rep.Valid || rep.ProofLevelFloor != vpec.OperatorBound {
		t.Fatalf("Start+Wait VPEC: %s floor %s", rep.Verdict, rep.ProofLevelFloor)
	}
}
