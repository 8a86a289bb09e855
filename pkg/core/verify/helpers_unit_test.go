package verify

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// The table tests of each check (<check>_unit_test.go) call the check's
// function with a document and exactly what it needs. Documents that need
// a signature or a time-stamp token are the committed test vectors
// (testdata/vectors, made by internal/testvectors with the TEST-ONLY keys
// there); the others are built here.

const vectors = "../../../testdata/vectors"

// vector parses the committed test vector rel.
func vector(t *testing.T, rel string) *vpec.Document {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(vectors, rel))
	if err != nil {
		t.Fatal(err)
	}
	d, err := vpec.Parse(doc)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return d
}

// vectorTrust is the vectors' trust bundle: the TEST-ONLY service key and
// TSA root.
func vectorTrust(t *testing.T) *signing.Bundle {
	t.Helper()
	b, err := signing.LoadBundle(filepath.Join(vectors, "keys", "trust-bundle.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keysOnly is the vectors' bundle without its TSA roots; rootsOnly has
// the given TSA roots and a key that signed nothing.
func keysOnly(t *testing.T) *signing.Bundle {
	t.Helper()
	all, b := vectorTrust(t), signing.NewBundle()
	for _, id := range all.KeyIDs() {
		pub, err := all.Key(id)
		if err != nil {
			t.Fatal(err)
		}
		b.AddKey(pub)
	}
	return b
}

func rootsOnly(t *testing.T, roots ...*x509.Certificate) *signing.Bundle {
	t.Helper()
	pub, _, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	b := signing.NewBundle()
	b.AddKey(pub)
	for _, r := range roots {
		b.AddRoot(r)
	}
	return b
}

// built is a finished, unsigned VPEC of n execution records of run
// run_unit, chained from genesis, with the gaps and summary an issuer
// gives them, and each record's chain input.
func built(t *testing.T, n int) (*vpec.VPEC, [][]byte) {
	t.Helper()
	v := &vpec.VPEC{Schema: vpec.Schema, VPECID: "vpec_unit", RunID: "run_unit", WorkflowID: "wf", OrgID: "org",
		IssuedAt: "2026-11-22T00:10:00.000Z", Environment: vpec.Sandbox, APIKeyID: "pk_sb_0123456789ab"}
	for i := range n {
		v.Records = append(v.Records, vpec.Record{RecordID: names.NewID("rec_"), Sequence: int64(i + 1), Check: fmt.Sprintf("check_%d", i),
			ManifestID: "m", CheckResult: vpec.ResultPass, ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256",
			CommitmentHash: commitment.String([]byte(fmt.Sprint(i))), Visibility: vpec.Opaque, RecordedAt: "2026-11-22T00:00:00.000Z"})
	}
	return finish(t, v)
}

// finish chains v's records, declares the gaps they require and derives
// the summary, as an issuer does; it returns each record's chain input.
func finish(t *testing.T, v *vpec.VPEC) (*vpec.VPEC, [][]byte) {
	t.Helper()
	if _, err := issue.Chain(vpec.Genesis(v.RunID), v.Records); err != nil {
		t.Fatal(err)
	}
	jcs, err := issue.RecordsJCS(v.Records)
	if err != nil {
		t.Fatal(err)
	}
	v.Gaps = issue.Gaps(v.RunID, v.Records, jcs, "2026-11-22T00:05:00.000Z")
	issue.Finish(v, jcs)
	return v, jcs
}

// breaksOf recomputes v's chain breaks from the chain inputs jcs.
func breaksOf(v *vpec.VPEC, jcs [][]byte) []vpec.ChainBreak {
	return vpec.VerifyChain(v.RunID, v.Records, jcs)
}

// want is what a table case expects of a check: its status, its code
// (a failure's), whether it failed for want of trust material, and a
// phrase of its message.
type want struct {
	status  Status
	code    string
	missing bool
	msg     string
}

func (w want) check(t *testing.T, name CheckName, c Check) {
	t.Helper()
	if c.Name != name && name != "" {
		t.Errorf("check name %q, want %q", c.Name, name)
	}
	if c.Status != w.status || c.Code != w.code || c.MissingTrust != w.missing || !strings.Contains(c.Message, w.msg) {
		t.Errorf("got %s %q missing=%v %q (details %q); want %s %q missing=%v %q", c.Status, c.Code, c.MissingTrust, c.Message, c.Details, w.status, w.code, w.missing, w.msg)
	}
}

// recordBytes is each record's chain input as v now holds it.
func recordBytes(t *testing.T, v *vpec.VPEC) [][]byte {
	t.Helper()
	jcs, err := issue.RecordsJCS(v.Records)
	if err != nil {
		t.Fatal(err)
	}
	return jcs
}
