package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

type fixture struct {
	signer *signing.Signer
	tsa    *timestamp.Authority
	trust  *signing.Bundle
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	pub, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := signing.NewSigner(priv)
	tsa, err := timestamp.InitAuthority(t.TempDir()+"/tsa", timestamp.AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := signing.NewBundle()
	b.AddKey(pub)
	b.AddRoot(tsa.Root())
	return &fixture{s, tsa, b}
}

func records(n int, level vpec.ProofLevel) []vpec.Record {
	out := make([]vpec.Record, n)
	for i := range out {
		out[i] = vpec.Record{
			RecordID: names.NewID("rec_"), Sequence: int64(i + 1), Check: fmt.Sprintf("check_%d", i%7),
			ManifestID: "sha256:" + fmt.Sprintf("%064x", i%3), CheckResult: vpec.ResultPass, ProofLevel: level,
			CommitmentAlgorithm: "sha256", CommitmentHash: commitment.String([]byte(fmt.Sprint(i))),
			Visibility: vpec.Opaque, RecordedAt: "2026-11-22T00:00:00.000Z",
			Details: map[string]any{"model": "pii-v3", "score": 0.25 + float64(i%4)/10},
		}
	}
	return out
}

func (f *fixture) issue(t testing.TB, recs []vpec.Record, gaps []vpec.Gap) []byte {
	t.Helper()
	v := &vpec.VPEC{VPECID: names.NewID("vpec_"), RunID: names.NewID("run_"), WorkflowID: "wf", OrgID: "org_1",
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", Records: recs, Gaps: gaps, IssuedAt: vpec.FormatTime(timeNow())}
	if _, err := issue.Chain(vpec.Genesis(v.RunID), v.Records); err != nil {
		t.Fatal(err)
	}
	jcs, err := issue.RecordsJCS(v.Records)
	if err != nil {
		t.Fatal(err)
	}
	issue.Finish(v, jcs)
	if err := issue.Seal(context.Background(), v, f.signer, f.tsa); err != nil {
		t.Fatal(err)
	}
	doc, err := document.MarshalIndent(v)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestSealVerifyRoundTrip(t *testing.T) {
	f := newFixture(t)
	for _, n := range []int{1, 2, 7, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			doc := f.issue(t, records(n, vpec.Execution), nil)
			r := verifyDoc(t, doc, verify.Options{Trust: f.trust})
			if !r.Valid || r.Verdict != "VALID" {
				for _, c := range r.Checks {
					t.Logf("%s %s %s %v", c.Status, c.Name, c.Message, c.Details)
				}
				t.Fatalf("verdict %s", r.Verdict)
			}
		})
	}
}

// Compact or indented, the same document verifies: signatures cover the
// canonical form, not the bytes on disk.
func TestWhitespaceIndependent(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, records(3, vpec.Execution), nil)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(m)
	if r := verifyDoc(t, compact, verify.Options{Trust: f.trust}); !r.Valid {
		t.Fatalf("compact form: %s", r.Verdict)
	}
}

func TestMissingTrust(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, records(2, vpec.Execution), nil)
	if r, err := verify.Verify(doc, verify.Options{}); r != nil || !errors.Is(err, verify.ErrOptions) {
		t.Fatalf("no trust: %v, %v; want no report and ErrOptions", r, err)
	}
	keysOnly := signing.NewBundle()
	keysOnly.AddKey(f.signer.PublicKey())
	r := verifyDoc(t, doc, verify.Options{Trust: keysOnly})
	if r.Valid || r.Verdict != "UNVERIFIED — TSA ROOT MISSING" {
		t.Fatalf("no TSA root: verdict %s", r.Verdict)
	}
}

// BenchmarkVerify10k measures in-process verification of a 10,000-record
// VPEC as the service writes it (each record in its canonical form);
// ns/record is the per-record cost.
func BenchmarkVerify10k(b *testing.B) {
	l, err := testvectors.LargeVPEC(b.TempDir(), 10000)
	if err != nil {
		b.Fatal(err)
	}
	benchVerify(b, l.Doc, l.Trust)
}

// BenchmarkVerify10kIndented is BenchmarkVerify10k on the same VPEC
// indented throughout (records not in canonical form: each is encoded).
func BenchmarkVerify10kIndented(b *testing.B) {
	l, err := testvectors.LargeVPEC(b.TempDir(), 10000)
	if err != nil {
		b.Fatal(err)
	}
	benchVerify(b, l.Indented, l.Trust)
}

// BenchmarkVerify10kOwned is BenchmarkVerify10k as svc verify runs it: the
// document handed over (Options.Owned), its records read in place. Each
// round verifies a fresh copy, made outside the timer.
func BenchmarkVerify10kOwned(b *testing.B) {
	l, err := testvectors.LargeVPEC(b.TempDir(), 10000)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(l.Doc)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		doc := bytes.Clone(l.Doc)
		b.StartTimer()
		r, err := verify.Verify(doc, verify.Options{Trust: l.Trust, Owned: true})
		if err != nil {
			b.Fatal(err)
		}
		if !r.Valid {
			b.Fatalf("verdict %s", r.Verdict)
		}
	}
}

func benchVerify(b *testing.B, doc []byte, trust *signing.Bundle) {
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := verify.Verify(doc, verify.Options{Trust: trust})
		if err != nil {
			b.Fatal(err)
		}
		if !r.Valid {
			b.Fatalf("verdict %s", r.Verdict)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/record")
}

func timeNow() time.Time { return time.Now() }
