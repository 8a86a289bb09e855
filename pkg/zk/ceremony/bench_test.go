package ceremony_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/zk/ceremony"
	"github.com/svc-gov/svc/pkg/zk/head"
)

// BenchmarkCeremonyHead runs a whole ceremony once for the largest
// supported head (768-320-32-2, 256K parameters) on a 2^14 phase 1 with two
// contributors per phase, and reports each step's seconds next to the
// baseline measured in the same run: gnark's single-party groth16.Setup of
// the same constraint system. Run with -benchtime=1x:
//
//	go test ./pkg/zk/ceremony -run '^$' -bench CeremonyHead -benchtime=1x -timeout 60m
func BenchmarkCeremonyHead(b *testing.B) {
	dims := []int{768, 320, 32, 2}
	if d := os.Getenv("SVC_BENCH_HEAD_DIMS"); d != "" {
		var err error
		if dims, err = modelgen.ParseDims(d); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		onnx, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: dims, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		model := filepath.Join(dir, "head.onnx")
		os.WriteFile(model, onnx, 0o644)
		step := func(name string, f func() error) {
			t0 := time.Now()
			if err := f(); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			b.ReportMetric(time.Since(t0).Seconds(), name+"_s")
		}
		p1, p2 := filepath.Join(dir, "p1"), filepath.Join(dir, "p2")
		var c1, c2 *ceremony.Ceremony
		var circ ceremony.Circuit
		step("p1_init", func() (err error) { c1, err = ceremony.InitPhase1(p1, 14); return })
		step("p1_contrib1", func() error { _, err := c1.Contribute("A"); return err })
		step("p1_contrib2", func() error { _, err := c1.Contribute("B"); return err })
		step("p1_finalize", func() error { _, err := ceremony.Finalize(p1, beacon1, ceremony.VerifyOptions{}); return err })
		step("compile", func() (err error) { circ, err = ceremony.HeadCircuitFromONNX(model); return })
		b.ReportMetric(float64(circ.R1CS.GetNbConstraints()), "constraints")
		step("p2_init", func() (err error) {
			c2, err = ceremony.Init(ceremony.InitOptions{Dir: p2, Phase: 2, Phase1Dir: p1, Model: model})
			return
		})
		step("p2_contrib1", func() error { _, err := c2.Contribute("C"); return err })
		step("p2_contrib2", func() error { _, err := c2.Contribute("D"); return err })
		var keys *ceremony.Keys
		step("p2_finalize", func() (err error) { keys, err = ceremony.Finalize(p2, beacon2, ceremony.VerifyOptions{}); return })
		step("baseline_groth16_setup", func() error { _, _, err := groth16.Setup(circ.R1CS); return err })
		step("prove", func() error {
			compiled, err := head.Compile(readQuantized(b, filepath.Join(p2, ceremony.HeadFile)))
			if err != nil {
				return err
			}
			_, _, err = head.Prove(compiled, keys.ProvingKey.(*groth16bn254.ProvingKey), make([]int8, dims[0]))
			return err
		})
		for _, f := range []string{ceremony.StateFile(1, 1), ceremony.SRSFile} {
			st, _ := os.Stat(filepath.Join(p1, f))
			b.ReportMetric(float64(st.Size()), strings.NewReplacer(".", "_", "-", "_").Replace(f)+"_B")
		}
		for _, f := range []string{ceremony.StateFile(2, 1), ceremony.ProvingKeyFile, ceremony.VerifyingKeyFile} {
			st, _ := os.Stat(filepath.Join(p2, f))
			b.ReportMetric(float64(st.Size()), strings.NewReplacer(".", "_", "-", "_").Replace(f)+"_B")
		}
		if status, err := os.ReadFile("/proc/self/status"); err == nil {
			for _, l := range strings.Split(string(status), "\n") {
				if strings.HasPrefix(l, "VmHWM:") {
					b.Log(l)
				}
			}
		}
	}
}
