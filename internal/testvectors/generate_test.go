package testvectors

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	for _, f := range []string{ManifestFile, filepath.Join(TrustDir, ManifestFile)} {
		if got, want := read(dir, f), read(committed, f); !bytes.Equal(got, want) {
			t.Errorf("regenerated %s differs from the committed one: run make vectors and commit", f)
		}
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

// TestDisclosuresVectorIsWorkedExample: the selective record of the
// disclosures vector is FORMATS.md's worked example (commitment, every
// field digest, the two disclosures with their salts), so a second
// implementer can check one against the other.
func TestDisclosuresVectorIsWorkedExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(committed, "vpec/valid/disclosures.json"))
	if err != nil {
		t.Fatal(err)
	}
	formats, err := os.ReadFile("../../docs/FORMATS.md")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Records []struct {
			Check          string   `json:"check"`
			Visibility     string   `json:"visibility"`
			CommitmentHash string   `json:"commitment_hash"`
			FieldDigests   []string `json:"field_digests"`
			Disclosures    []struct {
				Salt, Field string
				Value       any
			} `json:"disclosures"`
		} `json:"records"`
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Records) != 4 || v.Records[3].Visibility != "selective" || v.Records[3].Check != "kyc_check" {
		t.Fatalf("record 4 of disclosures.json is not the selective kyc_check record: %+v", v.Records)
	}
	r := v.Records[3]
	quoted := []string{"`" + r.CommitmentHash + "`"}
	for _, d := range r.FieldDigests {
		quoted = append(quoted, `"`+d+`"`)
	}
	if len(r.Disclosures) != 2 {
		t.Fatalf("record 4 discloses %d fields, want document_type and jurisdiction", len(r.Disclosures))
	}
	for _, d := range r.Disclosures {
		quoted = append(quoted, fmt.Sprintf(`{"salt": %q, "field": %q, "value": %q}`, d.Salt, d.Field, d.Value))
	}
	for _, q := range quoted {
		if !bytes.Contains(formats, []byte(q)) {
			t.Errorf("FORMATS.md's selective disclosure worked example does not quote %s from the disclosures vector", q)
		}
	}
}
