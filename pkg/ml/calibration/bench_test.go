//go:build cgo

package calibration_test

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

var benchModels = []struct {
	name string
	cfg  modelgen.Config
}{
	{"tiny-L2-H64-S32", modelgen.Config{}},
	{"torch-L2-H64", modelgen.Config{Style: modelgen.StyleTorch}},
	{"L4-H256-S128", modelgen.Config{Layers: 4, Hidden: 256, Heads: 4, SeqLen: 128}},
}

// untraced times n untraced production inferences of m on the generator's
// inputs: the baseline of the calibration benchmark.
func untraced(b *testing.B, m *trace.Model, n int) time.Duration {
	t, err := trace.NewTracer(m, "", inference.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := t.Trace([]byte("my name is jane roe and my ssn is 078-05-1120")); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkCalibration times a 1000-pass calibration (each pass: the
// reference execution plus the production executions, residual giving
// production's statistics) against 1000 untraced inferences of the same
// model in the same run, with the executions one after another
// (workers=1) and concurrent (the default). Run with -benchtime 1x.
//
// SVC_BENCH_PASSES sets fewer passes (and as many untraced inferences) for
// a quicker figure on a busy machine.
func BenchmarkCalibration(b *testing.B) {
	passes := 1000
	if n, err := strconv.Atoi(os.Getenv("SVC_BENCH_PASSES")); err == nil && n > 0 {
		passes = n
	}
	for _, c := range benchModels {
		for _, w := range []struct {
			name    string
			workers int
		}{{"workers=1", 1}, {"workers=default", 0}} {
			b.Run(c.name+"/"+w.name, func(b *testing.B) {
				m, _ := ortest.Model(b, c.cfg)
				var cal, base time.Duration
				for n := 0; n < b.N; n++ {
					base += untraced(b, m, passes/2)
					start := time.Now()
					meas, err := calibration.Measure(m, calibration.Options{Passes: passes, Workers: w.workers})
					if err != nil {
						b.Fatal(err)
					}
					cal += time.Since(start)
					base += untraced(b, m, passes-passes/2)
					if _, err := calibration.Build([]*calibration.Measurement{meas}, calibration.Meta{ProfileID: "b/b-class/v1.0.0", ModelClass: "b", Architecture: "b", Date: time.Now()}, calibration.Options{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(cal.Seconds()/float64(b.N), "s/calibration")
				b.ReportMetric(base.Seconds()/float64(b.N), "s/untraced")
				b.ReportMetric(float64(cal)/float64(base), "x-untraced")
				b.ReportMetric(float64(runtime.NumCPU()), "cores")
			})
		}
	}
}

// BenchmarkAuditReplay times one audit (load the model on the reference
// execution, re-run the inference, compare every operator) against loading
// the model and running one untraced inference, in the same run.
func BenchmarkAuditReplay(b *testing.B) {
	for _, c := range benchModels {
		b.Run(c.name, func(b *testing.B) {
			m, _ := ortest.Model(b, c.cfg)
			p, err := calibration.Calibrate(m, calibration.Meta{ProfileID: "b/b-class/v1.0.0", ModelClass: "b", Architecture: "b", Date: time.Now()}, calibration.Options{Passes: 20})
			if err != nil {
				b.Fatal(err)
			}
			input := []byte("please call jane doe at 555 0100, her ssn is 078-05-1120")
			for _, mode := range []string{trace.Production, trace.Full} {
				b.Run(mode, func(b *testing.B) {
					tr, err := trace.Run(m, input, mode)
					if err != nil {
						b.Fatal(err)
					}
					var audit, base time.Duration
					for n := 0; n < b.N; n++ {
						start := time.Now()
						a, err := calibration.Replay(m, tr, input, p, "cpu")
						if err != nil || !a.Consistent {
							b.Fatalf("%+v %v", a, err)
						}
						audit += time.Since(start)
						start = time.Now()
						t, err := trace.NewTracer(m, "", inference.Options{})
						if err != nil {
							b.Fatal(err)
						}
						t.Trace(input)
						t.Close()
						base += time.Since(start)
					}
					b.ReportMetric(float64(audit.Microseconds())/1000/float64(b.N), "ms/audit")
					b.ReportMetric(float64(base.Microseconds())/1000/float64(b.N), "ms/load+infer")
					b.ReportMetric(float64(audit)/float64(base), "x-load+infer")
				})
			}
		})
	}
}
