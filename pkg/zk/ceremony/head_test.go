package ceremony_test

import (
	"os"
	"path/filepath"
	"testing"

	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/zk/ceremony"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
	"github.com/svc-gov/svc/pkg/zk/head"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// TestHeadCeremony: a ceremony for a small generated MLP head (ONNX in,
// quantised by the ceremony), one contributor in phase 1 and two in
// phase 2 (TestTwoContributorCeremony covers two in each); the proving key
// proves a run of the head that head.Verify accepts with the ceremony's
// verifying key, whose circuit id is the transcript's verifying-key hash,
// and the quantised head written beside the circuit compiles to the same
// constraint system.
func TestHeadCeremony(t *testing.T) {
	dir := t.TempDir()
	onnx, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{8, 4, 2}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "head.onnx")
	if err := os.WriteFile(model, onnx, 0o644); err != nil {
		t.Fatal(err)
	}
	circ, err := ceremony.HeadCircuitFromONNX(model)
	if err != nil {
		t.Fatal(err)
	}
	nc := circ.R1CS.GetNbConstraints()
	power := 1
	for 1<<power < nc {
		power++
	}
	t.Logf("8-4-2 head: %d constraints, domain 2^%d", nc, power)

	p1 := filepath.Join(dir, "p1")
	c1, err := ceremony.InitPhase1(p1, power)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Contribute("Org A"); err != nil {
		t.Fatal(err)
	}
	if _, err := ceremony.Finalize(p1, beacon1, ceremony.VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	p2 := filepath.Join(dir, "head")
	c2, err := ceremony.Init(ceremony.InitOptions{Dir: p2, Phase: 2, Phase1Dir: p1, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"Org C", "Org D"} {
		if _, err := c2.Contribute(n); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := ceremony.Finalize(p2, beacon2, ceremony.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// the prover's side: the quantised head from the ceremony directory
	circ2, err := ceremony.HeadCircuitFromQuantized(filepath.Join(p2, ceremony.HeadFile), "")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ceremony.Open(p2)
	if err != nil {
		t.Fatal(err)
	}
	if tr.T.Phase2.ONNXModelHash != transcript.HashBytes(onnx) || tr.T.Phase2.Circuit != ceremony.HeadCircuitName {
		t.Fatalf("phase2 %+v", tr.T.Phase2)
	}
	q := readQuantized(t, filepath.Join(p2, ceremony.HeadFile))
	compiled, err := head.Compile(q)
	if err != nil {
		t.Fatal(err)
	}
	if compiled.CS.GetNbConstraints() != circ2.R1CS.GetNbConstraints() {
		t.Fatal("the quantised head compiles to another circuit")
	}
	pk := keys.ProvingKey.(*groth16bn254.ProvingKey)
	x := q.QuantizeInput(head.RandomCorpus(8, 1, 99)[0])
	proof, pub, err := head.Prove(compiled, pk, x)
	if err != nil {
		t.Fatal(err)
	}
	vk, err := os.ReadFile(filepath.Join(p2, ceremony.VerifyingKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := head.Verify(vk, proof, pub); err != nil {
		t.Fatalf("a proof with the ceremony's key: %v", err)
	}
	pub.Class = 1 - pub.Class
	if err := head.Verify(vk, proof, pub); err == nil {
		t.Fatal("a flipped class verified")
	}
	if zkverify.CircuitID(vk) != tr.T.Phase2.VerifyingKeyHash {
		t.Fatalf("circuit id %s, transcript %s", zkverify.CircuitID(vk), tr.T.Phase2.VerifyingKeyHash)
	}
	doc, _ := os.ReadFile(filepath.Join(p2, ceremony.TranscriptFile))
	if _, err := transcript.Check(doc, vk, keys.TranscriptHash); err != nil {
		t.Fatal(err)
	}
}

func readQuantized(t testing.TB, path string) *head.Quantized {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var q head.Quantized
	if err := jsonUnmarshal(data, &q); err != nil {
		t.Fatal(err)
	}
	return &q
}
