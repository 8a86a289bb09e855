//go:build cgo

package calibration_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/tokenizer"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// TestDetectionPower is the detection-power benchmark of
// docs/BENCHMARKS.md (run it with SVC_DETECTION=1; SVC_DETECTION_TRIALS
// trials per variant, default 100; SVC_DETECTION_EPS the ε to try, comma
// separated (default 1e-7 to 1e-3); SVC_DETECTION_HONEST honest audits per
// style and mode on this machine, default 1000; SVC_DETECTION_QEMU inputs
// per style and mode on each emulated CPU, default 0). For each model
// style and trace mode it substitutes the model with a variant (one
// layer's weights times 1 + ε·N(0,1), or an 8-bit quantised copy), traces
// it honestly, relabels the trace as the original model's and audits it
// against the original's profile: the share caught per ε. It also counts
// false alarms over honest audits (this machine, and emulated Haswell and
// Nehalem clients under qemu). SVC_DETECTION_MODES lists the trace
// modes (comma separated; default production, residual and full);
// SVC_DETECTION_SEED the seed of the random inputs (default 7).
func TestDetectionPower(t *testing.T) {
	if os.Getenv("SVC_DETECTION") != "1" {
		t.Skip("a benchmark: SVC_DETECTION=1 runs it")
	}
	env := func(name string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
			return v
		}
		return def
	}
	trials, honest, qemuInputs := env("SVC_DETECTION_TRIALS", 100), env("SVC_DETECTION_HONEST", 1000), env("SVC_DETECTION_QEMU", 0)
	eps := []float64{1e-7, 3e-7, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 1e-3}
	if list := os.Getenv("SVC_DETECTION_EPS"); list != "" { // e.g. 3e-5,1e-4
		eps = nil
		for _, f := range strings.Split(list, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				t.Fatalf("SVC_DETECTION_EPS: %v", err)
			}
			eps = append(eps, v)
		}
	}
	modes := []string{trace.Production, trace.Residual, trace.Full}
	if list := os.Getenv("SVC_DETECTION_MODES"); list != "" {
		modes = strings.Split(list, ",")
	}
	ortest.Init(t)
	words := modelgen.Vocabulary()[5:]
	seed := uint64(env("SVC_DETECTION_SEED", 7)) // another seed, other inputs
	rng := rand.New(rand.NewPCG(seed, seed))
	text := func() []byte {
		n := 1 + rng.IntN(40)
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return []byte(b.String())
	}
	var report strings.Builder
	fmt.Fprintf(&report, "| style | mode | variant | trials | caught |\n|---|---|---|---|---|\n")
	for _, style := range modelgen.Styles() {
		m, dir := ortest.Model(t, modelgen.Config{Style: style})
		p, err := calibration.Calibrate(m, calibration.Meta{ProfileID: "bench/pii-class/v1.0.0", ModelClass: "pii", Architecture: style, Date: time.Now()}, calibration.Options{Passes: 200})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tokenizer.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		variant := func(v modelgen.Variant) *trace.Model {
			b, _, err := modelgen.Generate(modelgen.Config{Style: style, Variant: &v})
			if err != nil {
				t.Fatal(err)
			}
			vm, err := trace.NewModel(b, tok)
			if err != nil {
				t.Fatal(err)
			}
			vm.MaxLen = m.MaxLen
			return vm
		}
		caught := func(vm *trace.Model, mode string, input []byte) bool {
			tr, err := trace.NewTracer(vm, mode, inference.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			out, err := tr.Trace(input)
			if err != nil {
				t.Fatal(err)
			}
			out.ONNXModelHash = m.Hash
			a, err := calibration.Replay(m, out, input, p, "cpu")
			if err != nil {
				t.Fatal(err)
			}
			return !a.Consistent
		}
		for _, mode := range modes {
			smallest := "none"
			for _, e := range eps {
				n := 0
				for k := 0; k < trials; k++ {
					if caught(variant(modelgen.Variant{Layer: 0, Epsilon: e, Seed: int64(k + 1)}), mode, text()) {
						n++
					}
				}
				fmt.Fprintf(&report, "| %s | %s | layer 0 × (1 + %g·g) | %d | %d (%.0f%%) |\n", style, mode, e, trials, n, 100*float64(n)/float64(trials))
				if n == trials && smallest == "none" {
					smallest = fmt.Sprint(e)
				}
			}
			q := variant(modelgen.Variant{Layer: -1, Quantize: true})
			n := 0
			for k := 0; k < trials; k++ {
				if caught(q, mode, text()) {
					n++
				}
			}
			fmt.Fprintf(&report, "| %s | %s | 8-bit quantised copy | %d | %d (%.0f%%) |\n", style, mode, trials, n, 100*float64(n)/float64(trials))
			fmt.Fprintf(&report, "| %s | %s | smallest ε caught in every trial | | %s |\n", style, mode, smallest)
			// False alarms on honest audits on this machine.
			tr, err := trace.NewTracer(m, mode, inference.Options{})
			if err != nil {
				t.Fatal(err)
			}
			alarms := 0
			for k := 0; k < honest; k++ {
				in := text()
				out, err := tr.Trace(in)
				if err != nil {
					t.Fatal(err)
				}
				a, err := calibration.Replay(m, out, in, p, "cpu")
				if err != nil {
					t.Fatal(err)
				}
				if !a.Consistent {
					alarms++
				}
			}
			tr.Close()
			fmt.Fprintf(&report, "| %s | %s | honest, this machine | %d | %d false alarms |\n", style, mode, honest, alarms)
		}
		if qemuInputs > 0 {
			fmt.Fprint(&report, honestQEMU(t, style, m, dir, p, qemuInputs, text, modes))
		}
	}
	t.Logf("detection power (CPU %s, %s kernels):\n%s", calibration.ThisMachine().CPU, calibration.KernelPath(), report.String())
}

