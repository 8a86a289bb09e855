//go:build cgo

package calibration_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/tokenizer"
	"github.com/svc-gov/svc/pkg/ml/trace"
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
	if m := p.Models[0]; m.OperatorCounts[trace.Production] != 6 || m.OperatorCounts[trace.Residual] != 12 || m.OperatorCounts[trace.Full] < 50 {
		t.Fatalf("operator counts %v", m.OperatorCounts)
	}
}

func TestReplay(t *testing.T) {
	m, p, _ := calibrated(t, 100)
	input := []byte("please call jane doe at 555 0100, her ssn is 078-05-1120")
	for _, mode := range trace.Modes() {
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
	for _, mode := range trace.Modes() {
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

// TestResidualCatchesSubstitutedModel: a model whose first encoder
// layer's weights are all scaled by 1 + 1e-3·N(0,1) (modelgen.Variant),
// traced honestly and relabelled as the profiled model, passes the audit
// in production mode on the bert-style model (γ = 1 and β = 0 make every
// LayerNorm output's mean and RMS independent of the weights, and the
// two-class probabilities sit where their RMS is stationary) and fails it
// in residual mode and full mode, at a layer-0 operator.
func TestResidualCatchesSubstitutedModel(t *testing.T) {
	m, dir := ortest.Model(t, modelgen.Config{})
	p, err := calibration.Calibrate(m, calibration.Meta{ProfileID: "test/pii-class/v1.0.0", ModelClass: "pii", Architecture: "bert-like", Date: time.Now()}, calibration.Options{Passes: 50})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	input := []byte("please call jane doe at 555 0100, her ssn is 078-05-1120")
	for seed := int64(1); seed <= 3; seed++ {
		b, _, err := modelgen.Generate(modelgen.Config{Variant: &modelgen.Variant{Layer: 0, Epsilon: 1e-3, Seed: seed}})
		if err != nil {
			t.Fatal(err)
		}
		vm, err := trace.NewModel(b, tok)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range trace.Modes() {
			tr, err := trace.Run(vm, input, mode)
			if err != nil {
				t.Fatal(err)
			}
			tr.ONNXModelHash = m.Hash
			a, err := calibration.Replay(m, tr, input, p, "cpu")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case mode == trace.Production && !a.Consistent:
				t.Logf("seed %d: production mode caught this variant (%s)", seed, strings.Join(a.Problems, "; "))
			case mode != trace.Production && (a.Consistent || len(a.Exceeded) == 0 || !strings.Contains(a.Exceeded[0].Node, "layer0/")):
				t.Errorf("seed %d: %s mode: substituted model %+v", seed, mode, a)
			}
			if mode == trace.Residual {
				t.Logf("seed %d: residual mode: %d of %d operators beyond the bounds, first %s (drift %.3g, bound %.3g)", seed, len(a.Exceeded), a.Operators, a.Exceeded[0].Node, a.Exceeded[0].Drift, a.Exceeded[0].Bound)
			}
		}
	}
}

// TestMeasurementsWithoutResidual: a measurements file made before the
// residual mode (no residual entry in operator_counts, selected or any
// pass) still parses and merges; merged with a file that has the mode,
// the profile covers only the modes every file measured, so a residual
// trace of the model is not covered by it. A file naming an unknown mode
// is refused.
func TestMeasurementsWithoutResidual(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{})
	meas, err := calibration.Measure(m, calibration.Options{Passes: 3})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := calibration.Record([]*calibration.Measurement{meas})
	if err != nil {
		t.Fatal(err)
	}
	current, err := document.MarshalIndent(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.Models[0].Selected[trace.Residual]; !ok {
		t.Fatal("a new measurements file has no residual mode")
	}
	var doc map[string]any
	if err := json.Unmarshal(current, &doc); err != nil {
		t.Fatal(err)
	}
	model := doc["models"].([]any)[0].(map[string]any)
	delete(model["operator_counts"].(map[string]any), trace.Residual)
	delete(model["selected"].(map[string]any), trace.Residual)
	for _, p := range model["passes"].([]any) {
		delete(p.(map[string]any)["production"].(map[string]any), trace.Residual)
	}
	old, _ := json.Marshal(doc)
	meta := calibration.Meta{ProfileID: "test/pii-class/v1.1.0", ModelClass: "pii", Architecture: "bert-like", Date: time.Now()}
	for _, tc := range []struct {
		name     string
		docs     [][]byte
		residual bool
	}{{"new", [][]byte{current}, true}, {"old", [][]byte{old}, false}, {"new and old", [][]byte{current, old}, false}} {
		p, _, err := calibration.MergeProfile(tc.docs, nil, meta, calibration.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		counts := p.Models[0].OperatorCounts
		if _, ok := counts[trace.Residual]; ok != tc.residual || counts[trace.Production] != 6 {
			t.Fatalf("%s: operator counts %v", tc.name, counts)
		}
		input := []byte("hello world")
		tr, err := trace.Run(m, input, trace.Residual)
		if err != nil {
			t.Fatal(err)
		}
		a, err := calibration.Replay(m, tr, input, p, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		if a.Consistent != tc.residual {
			t.Fatalf("%s: residual trace against the merged profile: %+v", tc.name, a)
		}
	}
	model["selected"].(map[string]any)["fast"] = []any{0}
	bad, _ := json.Marshal(doc)
	if _, err := calibration.ParseMeasurements(bad); !errors.Is(err, calibration.ErrMeasurements) || !strings.Contains(err.Error(), "fast") {
		t.Fatalf("unknown mode: %v", err)
	}
}

// TestMeasureWorkers: on both generated styles the measurement (its
// measurements record and the profile built from it) is the same bytes
// whatever the worker count, sequential or pipelined with several
// reference tracers; and its production-mode statistics, which Measure
// takes from the residual run, are those of production runs of the same
// inputs, bit for bit.
func TestMeasureWorkers(t *testing.T) {
	var corpus [][]byte
	words := strings.Fields("please call jane doe at 555 0100 her ssn is 078-05-1120 and the card is 4111 1111 1111 1111")
	for n := 1; n <= 40; n += 3 {
		var in []string
		for k := 0; k < n; k++ {
			in = append(in, words[(k*5+n)%len(words)])
		}
		corpus = append(corpus, []byte(strings.Join(in, " ")))
	}
	meta := calibration.Meta{ProfileID: "t/t-class/v1.0.0", ModelClass: "t", Architecture: "t", Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, style := range modelgen.Styles() {
		m, _ := ortest.Model(t, modelgen.Config{Style: style})
		first := map[int]string{}
		for _, workers := range []int{1, 0, 2, 5} {
			for si, src := range []calibration.Options{{Corpus: corpus}, {Seed: 3}} {
				src.Passes, src.Workers = 2*len(corpus), workers
				meas, err := calibration.Measure(m, src)
				if err != nil {
					t.Fatal(err)
				}
				rec, err := calibration.Record([]*calibration.Measurement{meas})
				if err != nil {
					t.Fatal(err)
				}
				p, err := calibration.Build([]*calibration.Measurement{meas}, meta, calibration.Options{})
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal([]any{rec, p, meas.Drift, meas.OperatorCounts})
				if err != nil {
					t.Fatal(err)
				}
				if workers == 1 {
					first[si] = string(b)
					if src.Corpus != nil {
						checkProduction(t, m, corpus, rec.Models[0])
					}
				} else if string(b) != first[si] {
					t.Errorf("%s, inputs %d: %d workers: the measurement differs from one worker's", style, si, workers)
				}
			}
		}
	}
}

// checkProduction compares a measurement's production-mode statistics
// with production runs of the corpus it was measured on, pass by pass.
func checkProduction(t *testing.T, m *trace.Model, corpus [][]byte, rec calibration.ModelMeasurement) {
	t.Helper()
	tr, err := trace.NewTracer(m, trace.Production, inference.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for k, ps := range rec.Passes {
		want, err := tr.Trace(corpus[k%len(corpus)])
		if err != nil {
			t.Fatal(err)
		}
		got := ps.Production[trace.Production]
		if len(got) != len(want.Operators) {
			t.Fatalf("pass %d: %d production statistics, want %d", k+1, len(got), len(want.Operators))
		}
		for i, o := range want.Operators {
			if got[i][0] != o.Mean || got[i][1] != o.RMS {
				t.Fatalf("pass %d: production operator %s: measured mean, rms %v, a production run gives %v, %v", k+1, o.Node, got[i], o.Mean, o.RMS)
			}
		}
	}
}

// TestNoSpinSameTrace: production sessions that sleep instead of spinning
// (inference.Options.NoSpin, what Measure's concurrent executions use)
// give the same traces, records, Merkle root and output, bit for bit, as
// ONNX Runtime's default in every mode, with the default threads and two.
func TestNoSpinSameTrace(t *testing.T) {
	inputs := [][]byte{[]byte("hi"), []byte("please call jane doe at 555 0100, her ssn is 078-05-1120"), []byte(strings.Repeat("card 4111 1111 1111 1111 ", 8))}
	for _, style := range modelgen.Styles() {
		m, _ := ortest.Model(t, modelgen.Config{Style: style})
		for _, threads := range []int{0, 2} {
			for _, mode := range trace.Modes() {
				var got [2][]string
				for i, noSpin := range []bool{false, true} {
					tr, err := trace.NewTracer(m, mode, inference.Options{Threads: threads, NoSpin: noSpin})
					if err != nil {
						t.Fatal(err)
					}
					for _, in := range inputs {
						r, err := tr.Trace(in)
						if err != nil {
							t.Fatal(err)
						}
						b, err := json.Marshal(r)
						if err != nil {
							t.Fatal(err)
						}
						got[i] = append(got[i], string(b))
					}
					tr.Close()
				}
				for k := range inputs {
					if got[0][k] != got[1][k] {
						t.Errorf("%s, %d threads, %s mode, input %d: the trace without spinning differs", style, threads, mode, k)
					}
				}
			}
		}
	}
}
