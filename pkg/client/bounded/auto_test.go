//go:build cgo

package bounded_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestAutoMode: the default mode traces in residual mode once the model's
// profile lists a matching residual operator count, and in production
// mode before any profile is found and with a profile calibrated before
// the residual mode existed (no residual count), where it stays at
// operator_bound instead of falling back to open_source_ml; either way
// the VPEC verifies against its profile. A check started before the move
// finishes after it in its own mode. A check after Close is refused.
func TestAutoMode(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{})
	prof, err := calibration.Calibrate(m, piiMeta, calibration.Options{Passes: 12})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := prof.Models[0].OperatorCounts[trace.Residual]; !ok {
		t.Fatal("calibration gave no residual operator count")
	}
	for _, tc := range []struct {
		name     string
		residual bool // the published profile keeps its residual count
		want     string
		count    int64
	}{{"profile with residual count", true, trace.Residual, 12}, {"profile from before residual mode", false, trace.Production, 6}} {
		t.Run(tc.name, func(t *testing.T) {
			svc := newService(t)
			ctx := context.Background()
			p := svc.pipeline(t)
			c, err := bounded.New(p, m, bounded.Options{Trust: svc.mat.Trust, RetryLookup: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			run, err := p.Open(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			// No profile yet: production mode, open_source_ml. The check
			// is started now and waited for after the classifier has
			// moved to the profile's mode (and released the production
			// model).
			early, err := c.Start(ctx, run, "pii_detection", "m1", []byte("hello there"))
			if err != nil {
				t.Fatal(err)
			}
			pr := *prof
			pr.Models = append(pr.Models[:0:0], prof.Models...)
			counts := map[string]int64{}
			for k, v := range prof.Models[0].OperatorCounts {
				if k != trace.Residual || tc.residual {
					counts[k] = v
				}
			}
			pr.Models[0].OperatorCounts = counts
			if _, err := server.Publish(ctx, svc.st, svc.mat.Signer, "test", &pr, nil, time.Now()); err != nil {
				t.Fatal(err)
			}
			signed, err := p.ProfileDocument(ctx, m.Hash)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Check(ctx, run, "pii_detection", "m1", []byte("my ssn is 078-05-1120"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Trace.Mode != tc.want || res.Trace.OperatorCount != tc.count || res.ProofLevel != vpec.OperatorBound {
				t.Fatalf("with the profile: mode %s, %d operators, %s; want %s, %d, operator_bound", res.Trace.Mode, res.Trace.OperatorCount, res.ProofLevel, tc.want, tc.count)
			}
			first, err := early.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if first.Trace.Mode != trace.Production || first.Trace.OperatorCount != 6 || first.StageType != stage.OpenSourceML {
				t.Fatalf("without a profile: mode %s, %d operators, stage %s", first.Trace.Mode, first.Trace.OperatorCount, first.StageType)
			}
			v, err := run.Close(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep := svc.verify(t, v.Raw, signed); !rep.Valid {
				t.Fatalf("VPEC: %s\n%+v", rep.Verdict, rep.FirstFailure())
			}
		})
	}
	svc := newService(t)
	c, err := bounded.New(svc.pipeline(t), m, bounded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	run, err := svc.pipeline(t).Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Check(context.Background(), run, "pii_detection", "m1", []byte("x")); !errors.Is(err, bounded.ErrClosed) {
		t.Fatalf("check after Close: %v, want ErrClosed", err)
	}
}

// TestAutoModeConcurrent: checks from several goroutines while the
// profile appears (the classifier moves from production to residual and
// releases the production model with traces still in flight): every
// check is recorded with a trace of one of the two modes, each with its
// own operator count, and the VPEC verifies. Run under -race by make test.
func TestAutoModeConcurrent(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{})
	prof, err := calibration.Calibrate(m, piiMeta, calibration.Options{Passes: 12})
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(t)
	ctx := context.Background()
	p := svc.pipeline(t)
	c, err := bounded.New(p, m, bounded.Options{Trust: svc.mat.Trust, RetryLookup: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 6
	var wg sync.WaitGroup
	results := make(chan *bounded.Result, workers*each)
	for w := range workers {
		wg.Go(func() {
			for k := range each {
				pd, err := c.Start(ctx, run, "pii_detection", "m1", []byte(fmt.Sprintf("note %d from worker %d", k, w)))
				if err != nil {
					t.Error(err)
					return
				}
				res, err := pd.Wait(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				results <- res
			}
		})
	}
	if _, err := server.Publish(ctx, svc.st, svc.mat.Signer, "test", prof, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	modes := map[string]int{}
	for res := range results {
		want := map[string]int64{trace.Production: 6, trace.Residual: 12}[res.Trace.Mode]
		if res.Trace.OperatorCount != want || (res.Trace.Mode == trace.Residual) != (res.ProofLevel == vpec.OperatorBound) {
			t.Fatalf("trace mode %s with %d operators at %s", res.Trace.Mode, res.Trace.OperatorCount, res.ProofLevel)
		}
		modes[res.Trace.Mode]++
	}
	// Once the profile is found every later check is residual.
	res, err := c.Check(ctx, run, "pii_detection", "m1", []byte("after the profile"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Trace.Mode != trace.Residual {
		t.Fatalf("after the profile: %s", res.Trace.Mode)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := p.ProfileDocument(ctx, m.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if rep := svc.verify(t, v.Raw, signed); !rep.Valid {
		t.Fatalf("VPEC: %s\n%+v", rep.Verdict, rep.FirstFailure())
	}
	t.Logf("modes while the profile appeared: %v", modes)
}
