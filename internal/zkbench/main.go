// Command zkbench measures one phase of proving an MLP head with
// pkg/zk/head, for scripts/bench-zk.sh (which runs each phase in its own
// process under /usr/bin/time -v for its peak RSS):
//
//	zkbench setup  -dims 768,256,2 -dir D   compile + plain Groth16 setup; writes D/{cs,pk,vk,quant.json}
//	zkbench prove  -dir D -n 5              prove n times; writes D/proof, D/public.json
//	zkbench verify -dir D -n 200            verify n times
//
// Each phase prints one JSON line of measurements.
package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/logger"

	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/zk/head"
)

func main() {
	logger.Disable() // gnark's debug lines would mix into the JSON on stdout
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: zkbench setup|prove|verify [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dims := fs.String("dims", "768,256,2", "head widths")
	dir := fs.String("dir", "", "working directory")
	n := fs.Int("n", 5, "repetitions")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "setup":
		err = setup(*dims, *dir)
	case "prove":
		err = prove(*dir, *n)
	case "verify":
		err = verify(*dir, *n)
	default:
		err = fmt.Errorf("unknown phase %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		os.Exit(1)
	}
}

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func setup(dimsFlag, dir string) error {
	d, err := modelgen.ParseDims(dimsFlag)
	if err != nil {
		return err
	}
	onnx, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: d, Seed: 1})
	if err != nil {
		return err
	}
	m, err := head.LoadONNX(onnx)
	if err != nil {
		return err
	}
	corpus := head.RandomCorpus(d[0], 256, 1)
	q, rep, err := head.Quantize(m, corpus)
	if err != nil {
		return err
	}
	t0 := time.Now()
	c, err := head.Compile(q)
	if err != nil {
		return err
	}
	compile := time.Since(t0)
	t0 = time.Now()
	pk, vk, err := head.Setup(c)
	if err != nil {
		return err
	}
	setupT := time.Since(t0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var csb, pkb bytes.Buffer
	if _, err := c.CS.WriteTo(&csb); err != nil {
		return err
	}
	if _, err := pk.WriteTo(&pkb); err != nil {
		return err
	}
	vkb, err := head.EncodeVerifyingKey(vk)
	if err != nil {
		return err
	}
	qj, _ := json.Marshal(q)
	for name, b := range map[string][]byte{"cs": csb.Bytes(), "pk": pkb.Bytes(), "vk": vkb, "quant.json": qj} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	params := 0
	for _, l := range m.Layers {
		params += len(l.W) + len(l.B)
	}
	emit(map[string]any{"phase": "setup", "dims": d, "params": params, "constraints": c.CS.GetNbConstraints(),
		"compile_s": compile.Seconds(), "setup_s": setupT.Seconds(), "pk_bytes": pkb.Len(), "vk_bytes": len(vkb),
		"agreement": rep.ArgmaxAgreement, "max_logit_error": rep.MaxLogitError, "max_logit": rep.MaxLogit})
	return nil
}

func load(dir string) (*head.Compiled, *groth16bn254.ProvingKey, error) {
	var q head.Quantized
	qj, err := os.ReadFile(filepath.Join(dir, "quant.json"))
	if err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(qj, &q); err != nil {
		return nil, nil, err
	}
	csb, err := os.ReadFile(filepath.Join(dir, "cs"))
	if err != nil {
		return nil, nil, err
	}
	r1cs := new(cs.R1CS)
	if _, err := r1cs.ReadFrom(bytes.NewReader(csb)); err != nil {
		return nil, nil, err
	}
	pkb, err := os.ReadFile(filepath.Join(dir, "pk"))
	if err != nil {
		return nil, nil, err
	}
	pk := new(groth16bn254.ProvingKey)
	if _, err := pk.ReadFrom(bytes.NewReader(pkb)); err != nil {
		return nil, nil, err
	}
	return &head.Compiled{Q: &q, CS: r1cs}, pk, nil
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func prove(dir string, n int) error {
	c, pk, err := load(dir)
	if err != nil {
		return err
	}
	x := c.Q.QuantizeInput(head.RandomCorpus(c.Q.Layers[0].In, 1, 99)[0])
	// Baseline, same run: the plain integer run of the head (what the proof
	// is about), median of many.
	var base []time.Duration
	for i := 0; i < 101; i++ {
		t0 := time.Now()
		if _, _, err := c.Q.Run(x); err != nil {
			return err
		}
		base = append(base, time.Since(t0))
	}
	var times []time.Duration
	var proof []byte
	var pub head.Public
	cpu0 := cpuTime()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		proof, pub, err = head.Prove(c, pk, x)
		if err != nil {
			return err
		}
		times = append(times, time.Since(t0))
	}
	cpu := (cpuTime() - cpu0) / time.Duration(n)
	pj, _ := json.Marshal(pub)
	if err := os.WriteFile(filepath.Join(dir, "proof"), proof, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "public.json"), pj, 0o644); err != nil {
		return err
	}
	emit(map[string]any{"phase": "prove", "n": n, "prove_median_s": median(times).Seconds(), "prove_min_s": minDur(times).Seconds(),
		"proof_bytes": len(proof), "baseline_int8_run_s": median(base).Seconds(),
		"prove_cpu_s": cpu.Seconds()})
	return nil
}

func minDur(d []time.Duration) time.Duration {
	m := d[0]
	for _, x := range d {
		m = min(m, x)
	}
	return m
}

func verify(dir string, n int) error {
	vkb, err := os.ReadFile(filepath.Join(dir, "vk"))
	if err != nil {
		return err
	}
	proof, err := os.ReadFile(filepath.Join(dir, "proof"))
	if err != nil {
		return err
	}
	pj, err := os.ReadFile(filepath.Join(dir, "public.json"))
	if err != nil {
		return err
	}
	var pub head.Public
	if err := json.Unmarshal(pj, &pub); err != nil {
		return err
	}
	var times []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := head.Verify(vkb, proof, pub); err != nil { // decode key + proof + verify, as svc-verify does
			return err
		}
		times = append(times, time.Since(t0))
	}
	// Baseline, same run: one Ed25519 verification (what every VPEC
	// signature costs).
	pubk, priv, _ := ed25519.GenerateKey(nil)
	msg := make([]byte, 256)
	sig := ed25519.Sign(priv, msg)
	var base []time.Duration
	for i := 0; i < 1001; i++ {
		t0 := time.Now()
		if !ed25519.Verify(pubk, msg, sig) {
			return fmt.Errorf("ed25519")
		}
		base = append(base, time.Since(t0))
	}
	emit(map[string]any{"phase": "verify", "n": n, "verify_median_s": median(times).Seconds(), "verify_min_s": minDur(times).Seconds(),
		"baseline_ed25519_verify_s": median(base).Seconds()})
	return nil
}

// cpuTime is the process's user + system CPU time so far: with other work
// on the machine, CPU time per proof is steadier than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
