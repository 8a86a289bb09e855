//go:build cgo

package calibration_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// xcpuJob is what the test asks of itself under the emulator: trace each
// run on the emulated CPU and write the traces to Out.
type xcpuJob struct {
	Models []string  `json:"models"`
	Runs   []xcpuRun `json:"runs"`
	Out    string    `json:"out"`
	// Calibrate names the models to measure (Passes passes each) into a
	// measurements file at Out + ".measurements.json".
	Calibrate []int `json:"calibrate"`
	Passes    int   `json:"passes"`
}

type xcpuRun struct {
	Model int    `json:"model"`
	Mode  string `json:"mode"`
	Input string `json:"input"`
}

type xcpuResult struct {
	KernelPath string         `json:"kernel_path"`
	Traces     []*trace.Trace `json:"traces"`
}

// TestCrossCPUHelper is the client side of TestCrossCPU: run by the test
// binary under qemu-x86_64 (SVC_XCPU_JOB names the job), it makes the
// traces on the emulated CPU. Run directly, it skips.
func TestCrossCPUHelper(t *testing.T) {
	path := os.Getenv("SVC_XCPU_JOB")
	if path == "" {
		t.Skip("the client side of TestCrossCPU (runs under qemu-x86_64)")
	}
	var job xcpuJob
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	ortest.Init(t)
	models := make([]*trace.Model, len(job.Models))
	for i, dir := range job.Models {
		if models[i], err = trace.LoadModel(dir); err != nil {
			t.Fatal(err)
		}
	}
	tracers := map[string]*trace.Tracer{}
	res := xcpuResult{KernelPath: calibration.KernelPath()}
	for _, r := range job.Runs {
		key := fmt.Sprint(r.Model, r.Mode)
		tr, ok := tracers[key]
		if !ok {
			if tr, err = trace.NewTracer(models[r.Model], r.Mode, inference.Options{}); err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			tracers[key] = tr
		}
		out, err := tr.Trace([]byte(r.Input))
		if err != nil {
			t.Fatal(err)
		}
		res.Traces = append(res.Traces, out)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(job.Out, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if len(job.Calibrate) > 0 {
		var ms []*calibration.Measurement
		for _, i := range job.Calibrate {
			meas, err := calibration.Measure(models[i], calibration.Options{Passes: job.Passes})
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, meas)
		}
		rec, err := calibration.Record(ms)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := document.MarshalIndent(rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(job.Out+".measurements.json", doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// qemuPath returns qemu-x86_64 (scripts/install-qemu.sh installs it; make
// unit sets SVC_QEMU). Without it the test skips, unless SVC_REQUIRE_QEMU=1.
func qemuPath(t *testing.T) string {
	t.Helper()
	q := os.Getenv("SVC_QEMU")
	if q == "" {
		q, _ = exec.LookPath("qemu-x86_64")
	}
	if q == "" {
		if os.Getenv("SVC_REQUIRE_QEMU") == "1" {
			t.Fatal("qemu-x86_64 not found: run scripts/install-qemu.sh")
		}
		t.Skip("qemu-x86_64 not found: run scripts/install-qemu.sh (make unit does)")
	}
	return q
}

// TestCrossCPU: honest traces made on emulated client CPUs (Haswell:
// AVX2+FMA kernels; Nehalem: SSE4.2 kernels), in every trace mode and of
// both model styles, pass the audit on this machine against a profile
// calibrated here; doctored traces (a mean moved by 1e-5 of its drift
// scale, another model's trace relabelled, another input's trace under
// this input's commitment) fail.
func TestCrossCPU(t *testing.T) {
	qemu := qemuPath(t)
	inputs := []string{
		"please call jane doe at 555 0100, her ssn is 078-05-1120",
		"You are an idiot and I will find you.",
	}
	// The residual mode on one input only (each emulated inference costs
	// about a second).
	modes := []string{trace.Production, trace.Full, trace.Residual}
	inputsOf := func(mode string) []string {
		if mode == trace.Residual {
			return inputs[:1]
		}
		return inputs
	}
	type style struct {
		name  string
		cfg   modelgen.Config
		m     *trace.Model
		dir   string
		other *trace.Model // another model of the style (seed 2)
		prof  *profile.Profile
	}
	styles := []*style{{name: "bert", cfg: modelgen.Config{}}, {name: "torch", cfg: modelgen.Config{Style: modelgen.StyleTorch}}}
	const mergePasses = 4
	job := xcpuJob{Passes: mergePasses}
	for _, s := range styles {
		s.m, s.dir = ortest.Model(t, s.cfg)
		oc := s.cfg
		oc.Seed = 2
		var odir string
		s.other, odir = ortest.Model(t, oc)
		var err error
		s.prof, err = calibration.Calibrate(s.m, calibration.Meta{ProfileID: "test/pii-class/v1.0.0", ModelClass: "pii", Architecture: s.name, Date: time.Now()}, calibration.Options{Passes: 40})
		if err != nil {
			t.Fatal(err)
		}
		mi := len(job.Models)
		job.Models = append(job.Models, s.dir, odir)
		job.Calibrate = append(job.Calibrate, mi)
		for _, mode := range modes {
			for _, in := range inputsOf(mode) {
				job.Runs = append(job.Runs, xcpuRun{Model: mi, Mode: mode, Input: in})
			}
			job.Runs = append(job.Runs, xcpuRun{Model: mi + 1, Mode: mode, Input: inputs[0]})
		}
	}
	var mu sync.Mutex
	var emulated []*calibration.Measurements
	var clientTraces []*trace.Trace
	t.Run("emulated", func(t *testing.T) {
		for _, cpu := range []struct{ name, kernels string }{{"Haswell", "avx2"}, {"Nehalem", "sse4.2"}} {
			t.Run(cpu.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				j := job
				j.Out = filepath.Join(dir, "traces.json")
				b, _ := json.Marshal(j)
				jobPath := filepath.Join(dir, "job.json")
				if err := os.WriteFile(jobPath, b, 0o600); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				cmd := exec.Command(qemu, "-cpu", cpu.name, os.Args[0], "-test.run=^TestCrossCPUHelper$", "-test.count=1")
				cmd.Env = append(os.Environ(), "SVC_XCPU_JOB="+jobPath, "SVC_CPU_NAME=qemu-x86_64 -cpu "+cpu.name)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("qemu-x86_64 -cpu %s: %v\n%s", cpu.name, err, out)
				}
				data, err := os.ReadFile(j.Out)
				if err != nil {
					t.Fatal(err)
				}
				var res xcpuResult
				if err := json.Unmarshal(data, &res); err != nil {
					t.Fatal(err)
				}
				t.Logf("%d traces on emulated %s (%s kernels) in %s", len(res.Traces), cpu.name, res.KernelPath, time.Since(start).Round(time.Second))
				if res.KernelPath != cpu.kernels {
					t.Fatalf("emulated %s reports kernel path %s, want %s", cpu.name, res.KernelPath, cpu.kernels)
				}
				mdoc, err := os.ReadFile(j.Out + ".measurements.json")
				if err != nil {
					t.Fatal(err)
				}
				meas, err := calibration.ParseMeasurements(mdoc)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				emulated = append(emulated, meas)
				clientTraces = append(clientTraces, res.Traces...)
				mu.Unlock()
				k := 0
				for _, s := range styles {
					for _, mode := range modes {
						for i, in := range inputsOf(mode) {
							auditXCPU(t, s.name, s.m, res.Traces[k], []byte(in), []byte(inputs[(i+1)%len(inputs)]), s.prof)
							k++
						}
						// Another model's trace, relabelled as the profiled model.
						tr := res.Traces[k]
						k++
						relabelled := *tr
						relabelled.ONNXModelHash = s.m.Hash
						a, err := calibration.Replay(s.m, &relabelled, []byte(inputs[0]), s.prof, "cpu")
						if err != nil || a.Consistent {
							t.Errorf("%s %s: another model's trace relabelled passes: %v %v", s.name, mode, err, a)
						}
					}
				}
			})
		}
	})
	if t.Failed() || len(emulated) != 2 {
		return
	}
	// svc calibrate merge: this machine's measurements and the emulated
	// CPUs' make one profile covering the three kernel paths, whose bounds
	// include every machine's production against every machine's
	// reference; the honest traces of both CPUs pass it.
	for si, s := range styles {
		host, err := calibration.Measure(s.m, calibration.Options{Passes: mergePasses})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := calibration.Record([]*calibration.Measurement{host})
		if err != nil {
			t.Fatal(err)
		}
		files := []*calibration.Measurements{rec}
		for _, e := range emulated {
			one := *e
			one.Models = []calibration.ModelMeasurement{e.Models[si]}
			files = append(files, &one)
		}
		ms, err := calibration.Merge(files)
		if err != nil {
			t.Fatal(err)
		}
		p, err := calibration.Build(ms, calibration.Meta{ProfileID: "test/pii-class/v1.1.0", ModelClass: "pii", Architecture: s.name, Date: time.Now()}, calibration.Options{})
		if err != nil {
			t.Fatal(err)
		}
		paths := map[string]bool{}
		for _, mc := range p.Coverage {
			paths[mc.KernelPath] = true
		}
		if !paths["avx2"] || !paths["sse4.2"] || len(p.Coverage) != 3 {
			t.Fatalf("%s: merged profile covers %+v", s.name, p.Coverage)
		}
		// 3 machines, each production against each reference: 9x the
		// samples of one machine.
		if got, want := ms[0].Samples(), host.Samples(); got[profile.LayerNorm] != 9*want[profile.LayerNorm] {
			t.Errorf("%s: merged LayerNorm samples %d, one machine %d: want 9x", s.name, got[profile.LayerNorm], want[profile.LayerNorm])
		}
		t.Logf("%s: merged profile: coverage %+v, measured %+v", s.name, p.Coverage, p.Measured)
		for _, tr := range clientTraces {
			if tr.ONNXModelHash != s.m.Hash || tr.Mode == trace.Full {
				continue
			}
			for _, in := range inputs {
				if commitment.String([]byte(in)) != tr.InputCommitment {
					continue
				}
				a, err := calibration.Replay(s.m, tr, []byte(in), p, "cpu")
				if err != nil || !a.Consistent {
					t.Errorf("%s: honest emulated trace against the merged profile: %v %+v", s.name, err, a)
				}
			}
		}
	}
}

// auditXCPU audits an honest trace (it must pass), the trace with one
// mean moved by 1e-5 of its drift scale (it must fail at that operator)
// and the trace presented for another input (it must fail or be refused).
func auditXCPU(t *testing.T, style string, m *trace.Model, tr *trace.Trace, input, otherInput []byte, prof *profile.Profile) {
	t.Helper()
	name := style + " " + tr.Mode
	a, err := calibration.Replay(m, tr, input, prof, "cpu")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !a.Consistent {
		t.Errorf("%s: honest trace from the emulated CPU fails: %s", name, strings.Join(a.Problems, "; "))
		return
	}
	t.Logf("%s: %s", name, a.Summary())
	for _, r := range a.Results {
		// The analytic bound holds across kernel paths: it assumes only
		// IEEE-754 arithmetic.
		if r.Drift > r.Analytic {
			t.Errorf("%s: %s drift %.3g beyond its analytic bound %.3g", name, r.Node, r.Drift, r.Analytic)
		}
	}
	v1 := *prof
	v1.DriftDefinition = profile.DriftV1
	if a1, err := calibration.Replay(m, tr, input, &v1, "cpu"); err == nil {
		t.Logf("%s: the same trace under svc.drift/v1: largest drift %.3g of its p99.99 bound (consistent %v)", name, a1.MaxRatio, a1.Consistent)
	}
	ref, err := calibration.NewReference(m, input)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{len(tr.Operators) / 2, len(tr.Operators) - 1} {
		d := *tr
		d.Operators = append([]trace.Operator(nil), tr.Operators...)
		_, scale, _, ok := ref.Operator(d.Operators[k].Node)
		if !ok {
			t.Fatalf("%s: operator %s not in the reference", name, d.Operators[k].Node)
		}
		d.Operators[k].Mean += 1e-5 * scale
		d.MerkleRoot, _ = trace.Root(d.Operators)
		a, err := calibration.Replay(m, &d, input, prof, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		if a.Consistent || len(a.Exceeded) == 0 || a.Exceeded[0].Index != int64(k) {
			t.Errorf("%s: mean of operator %d (%s) moved by 1e-5 of its scale passes: %v", name, k, d.Operators[k].Node, a.Problems)
		}
	}
	// The trace presented as the trace of another input: refused by the
	// input commitment. In full and residual mode, with the commitment
	// rewritten too, the drift gives it away; production mode's statistics (LayerNorm
	// outputs, normalised to γ and β, and the probabilities) hardly
	// depend on the input, so there the commitment alone binds it
	// (docs/BOUNDED.md).
	if _, err := calibration.Replay(m, tr, otherInput, prof, "cpu"); !errors.Is(err, calibration.ErrAudit) {
		t.Errorf("%s: trace audited against another input: %v", name, err)
	}
	o := *tr
	o.InputCommitment = commitment.String(otherInput)
	a, err = calibration.Replay(m, &o, otherInput, prof, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Mode != trace.Production && a.Consistent {
		t.Errorf("%s: trace of another input passes: %s", name, a.Summary())
	} else if a.Consistent {
		t.Logf("%s: trace of another input under its commitment: consistent (%s): only the commitment binds the input in production mode", name, a.Summary())
	}
}
