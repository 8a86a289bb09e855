package ceremony_test

import (
	"bytes"
	"encoding/json"
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
	if transcript.HashBytes(doc) != keys.TranscriptHash {
		t.Fatal("the transcript file's SHA-256 is not the transcript hash")
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

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

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

// editTranscript rewrites dir's transcript with edit.
func editTranscript(t *testing.T, dir string, edit func(*transcript.Transcript)) {
	t.Helper()
	path := filepath.Join(dir, ceremony.TranscriptFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, _, err := transcript.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	edit(tr)
	raw, err := json.MarshalIndent(tr, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTampering: each way of cheating on a ceremony fails the full check
// with its own error.
func TestTampering(t *testing.T) {
	state := func(dir string, n int) string { return filepath.Join(dir, ceremony.StateFile(2, n)) }

	t.Run("replaced state file", func(t *testing.T) {
		// Dave's file swapped for another valid contribution on Carol's state
		p1, p2 := fixture(t)
		other := filepath.Join(t.TempDir(), "other")
		if err := os.CopyFS(other, os.DirFS(p2)); err != nil {
			t.Fatal(err)
		}
		os.Remove(state(other, 2))
		editTranscript(t, other, func(tr *transcript.Transcript) { tr.Contributions = tr.Contributions[:3] })
		c, err := ceremony.Open(other)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Contribute("Mallory"); err != nil {
			t.Fatal(err)
		}
		copyFile(t, state(other, 2), state(p2, 2))
		_, err = ceremony.Verify(p2, ceremony.VerifyOptions{Phase1Dir: p1})
		if !errors.Is(err, ceremony.ErrStateHash) {
			t.Fatalf("got %v, want ErrStateHash", err)
		}
		t.Log(err)
	})

	t.Run("forged contribution", func(t *testing.T) {
		// Dave's [δ]₁ replaced by Carol's (a valid point, canonical bytes)
		// and the transcript's hash updated to match: the proofs fail.
		p1, p2 := fixture(t)
		carol, _ := os.ReadFile(state(p2, 1))
		dave, _ := os.ReadFile(state(p2, 2))
		copy(dave[2:34], carol[2:34])
		if err := os.WriteFile(state(p2, 2), dave, 0o644); err != nil {
			t.Fatal(err)
		}
		editTranscript(t, p2, func(tr *transcript.Transcript) { tr.Contributions[3].StateHash = transcript.HashBytes(dave) })
		_, err := ceremony.Verify(p2, ceremony.VerifyOptions{Phase1Dir: p1})
		if !errors.Is(err, ceremony.ErrContribution) {
			t.Fatalf("got %v, want ErrContribution", err)
		}
		t.Log(err)
	})

	t.Run("skipped predecessor", func(t *testing.T) {
		// Eve contributes on the initial phase-2 state, ignoring Carol,
		// and her file takes Dave's place with a transcript entry that
		// claims to build on Carol's state.
		p1, p2 := fixture(t)
		other := filepath.Join(t.TempDir(), "other")
		if err := os.CopyFS(other, os.DirFS(p2)); err != nil {
			t.Fatal(err)
		}
		os.Remove(state(other, 1))
		os.Remove(state(other, 2))
		editTranscript(t, other, func(tr *transcript.Transcript) { tr.Contributions = tr.Contributions[:2] })
		c, err := ceremony.Open(other)
		if err != nil {
			t.Fatal(err)
		}
		eve, err := c.Contribute("Eve")
		if err != nil {
			t.Fatal(err)
		}
		copyFile(t, state(other, 1), state(p2, 2))
		editTranscript(t, p2, func(tr *transcript.Transcript) {
			tr.Contributions[3].Contributor = "Eve"
			tr.Contributions[3].StateHash = eve.StateHash
			tr.Contributions[3].ContributionHash = eve.ContributionHash
		})
		_, err = ceremony.Verify(p2, ceremony.VerifyOptions{Phase1Dir: p1})
		if !errors.Is(err, transcript.ErrChain) {
			t.Fatalf("got %v, want ErrChain", err)
		}
		t.Log(err)
		// told honestly (previous = the initial state), the transcript
		// itself breaks its chain
		data, _ := os.ReadFile(filepath.Join(p2, ceremony.TranscriptFile))
		tr := new(transcript.Transcript)
		if err := json.Unmarshal(data, tr); err != nil {
			t.Fatal(err)
		}
		tr.Contributions[3].PreviousStateHash = eve.PreviousStateHash
		if err := tr.Validate(); !errors.Is(err, transcript.ErrChain) {
			t.Fatalf("got %v, want ErrChain", err)
		}
	})

	t.Run("phase-1 file replaced", func(t *testing.T) {
		p1, p2 := fixture(t)
		a := filepath.Join(p1, ceremony.StateFile(1, 1))
		data, _ := os.ReadFile(a)
		data[len(data)-1] ^= 1 // the challenge
		os.WriteFile(a, data, 0o644)
		if _, err := ceremony.Verify(p2, ceremony.VerifyOptions{Phase1Dir: p1}); !errors.Is(err, ceremony.ErrStateHash) {
			t.Fatalf("got %v, want ErrStateHash", err)
		}
		// without the phase-1 files, phase 2 still verifies (srs.bin's hash)
		if r, err := ceremony.Verify(p2, ceremony.VerifyOptions{}); err != nil || r.Phase1Files {
			t.Fatalf("got %+v, %v", r, err)
		}
	})

	t.Run("key not from the final state", func(t *testing.T) {
		p1, p2 := fixture(t)
		if _, err := ceremony.Finalize(p2, beacon2, ceremony.VerifyOptions{Phase1Dir: p1}); err != nil {
			t.Fatal(err)
		}
		// a verifying key from a plain (single-party) setup of the same circuit
		circ, _ := ceremony.CompileDemo()
		_, vk, err := groth16.Setup(circ.R1CS)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		vk.WriteTo(&b)
		doc, _ := os.ReadFile(filepath.Join(p2, ceremony.TranscriptFile))
		if _, err := transcript.Check(doc, b.Bytes(), ""); !errors.Is(err, transcript.ErrKeyMismatch) {
			t.Fatalf("offline: got %v, want ErrKeyMismatch", err)
		}
		// the file replaced: the full check fails
		os.Chmod(filepath.Join(p2, ceremony.VerifyingKeyFile), 0o644)
		if err := os.WriteFile(filepath.Join(p2, ceremony.VerifyingKeyFile), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ceremony.Verify(p2, ceremony.VerifyOptions{}); !errors.Is(err, transcript.ErrKeyMismatch) {
			t.Fatalf("full: got %v, want ErrKeyMismatch", err)
		}
		// and the transcript rewritten to name it: offline the chain is
		// consistent (what offline cannot see), the full check re-seals
		// and refuses
		editTranscript(t, p2, func(tr *transcript.Transcript) { tr.Phase2.VerifyingKeyHash = transcript.HashBytes(b.Bytes()) })
		doc, _ = os.ReadFile(filepath.Join(p2, ceremony.TranscriptFile))
		if _, err := transcript.Check(doc, b.Bytes(), ""); err != nil {
			t.Fatalf("offline check of a consistent (lying) transcript: %v", err)
		}
		if _, err := ceremony.Verify(p2, ceremony.VerifyOptions{}); !errors.Is(err, transcript.ErrKeyMismatch) {
			t.Fatalf("full: got %v, want ErrKeyMismatch", err)
		}
	})

	t.Run("reordered transcript", func(t *testing.T) {
		_, p2 := fixture(t)
		editTranscript(t, p2, func(tr *transcript.Transcript) {
			c := tr.Contributions
			c[2], c[3] = c[3], c[2]
		})
		if _, err := ceremony.Open(p2); !errors.Is(err, transcript.ErrOrder) {
			t.Fatalf("got %v, want ErrOrder", err)
		}
		editTranscript2(t, p2, func(tr *transcript.Transcript) {
			tr.Contributions[2].Index, tr.Contributions[3].Index = 3, 4
		})
		if _, err := ceremony.Open(p2); !errors.Is(err, transcript.ErrChain) {
			t.Fatalf("got %v, want ErrChain", err)
		}
	})

	t.Run("wrong phase", func(t *testing.T) {
		p1, p2 := fixture(t)
		c, _ := ceremony.Open(p1)
		if _, err := c.Contribute("Late"); !errors.Is(err, ceremony.ErrPhase) {
			t.Fatalf("contribute to a sealed phase 1: %v", err)
		}
		if _, err := ceremony.Finalize(p2, "00", ceremony.VerifyOptions{}); err == nil {
			t.Fatal("a one-byte beacon accepted")
		}
		circ, _ := ceremony.CompileDemo()
		empty := filepath.Join(t.TempDir(), "empty")
		if _, err := ceremony.InitPhase2(empty, p1, circ); err != nil {
			t.Fatal(err)
		}
		if _, err := ceremony.Finalize(empty, beacon2, ceremony.VerifyOptions{}); !errors.Is(err, transcript.ErrNoContributions) {
			t.Fatalf("finalize without contributions: %v", err)
		}
		if _, err := ceremony.InitPhase2(empty, p1, circ); err == nil {
			t.Fatal("init over an existing ceremony")
		}
	})
}

// editTranscript2 edits a transcript that no longer validates (no parse).
func editTranscript2(t *testing.T, dir string, edit func(*transcript.Transcript)) {
	t.Helper()
	path := filepath.Join(dir, ceremony.TranscriptFile)
	data, _ := os.ReadFile(path)
	tr := new(transcript.Transcript)
	if err := json.Unmarshal(data, tr); err != nil {
		t.Fatal(err)
	}
	edit(tr)
	raw, _ := json.MarshalIndent(tr, "", "  ")
	os.WriteFile(path, raw, 0o644)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(to)
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
