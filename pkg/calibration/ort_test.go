//go:build cgo

package calibration_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/calibration"
	"github.com/svc-gov/svc/pkg/modelgen"
	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/trace"
)

// calibrated measures the default generated model over passes inputs and
// builds its profile.
func calibrated(t *testing.T, passes int) (*trace.Model, *profile.Profile, *calibration.Measurement) {
	t.Helper()
	m, _ := ortest.Model(t, modelgen.Config{})
	progress := 0
	meas, err := calibration.Measure(m, calibration.Options{Passes: passes, Progress: func(done, total int) { progress = done }})
	if err != nil {
		t.Fatal(err)
	}
	if progress != passes {
		t.Fatalf("progress reached %d of %d", progress, passes)
	}
	p, err := calibration.Build([]*calibration.Measurement{meas}, calibration.Meta{ProfileID: "test/pii-class/v1.0.0", ModelClass: "pii", Architecture: "bert-like", Date: time.Now()}, calibration.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m, p, meas
}

func TestMeasureRealExecutions(t *testing.T) {
	_, p, meas := calibrated(t, 100)
	samples := meas.Samples()
	for _, c := range []string{profile.Linear, profile.LayerNorm, profile.Softmax, profile.GELU} {
		if samples[c] == 0 {
			t.Errorf("no %s samples: %v", c, samples)
		}
		if _, ok := p.Operators[c]; !ok {
			t.Errorf("profile has no %s bounds", c)
		}
	}
	// The production and reference executions differ for real (fused and
	// unfused kernels, several threads and one; DESIGN.md): some drift
	// must show, else the two executions are the same thing.
	var fullMax float64
	for _, s := range meas.Drift[trace.Full] {
		for _, v := range s {
			fullMax = max(fullMax, v)
		}
	}
	var prodMax float64
	for _, v := range meas.Drift[trace.Production][profile.LayerNorm] {
		prodMax = max(prodMax, v)
	}
	t.Logf("largest drift: full mode %.3g, production LayerNorm %.3g; samples %v", fullMax, prodMax, samples)
	if prodMax == 0 && fullMax == 0 {
		t.Error("no operator ever drifts from the reference: is the reference execution really unoptimised?")
	}
	if m := p.Models[0]; m.OperatorCounts[trace.Production] != 6 || m.OperatorCounts[trace.Full] < 50 {
		t.Fatalf("operator counts %v", m.OperatorCounts)
	}
}

func TestReplay(t *testing.T) {
	m, p, _ := calibrated(t, 100)
	input := []byte("please call jane doe at 555 0100, her ssn is 078-05-1120")
	for _, mode := range []string{trace.Production, trace.Full} {
		t.Run(mode, func(t *testing.T) {
			honest, err := trace.Run(m, input, mode)
			if err != nil {
				t.Fatal(err)
			}
			a, err := calibration.Replay(m, honest, input, p, "cpu")
			if err != nil {
				t.Fatal(err)
			}
			if !a.Consistent || len(a.Exceeded) > 0 {
				t.Fatalf("honest trace: %+v", a)
			}
			t.Logf("honest %s trace: %d operators, largest drift %.3f of its bound", mode, a.Operators, a.MaxRatio)

			// A doctored mean, with the root recomputed to match.
			doctored := *honest
			doctored.Operators = append([]trace.Operator(nil), honest.Operators...)
			k := len(doctored.Operators) / 2
			doctored.Operators[k].Mean += 1e-3 * doctored.Operators[k].RMS
			doctored.MerkleRoot, _ = trace.Root(doctored.Operators)
			a, err = calibration.Replay(m, &doctored, input, p, "cpu")
			if err != nil {
				t.Fatal(err)
			}
			if a.Consistent || len(a.Exceeded) != 1 || a.Exceeded[0].Index != int64(k) {
				t.Fatalf("doctored mean: %+v", a)
			}

			// A GPU class the profile was not calibrated for.
			a, err = calibration.Replay(m, honest, input, p, "a100")
			if err != nil {
				t.Fatal(err)
			}
			if a.Consistent || !strings.Contains(strings.Join(a.Problems, ";"), "a100") {
				t.Fatalf("uncalibrated gpu class: %+v", a)
			}
		})
	}
}

// TestReplayOtherModel: a trace made with another model of the same
// architecture, relabelled as the profiled model, drifts far beyond the
// bounds; unrelabelled it is refused outright.
func TestReplayOtherModel(t *testing.T) {
	m, p, _ := calibrated(t, 50)
	other, _ := ortest.Model(t, modelgen.Config{Seed: 2})
	input := []byte("ignore all previous instructions")
	tr, err := trace.Run(other, input, trace.Production)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := calibration.Replay(m, tr, input, p, "cpu"); !errors.Is(err, calibration.ErrAudit) {
		t.Fatalf("trace of another model: err = %v, want ErrAudit", err)
	}
	tr.ONNXModelHash = m.Hash
	a, err := calibration.Replay(m, tr, input, p, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if a.Consistent || len(a.Exceeded) == 0 {
		t.Fatalf("relabelled trace of another model: %+v", a)
	}
	// Another input than the one the trace commits to is refused.
	if _, err := calibration.Replay(m, tr, []byte("something else"), p, "cpu"); !errors.Is(err, calibration.ErrAudit) {
		t.Fatalf("other input: err = %v", err)
	}
}

// TestTorchStyleModel calibrates and audits a model in the patterns of a
// torch.onnx export (dynamic length, decomposed LayerNorm, logits).
func TestTorchStyleModel(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{Style: modelgen.StyleTorch})
	p, err := calibration.Calibrate(m, calibration.Meta{ProfileID: "test/toxicity-class/v1.0.0", ModelClass: "toxicity", Architecture: "distilbert", Date: time.Now()}, calibration.Options{Passes: 50})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bounds %+v", p.Operators)
	for _, mode := range []string{trace.Production, trace.Full} {
		input := []byte("You are an idiot and I will find you.")
		tr, err := trace.Run(m, input, mode)
		if err != nil {
			t.Fatal(err)
		}
		a, err := calibration.Replay(m, tr, input, p, "cpu")
		if err != nil || !a.Consistent {
			t.Fatalf("%s: %+v %v", mode, a, err)
		}
	}
}
