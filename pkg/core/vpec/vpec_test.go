package vpec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
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
			RecordID: vpec.NewID("rec_"), Sequence: int64(i + 1), Check: fmt.Sprintf("check_%d", i%7),
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
	v := &vpec.VPEC{VPECID: vpec.NewID("vpec_"), RunID: vpec.NewID("run_"), WorkflowID: "wf", OrgID: "org_1",
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", Records: recs, Gaps: gaps, IssuedAt: vpec.FormatTime(timeNow())}
	if _, err := vpec.Chain(vpec.Genesis(v.RunID), v.Records); err != nil {
		t.Fatal(err)
	}
	jcs, err := vpec.RecordsJCS(v.Records)
	if err != nil {
		t.Fatal(err)
	}
	vpec.Finish(v, jcs)
	if err := vpec.Seal(context.Background(), v, f.signer, f.tsa); err != nil {
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
			r := verify(t, doc, vpec.Options{Trust: f.trust})
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
	if r := verify(t, compact, vpec.Options{Trust: f.trust}); !r.Valid {
		t.Fatalf("compact form: %s", r.Verdict)
	}
}

func TestMissingTrust(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, records(2, vpec.Execution), nil)
	if r, err := vpec.Verify(doc, vpec.Options{}); r != nil || !errors.Is(err, vpec.ErrOptions) {
		t.Fatalf("no trust: %v, %v; want no report and ErrOptions", r, err)
	}
	keysOnly := signing.NewBundle()
	keysOnly.AddKey(f.signer.PublicKey())
	r := verify(t, doc, vpec.Options{Trust: keysOnly})
	if r.Valid || r.Verdict != "UNVERIFIED — TSA ROOT MISSING" {
		t.Fatalf("no TSA root: verdict %s", r.Verdict)
	}
}

func TestSummarize(t *testing.T) {
	rec := func(l vpec.ProofLevel, res vpec.CheckResult) vpec.Record {
		return vpec.Record{ProofLevel: l, CheckResult: res}
	}
	cases := []struct {
		name    string
		records []vpec.Record
		gaps    int
		floor   vpec.ProofLevel
		surface float64
		passed  int64
		failed  int64
		clean   bool
	}{
		{"empty", nil, 0, vpec.Attestation, 0, 0, 0, true},
		{"all math", []vpec.Record{rec(vpec.Mathematical, vpec.ResultPass)}, 0, vpec.Mathematical, 1, 1, 0, true},
		{"bounded decomposition", []vpec.Record{
			rec(vpec.Mathematical, vpec.ResultPass), rec(vpec.Mathematical, vpec.ResultPass), rec(vpec.Mathematical, vpec.ResultPass),
			rec(vpec.OperatorBound, vpec.ResultPass), rec(vpec.Mathematical, vpec.ResultPass), rec(vpec.Mathematical, vpec.ResultFail),
		}, 0, vpec.OperatorBound, 1, 5, 1, true},
		{"witnessed is weaker than execution", []vpec.Record{rec(vpec.Execution, vpec.ResultPass), rec(vpec.Witnessed, vpec.ResultSkipped)}, 0, vpec.Witnessed, 0, 1, 0, true},
		{"thirds", []vpec.Record{rec(vpec.Mathematical, vpec.ResultPass), rec(vpec.Execution, vpec.ResultError), rec(vpec.Attestation, vpec.ResultOverride)}, 1, vpec.Attestation, 0.3333, 1, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gaps := make([]vpec.Gap, c.gaps)
			s := vpec.Summarize(c.records, gaps, true)
			if s.ProofLevelFloor != c.floor || s.ProvableSurface != c.surface || s.ChecksPassed != c.passed || s.ChecksFailed != c.failed || s.IsClean != c.clean {
				t.Fatalf("got %+v", s)
			}
		})
	}
	s := vpec.Summarize(cases[2].records, nil, true)
	if s.ProvableSurfaceBreakdown["mathematical"] != 0.8333 || s.ProvableSurfaceBreakdown["bounded_inference"] != 0.1667 {
		t.Errorf("breakdown %v", s.ProvableSurfaceBreakdown)
	}
}

func TestShare(t *testing.T) {
	for _, c := range []struct {
		n, d int64
		want float64
	}{{0, 0, 0}, {1, 3, 0.3333}, {2, 3, 0.6667}, {1, 8, 0.125}, {1, 20000, 0.0001}, {1, 20001, 0}, {5, 5, 1}} {
		if got := vpec.Share(c.n, c.d); got != c.want {
			t.Errorf("Share(%d,%d) = %v, want %v", c.n, c.d, got, c.want)
		}
	}
}

func TestVerifyChainBreaks(t *testing.T) {
	run := "run_x"
	recs := records(5, vpec.Execution)
	vpec.Chain(vpec.Genesis(run), recs)
	jcs, _ := vpec.RecordsJCS(recs)
	if b := vpec.VerifyChain(run, recs, jcs); len(b) != 0 {
		t.Fatalf("intact chain reports %v", b)
	}
	if b := vpec.VerifyChain("run_y", recs, jcs); len(b) == 0 || b[0].Sequence != 1 {
		t.Fatalf("another run's genesis: %v", b)
	}
	skipped := append(append([]vpec.Record{}, recs[:2]...), recs[4])
	sj := append(append([][]byte{}, jcs[:2]...), jcs[4])
	b := vpec.VerifyChain(run, skipped, sj)
	if len(b) != 1 || b[0].Sequence != 5 || b[0].MissingFrom != 3 || b[0].MissingTo != 4 {
		t.Fatalf("skip: %+v", b)
	}
	changed := append([]vpec.Record{}, recs...)
	changed[1].Check = "other"
	cj, _ := vpec.RecordsJCS(changed)
	if b := vpec.VerifyChain(run, changed, cj); len(b) != 1 || b[0].Sequence != 2 {
		t.Fatalf("changed record: %+v", b)
	}
}

// BenchmarkVerify10k measures in-process verification of a 10,000-record
// VPEC; ns/record is the per-record cost.
func BenchmarkVerify10k(b *testing.B) {
	l, err := testvectors.LargeVPEC(b.TempDir(), 10000)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(l.Doc)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := vpec.Verify(l.Doc, vpec.Options{Trust: l.Trust}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/record")
}

func timeNow() time.Time { return time.Now() }
