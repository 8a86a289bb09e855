package ceremony_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/logger"

	"github.com/svc-gov/svc/pkg/zk/ceremony"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

const (
	testPower = 8
	beacon1   = "00112233445566778899aabbccddeeff"
	beacon2   = "ffeeddccbbaa99887766554433221100"
)

func init() { logger.Disable() }

// ceremonyDirs runs a 2-contributor phase 1 (sealed) and returns its
// directory and a phase-2 directory for the demo circuit with two
// contributions, not finalized. Built once and copied per test.
var ceremonyDirs = sync.OnceValues(func() (string, error) {
	root, err := os.MkdirTemp("", "ceremony-test-")
	if err != nil {
		return "", err
	}
	p1 := filepath.Join(root, "p1")
	c1, err := ceremony.InitPhase1(p1, testPower)
	if err != nil {
		return "", err
	}
	for _, n := range []string{"Alice", "Bob"} {
		if _, err := c1.Contribute(n); err != nil {
			return "", err
		}
	}
	if _, err := ceremony.Finalize(p1, beacon1, ceremony.VerifyOptions{}); err != nil {
		return "", err
	}
	circ, err := ceremony.CompileDemo()
	if err != nil {
		return "", err
	}
	c2, err := ceremony.InitPhase2(filepath.Join(root, "p2"), p1, circ)
	if err != nil {
		return "", err
	}
	for _, n := range []string{"Carol", "Dave"} {
		if _, err := c2.Contribute(n); err != nil {
			return "", err
		}
	}
	return root, nil
})

// fixture copies the prepared ceremony into a fresh directory.
func fixture(t *testing.T) (p1, p2 string) {
	t.Helper()
	root, err := ceremonyDirs()
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(root)); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dst, "p1"), filepath.Join(dst, "p2")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if root, err := ceremonyDirs(); err == nil {
		os.RemoveAll(root)
	}
	os.Exit(code)
}

// TestTwoContributorCeremony: phase 1 and phase 2 with two contributors
// each, finalize, and a proof made with the ceremony's proving key
// verifies with its verifying key; the transcript checks offline against
// the verifying key and names the four contributors.
func TestTwoContributorCeremony(t *testing.T) {
	p1, p2 := fixture(t)
	keys, err := ceremony.Finalize(p2, beacon2, ceremony.VerifyOptions{Phase1Dir: p1})
	if err != nil {
		t.Fatal(err)
	}
	// prove with the written proving key, verify with the written verifying key
	pk := groth16.NewProvingKey(ecc.BN254)
	vk := groth16.NewVerifyingKey(ecc.BN254)
	readKey(t, filepath.Join(p2, ceremony.ProvingKeyFile), pk)
	vkBytes := readKey(t, filepath.Join(p2, ceremony.VerifyingKeyFile), vk)
	circ, err := ceremony.CompileDemo()
	if err != nil {
		t.Fatal(err)
	}
	w, err := frontend.NewWitness(ceremony.DemoAssignment(1234), ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(circ.R1CS, pk, w)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := w.Public()
	if err := groth16.Verify(proof, vk, pub); err != nil {
		t.Fatalf("proof from the ceremony's keys: %v", err)
	}
	// a wrong public output fails
	bad, _ := frontend.NewWitness(&ceremony.DemoCircuit{X: 0, Y: 1234*1234*1234 + 1234 + 6}, ecc.BN254.ScalarField(), frontend.PublicOnly())
	if err := groth16.Verify(proof, vk, bad); err == nil {
		t.Fatal("proof verified against another public output")
	}

	doc, err := os.ReadFile(filepath.Join(p2, ceremony.TranscriptFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Check(doc, vkBytes, keys.TranscriptHash)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Distinct(), ","); got != "Alice,Bob,Carol,Dave" {
		t.Fatalf("contributors %q", got)
	}
	if rep.SingleParty() {
		t.Fatal("four contributors reported as a single party")
	}
	// the full check passes on the finalized ceremony, phase 1 included
	r, err := ceremony.Verify(p2, ceremony.VerifyOptions{Phase1Dir: p1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Phase1Checked != 2 || r.Phase2Checked != 2 || !r.Sealed || !r.Finalized || r.TranscriptHash != keys.TranscriptHash {
		t.Fatalf("verify result %+v", r)
	}
	// the keys from another beacon are other keys: the beacon is bound
	if _, err := ceremony.Finalize(p2, beacon2, ceremony.VerifyOptions{}); !errors.Is(err, ceremony.ErrPhase) {
		t.Fatalf("second finalize: %v, want ErrPhase", err)
	}
}

func readKey(t *testing.T, path string, into io.ReaderFrom) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := into.ReadFrom(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return data
}
