package transcript_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

var vkBytes = []byte("verifying key bytes")

func h(s string) string { return transcript.HashBytes([]byte(s)) }

// sample returns a finished transcript: two phase-1 and two phase-2
// contributions, both phases sealed, ending in vkBytes's hash. The hashes
// are of labels: the offline check cannot tell (that is the point of the
// file-based check).
func sample() *transcript.Transcript {
	t := &transcript.Transcript{
		Schema:      transcript.Schema,
		ProofSystem: transcript.ProofSystem,
		Phase1: transcript.Phase1{Power: 14, InitialStateHash: h("p1-0"),
			Beacon: strings.Repeat("ab", 16), SRSHash: h("srs")},
		Phase2: &transcript.Phase2{Circuit: "mlp-head", ONNXModelHash: h("model"), R1CSHash: h("r1cs"),
			Constraints: 12280, Power: 14, InitialStateHash: h("p2-0"),
			Beacon: strings.Repeat("cd", 16), VerifyingKeyHash: transcript.HashBytes(vkBytes), ProvingKeyHash: h("pk")},
	}
	prev := map[int]string{1: h("p1-0"), 2: h("p2-0")}
	for i, c := range []struct {
		phase int
		name  string
	}{{1, "Alice"}, {1, "Bob"}, {2, "Carol"}, {2, "Dave"}} {
		s := h(fmt.Sprintf("state-%d", i))
		t.Contributions = append(t.Contributions, transcript.Contribution{Index: i + 1, Phase: c.phase, Contributor: c.name,
			ContributionHash: h(fmt.Sprintf("proofs-%d", i)), PreviousStateHash: prev[c.phase], StateHash: s})
		prev[c.phase] = s
	}
	return t
}

func marshal(t *testing.T, tr *transcript.Transcript) []byte {
	t.Helper()
	raw, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestCheck(t *testing.T) {
	tr := sample()
	raw, hash, err := tr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// the hash is SHA-256 over the RFC 8785 bytes, however the file is spelt
	canon, err := canonical.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	if want := "sha256:" + hex.EncodeToString(sum[:]); hash != want {
		t.Fatalf("hash %s, want %s", hash, want)
	}
	rep, err := transcript.Check(marshal(t, tr), vkBytes, hash)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Hash != hash || strings.Join(rep.Phase1Contributors, ",") != "Alice,Bob" || strings.Join(rep.Phase2Contributors, ",") != "Carol,Dave" {
		t.Fatalf("report %+v", rep)
	}
	if rep.SingleParty() || len(rep.Distinct()) != 4 || rep.Constraints != 12280 || rep.Circuit != "mlp-head" {
		t.Fatalf("report %+v", rep)
	}
	// one name everywhere: a single party
	for i := range tr.Contributions {
		tr.Contributions[i].Contributor = "svc operator"
	}
	rep, err = transcript.Check(marshal(t, tr), vkBytes, "")
	if err != nil || !rep.SingleParty() {
		t.Fatalf("single party: %+v %v", rep, err)
	}
}

func TestRules(t *testing.T) {
	cases := []struct {
		name string
		edit func(*transcript.Transcript)
		want error
	}{
		{"index not its position", func(t *transcript.Transcript) { t.Contributions[1].Index = 3 }, transcript.ErrOrder},
		{"swapped", func(t *transcript.Transcript) {
			c := t.Contributions
			c[0], c[1] = c[1], c[0]
			c[0].Index, c[1].Index = 1, 2
		}, transcript.ErrChain},
		{"phase 1 after phase 2", func(t *transcript.Transcript) {
			c := t.Contributions
			c[1], c[2] = c[2], c[1]
			c[1].Index, c[2].Index = 2, 3
		}, transcript.ErrOrder},
		{"skips its predecessor", func(t *transcript.Transcript) { t.Contributions[1].PreviousStateHash = h("p1-0") }, transcript.ErrChain},
		{"phase 2 not on its initial state", func(t *transcript.Transcript) { t.Contributions[2].PreviousStateHash = h("state-1") }, transcript.ErrChain},
		{"removed contribution", func(t *transcript.Transcript) {
			t.Contributions = append(t.Contributions[:2], t.Contributions[3])
			t.Contributions[2].Index = 3
		}, transcript.ErrChain},
		{"state repeated", func(t *transcript.Transcript) { t.Contributions[3].StateHash = h("state-0") }, transcript.ErrChain},
		{"phase 2 before phase 1 sealed", func(t *transcript.Transcript) { t.Phase1.Beacon, t.Phase1.SRSHash = "", "" }, transcript.ErrIncomplete},
		{"phase 1 sealed without contributions", func(t *transcript.Transcript) {
			t.Phase2 = nil
			t.Contributions = []transcript.Contribution{}
		}, transcript.ErrNoContributions},
		{"beacon without srs hash", func(t *transcript.Transcript) { t.Phase1.SRSHash = "" }, transcript.ErrSchema},
		{"uppercase beacon", func(t *transcript.Transcript) { t.Phase2.Beacon = strings.Repeat("CD", 16) }, transcript.ErrSchema},
		{"short beacon", func(t *transcript.Transcript) { t.Phase2.Beacon = "cdcd" }, transcript.ErrSchema},
		{"uppercase hash", func(t *transcript.Transcript) {
			t.Contributions[0].StateHash = strings.ToUpper(t.Contributions[0].StateHash)
		}, transcript.ErrSchema},
		{"bidi control in a name", func(t *transcript.Transcript) { t.Contributions[0].Contributor = "Alice\u202e" }, transcript.ErrSchema},
		{"name too long", func(t *transcript.Transcript) { t.Contributions[0].Contributor = strings.Repeat("a", 129) }, transcript.ErrSchema},
		{"phase 3", func(t *transcript.Transcript) { t.Contributions[3].Phase = 3 }, transcript.ErrSchema},
		{"constraints do not fit the power", func(t *transcript.Transcript) { t.Phase2.Constraints = 8192 }, transcript.ErrSchema},
		{"phase 2 larger than phase 1", func(t *transcript.Transcript) { t.Phase2.Power, t.Phase2.Constraints = 15, 20000 }, transcript.ErrSchema},
		{"power too large", func(t *transcript.Transcript) { t.Phase1.Power = 25 }, transcript.ErrSchema},
		{"other schema", func(t *transcript.Transcript) { t.Schema = "svc.zk-ceremony/v2" }, transcript.ErrSchema},
		{"other proof system", func(t *transcript.Transcript) { t.ProofSystem = "plonk-bn254" }, transcript.ErrSchema},
		{"not finalized", func(t *transcript.Transcript) {
			t.Phase2.Beacon, t.Phase2.VerifyingKeyHash, t.Phase2.ProvingKeyHash = "", "", ""
		}, transcript.ErrIncomplete},
		{"no phase 2", func(t *transcript.Transcript) {
			t.Phase2 = nil
			t.Contributions = t.Contributions[:2]
		}, transcript.ErrIncomplete},
		{"another verifying key", func(t *transcript.Transcript) { t.Phase2.VerifyingKeyHash = h("other vk") }, transcript.ErrKeyMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := sample()
			c.edit(tr)
			_, err := transcript.Check(marshal(t, tr), vkBytes, "")
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			var te *transcript.Error
			if !errors.As(err, &te) {
				t.Fatalf("%v is not a *transcript.Error", err)
			}
		})
	}
}