// honestQEMU traces n inputs per mode on emulated Haswell and Nehalem
// and audits them here; it returns table rows with the false alarms.
func honestQEMU(t *testing.T, style string, m *trace.Model, dir string, p *profile.Profile, n int, text func() []byte, modes []string) string {
	qemu := qemuPath(t)
	job := xcpuJob{Models: []string{dir}}
	var inputs [][]byte
	for _, mode := range modes {
		for k := 0; k < n; k++ {
			in := text()
			inputs = append(inputs, in)
			job.Runs = append(job.Runs, xcpuRun{Model: 0, Mode: mode, Input: string(in)})
		}
	}
	var rows strings.Builder
	for _, cpu := range []string{"Haswell", "Nehalem"} {
		d := t.TempDir()
		job.Out = filepath.Join(d, "traces.json")
		b, _ := json.Marshal(job)
		jp := filepath.Join(d, "job.json")
		if err := os.WriteFile(jp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(qemu, "-cpu", cpu, os.Args[0], "-test.run=^TestCrossCPUHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SVC_XCPU_JOB="+jp)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("qemu %s: %v\n%s", cpu, err, out)
		}
		data, err := os.ReadFile(job.Out)
		if err != nil {
			t.Fatal(err)
		}
		var res xcpuResult
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		alarms := map[string]int{}
		var worst float64
		for k, tr := range res.Traces {
			a, err := calibration.Replay(m, tr, inputs[k], p, "cpu")
			if err != nil {
				t.Fatal(err)
			}
			if !a.Consistent {
				alarms[tr.Mode]++
			}
			worst = max(worst, a.MaxRatio)
		}
		for _, mode := range modes {
			fmt.Fprintf(&rows, "| %s | %s | honest, emulated %s (%s) | %d | %d false alarms |\n", style, mode, cpu, res.KernelPath, n, alarms[mode])
		}
		fmt.Fprintf(&rows, "| %s | all | emulated %s: largest drift / p99.99 bound | | %.3g |\n", style, cpu, worst)
	}
	return rows.String()
}
