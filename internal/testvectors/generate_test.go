package testvectors

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

const committed = "../../testdata/vectors"

// TestGenerateMatchesCommitted regenerates the vectors (with the committed
// keys) into a temporary directory: the manifest, which holds nothing that
// depends on the clock, must be byte for byte the committed one (so the
// generator and testdata/vectors have not drifted apart), and the seeded
// dev setup must give the committed circuit entries' verifying keys and
// the committed proofs.
func TestGenerateMatchesCommitted(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "keys"), os.DirFS(filepath.Join(committed, "keys"))); err != nil {
		t.Fatal(err)
	}
	if err := Generate(dir); err != nil {
		t.Fatal(err)
	}
	read := func(root, rel string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got, want := read(dir, ManifestFile), read(committed, ManifestFile); !bytes.Equal(got, want) {
		t.Errorf("regenerated %s differs from the committed one: run make vectors and commit", ManifestFile)
	}
	for _, f := range []string{HeadCircuitFile, ThresholdCircuitFile, OtherKeyCircuitFile} {
		type entry struct {
			CircuitID    string `json:"circuit_id"`
			VerifyingKey string `json:"verifying_key"`
			PKHash       string `json:"proving_key_hash"`
		}
		var got, want entry
		if err := json.Unmarshal(read(dir, f), &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(read(committed, f), &want); err != nil {
			t.Fatal(err)
		}
		if got != want || got.CircuitID == "" {
			t.Errorf("%s: regenerated keys differ from the committed ones (circuit %s, want %s): the seeded dev setup is not reproducible", f, got.CircuitID, want.CircuitID)
		}
	}
	proofs := func(root string) []string {
		var v struct {
			Records []struct {
				ZKProof *struct {
					Proof string `json:"proof"`
				} `json:"zk_proof"`
			} `json:"records"`
		}
		if err := json.Unmarshal(read(root, "vpec/valid/proofs.json"), &v); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range v.Records {
			if r.ZKProof != nil {
				out = append(out, r.ZKProof.Proof)
			}
		}
		return out
	}
	got, want := proofs(dir), proofs(committed)
	if len(want) != 2 || len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("regenerated proofs differ from the committed ones:\n got %.40q\nwant %.40q", got, want)
	}
}