func TestDocumentErrors(t *testing.T) {
	raw := marshal(t, sample())
	_, hash, _ := transcript.Parse(raw)
	for name, c := range map[string]struct {
		doc  string
		hash string
		want error
	}{
		"unknown member":  {strings.Replace(string(raw), `"schema"`, `"extra":1,"schema"`, 1), "", transcript.ErrSchema},
		"empty member":    {strings.Replace(string(raw), `"onnx_model_hash":"`+h("model")+`"`, `"onnx_model_hash":""`, 1), "", transcript.ErrSchema},
		"duplicate key":   {strings.Replace(string(raw), `"schema"`, `"schema":"x","schema"`, 1), "", transcript.ErrSchema},
		"not JSON":        {"\x00", "", transcript.ErrSchema},
		"other hash":      {string(raw), h("x"), transcript.ErrTranscriptHash},
		"index as 1.0":    {strings.Replace(string(raw), `"index":1,`, `"index":1.5,`, 1), "", transcript.ErrSchema},
		"name edited":     {strings.Replace(string(raw), `"Alice"`, `"Alicia"`, 1), hash, transcript.ErrTranscriptHash},
		"contributor gap": {strings.Replace(string(raw), `"contributor":"Bob",`, ``, 1), "", transcript.ErrSchema},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := transcript.Check([]byte(c.doc), vkBytes, c.hash); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	// whitespace and member order do not change the hash
	spaced := strings.ReplaceAll(string(raw), ",", ", ")
	if _, h2, err := transcript.Parse([]byte(spaced)); err != nil || h2 != hash {
		t.Fatalf("respaced: %s %v, want %s", h2, err, hash)
	}
}

// TestNameRuleIsVPECs: the transcript's name rule is names.ValidName's.
func TestNameRuleIsVPECs(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		s := "a" + string(r)
		if (transcript.ValidName(s) == nil) != (names.ValidName(s) == nil) {
			t.Fatalf("U+%04X: transcript %v, vpec %v", r, transcript.ValidName(s), names.ValidName(s))
		}
	}
}

func FuzzCheck(f *testing.F) {
	good, _, _ := sample().Marshal()
	f.Add(good, vkBytes)
	f.Add([]byte(`{"schema":"svc.zk-ceremony/v1"}`), []byte{})
	f.Add([]byte(`[]`), []byte{1})
	for _, d := range fuzzedge.Documents(good, 400) { // power, constraints, index, phase at their maxima and int64 edges
		f.Add(d, vkBytes)
	}
	f.Fuzz(func(t *testing.T, doc, vk []byte) {
		rep, err := transcript.Check(doc, vk, "")
		if err != nil {
			var te *transcript.Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *transcript.Error", err)
			}
			return
		}
		// what passes is a consistent chain ending in vk
		tr, hash, err := transcript.Parse(doc)
		if err != nil || hash != rep.Hash || tr.Phase2.VerifyingKeyHash != transcript.HashBytes(vk) {
			t.Fatalf("accepted but %v %s", err, hash)
		}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}
