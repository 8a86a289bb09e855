package ceremony_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/zk/ceremony"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

// TestWorkedExample: the committed example ceremony (docs/FORMATS.md,
// "Ceremony transcript") passes the full check, phase 1 included; its
// transcript is the one the document shows, with the hash it states; and
// its initial states and circuit are what this code computes today.
func TestWorkedExample(t *testing.T) {
	ex := filepath.Join("testdata", "example")
	r, err := ceremony.Verify(filepath.Join(ex, "demo"), ceremony.VerifyOptions{Phase1Dir: filepath.Join(ex, "p1")})
	if err != nil {
		t.Fatal(err)
	}
	if r.Phase1Checked != 2 || r.Phase2Checked != 2 || !r.Sealed || !r.Finalized {
		t.Fatalf("result %+v", r)
	}
	doc, err := os.ReadFile("../../../docs/FORMATS.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(doc)[strings.Index(string(doc), "## Ceremony transcript"):]
	m := regexp.MustCompile("transcript hash\n`(sha256:[0-9a-f]{64})`").FindStringSubmatch(sec)
	if m == nil || m[1] != r.TranscriptHash {
		t.Fatalf("the document states %v, the example's hash is %s", m, r.TranscriptHash)
	}
	block := sec[strings.Index(sec, "```json\n")+8:]
	block = block[:strings.Index(block, "```")]
	_, h, err := transcript.Parse([]byte(block))
	if err != nil || h != r.TranscriptHash {
		t.Fatalf("the document's transcript: %s %v, want %s", h, err, r.TranscriptHash)
	}
	file, _ := os.ReadFile(filepath.Join(ex, "demo", ceremony.TranscriptFile))
	if transcript.HashBytes(file) != r.TranscriptHash {
		t.Fatal("transcript.json is not in canonical form: its SHA-256 is not the transcript hash")
	}
	vk, _ := os.ReadFile(filepath.Join(ex, "demo", ceremony.VerifyingKeyFile))
	if _, err := transcript.Check([]byte(block), vk, r.TranscriptHash); err != nil {
		t.Fatal(err)
	}
	// compiling the demo circuit again gives the recorded constraint system
	circ, err := ceremony.CompileDemo()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := circ.R1CS.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if got := transcript.HashBytes(b.Bytes()); got != r.Transcript.Phase2.R1CSHash {
		t.Fatalf("demo circuit %s, the example records %s", got, r.Transcript.Phase2.R1CSHash)
	}
	// a fresh phase 1 of the same power has the recorded initial state
	fresh := filepath.Join(t.TempDir(), "p1")
	c, err := ceremony.InitPhase1(fresh, 6)
	if err != nil {
		t.Fatal(err)
	}
	if c.T.Phase1.InitialStateHash != r.Transcript.Phase1.InitialStateHash {
		t.Fatalf("initial state %s, the example records %s", c.T.Phase1.InitialStateHash, r.Transcript.Phase1.InitialStateHash)
	}
}
