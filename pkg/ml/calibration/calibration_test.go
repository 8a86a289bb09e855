package calibration_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

func TestDrift(t *testing.T) {
	op := func(mean, rms float64) trace.Operator { return trace.Operator{Mean: mean, RMS: rms} }
	tests := []struct {
		name     string
		ref, got trace.Operator
		want     float64
	}{
		{"identical", op(0.5, 2), op(0.5, 2), 0},
		{"mean moves", op(0.5, 2), op(0.51, 2), 0.005},
		{"rms moves more", op(0.5, 2), op(0.5, 2.1), 0.05},
		{"mean near zero is normalised by rms", op(1e-9, 1), op(2e-9, 1), 1e-9},
		{"zero rms, equal", op(0, 0), op(0, 0), 0},
		{"zero rms, different", op(0, 0), op(1e-9, 0), math.Inf(1)},
		{"nan", op(0, 1), op(math.NaN(), 1), math.Inf(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := calibration.Drift(tc.ref, tc.got)
			if math.Abs(got-tc.want) > 1e-12 && !(math.IsInf(got, 1) && math.IsInf(tc.want, 1)) {
				t.Fatalf("Drift = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	s := make([]float64, 10000)
	for i := range s {
		s[i] = float64(i + 1)
	}
	for _, tc := range []struct{ q, want float64 }{{0.99, 9900}, {0.999, 9990}, {0.9999, 9999}, {1, 10000}, {0, 1}} {
		if got := calibration.Percentile(s, tc.q); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.q, got, tc.want)
		}
	}
	if calibration.Percentile(nil, 0.99) != 0 {
		t.Error("percentile of nothing")
	}
}

// measurement makes a synthetic measurement whose LayerNorm drift is
// scale times 1..1000 (x 1e-6).
func measurement(hash string, scale float64) *calibration.Measurement {
	s := make([]float64, 1000)
	for i := range s {
		s[i] = scale * float64(i+1) * 1e-6
	}
	return &calibration.Measurement{ONNXModelHash: hash, Passes: 1000,
		OperatorCounts: map[string]int64{"full": 40, "production": 6},
		Drift:          map[string]map[string][]float64{"production": {profile.LayerNorm: s}, "full": {profile.Linear: {0, 0, 0}}}}
}

func hash(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }

func TestBuild(t *testing.T) {
	meta := calibration.Meta{ProfileID: "acme/pii-class/v1.0.0", ModelClass: "pii", Architecture: "bert", Date: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
	p, err := calibration.Build([]*calibration.Measurement{measurement(hash('a'), 1)}, meta, calibration.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln := p.Operators[profile.LayerNorm]
	// p99 of 1..1000 (x1e-6) is 990e-6; times the default 2x margin.
	if math.Abs(ln.P99-2*990e-6) > 1e-12 || math.Abs(ln.P9999-2*1000e-6) > 1e-12 {
		t.Fatalf("LayerNorm bounds %+v", ln)
	}
	// Bit-identical executions give the resolution, not zero.
	if lin := p.Operators[profile.Linear]; lin.P99 != 2*calibration.Resolution {
		t.Fatalf("Linear bounds %+v, want the resolution floor", lin)
	}
	if p.CalibrationPasses != 1000 || p.CalibrationDate != "2026-11-22" || p.SafetyMargin != 2 || p.CalibratedGPUClasses[0] != "cpu" {
		t.Fatalf("profile %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTransferRatio(t *testing.T) {
	meta := calibration.Meta{ProfileID: "acme/pii-class/v1.0.0", ModelClass: "pii", Architecture: "bert", Date: time.Now()}
	tests := []struct {
		name  string
		scale float64
		ok    bool
	}{
		{"same drift", 1, true},
		{"1.2x", 1.2, true},
		{"1.25x exactly", 1.25, true},
		{"1.3x", 1.3, false},
		{"half", 0.5, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := calibration.Build([]*calibration.Measurement{measurement(hash('a'), 1), measurement(hash('b'), tc.scale)}, meta, calibration.Options{})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Models) != 2 {
					t.Fatalf("models %v", p.Models)
				}
				// The bounds cover the larger drift.
				if want := 2 * 1000e-6 * math.Max(1, tc.scale); math.Abs(p.Operators[profile.LayerNorm].P9999-want) > 1e-9 {
					t.Fatalf("p99.99 %v, want %v", p.Operators[profile.LayerNorm].P9999, want)
				}
				return
			}
			if !errors.Is(err, calibration.ErrDriftDiverges) || !strings.Contains(err.Error(), "LayerNorm") {
				t.Fatalf("err = %v, want ErrDriftDiverges naming LayerNorm", err)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []calibration.Options{{GPUClass: "a100"}, {GPUClass: "tpu"}, {Passes: -1}, {SafetyMargin: 0.5}} {
		if _, err := calibration.Build([]*calibration.Measurement{measurement(hash('a'), 1)}, calibration.Meta{ProfileID: "a/b-class/v1.0.0", ModelClass: "b", Architecture: "x"}, o); !errors.Is(err, calibration.ErrOptions) {
			t.Errorf("%+v: err = %v, want ErrOptions", o, err)
		}
	}
}

// FuzzParseMeasurements: a measurements file is read strictly, without
// panics, and what it accepts merges.
func FuzzParseMeasurements(f *testing.F) {
	f.Add([]byte(`{"schema":"svc.calibration/v1","drift_definition":"svc.drift/v2","gpu_class":"cpu","machine":{"cpu":"x","kernel_path":"avx2","passes":1},"models":[{"onnx_model_hash":"sha256:00","operator_counts":{"full":1,"production":1},"nodes":["a"],"classes":["Linear"],"selected":{"full":[0],"production":[0]},"inputs":["sha256:11"],"passes":[{"reference":[[0,1,1]],"production":{"full":[[0,1]],"production":[[0,1.0000001]]}}]}]}`))
	f.Add([]byte(`{"schema":"svc.calibration/v1","drift_definition":"svc.drift/v2","gpu_class":"cpu","machine":{"cpu":"x","kernel_path":"avx2","passes":1},"models":[{"onnx_model_hash":"sha256:00","operator_counts":{"full":2,"production":1,"residual":1},"nodes":["a","b"],"classes":["Linear","Other"],"selected":{"full":[0,1],"production":[0],"residual":[1]},"inputs":["sha256:11"],"passes":[{"reference":[[0,1,1],[0,2,2]],"production":{"full":[[0,1],[0,2]],"production":[[0,1.0000001]],"residual":[[0,2]]}}]}]}`))
	f.Add([]byte(`{"schema":"svc.calibration/v1"}`))
	// passes, operator counts and indices at the documented maxima and
	// int64 edges.
	for _, d := range fuzzedge.Documents([]byte(`{"schema":"svc.calibration/v1","drift_definition":"svc.drift/v2","gpu_class":"cpu","machine":{"cpu":"x","kernel_path":"avx2","passes":1},"models":[{"onnx_model_hash":"sha256:00","operator_counts":{"full":2,"production":1,"residual":1},"nodes":["a","b"],"classes":["Linear","Other"],"selected":{"full":[0,1],"production":[0],"residual":[1]},"inputs":["sha256:11"],"passes":[{"reference":[[0,1,1],[0,2,2]],"production":{"full":[[0,1],[0,2]],"production":[[0,1.0000001]],"residual":[[0,2]]}}]}]}`), 600) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := calibration.ParseMeasurements(doc)
		if err != nil {
			if !errors.Is(err, calibration.ErrMeasurements) {
				t.Fatalf("error does not match ErrMeasurements: %v", err)
			}
			return
		}
		if _, err := calibration.Merge([]*calibration.Measurements{m, m}); err != nil {
			t.Fatalf("accepted file does not merge: %v", err)
		}
	})
}

func TestRuleDetails(t *testing.T) {
	a := &calibration.Audit{Results: []calibration.OperatorResult{
		{Index: 0, Rule: calibration.RuleBoth}, {Index: 1, Rule: calibration.RuleBoth}, {Index: 2, Rule: calibration.RuleCalibrated},
		{Index: 3, Rule: calibration.RuleCalibrated}, {Index: 4, Rule: calibration.RuleCalibrated}, {Index: 5, Rule: calibration.RuleBoth},
		{Index: 6, Rule: calibration.RuleNone}, {Index: 7, Rule: calibration.RuleAnalytic},
	}}
	got := strings.Join(a.RuleDetails(), "; ")
	want := "both rules: operators 0-1, 5; calibrated rule only: operators 2-4; analytic rule only: operators 7"
	if got != want {
		t.Errorf("RuleDetails = %q, want %q", got, want)
	}
}
