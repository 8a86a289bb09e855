package verify_test

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// clockFixture is a fixture whose TSA runs on a clock the test moves.
func clockFixture(t *testing.T) (*fixture, *testClock) {
	t.Helper()
	clk := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	pub, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := signing.NewSigner(priv)
	tsa, err := timestamp.InitAuthority(t.TempDir()+"/tsa", timestamp.AuthorityOptions{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	b := signing.NewBundle()
	b.AddKey(pub)
	b.AddRoot(tsa.Root())
	return &fixture{s, tsa, b}, clk
}

// seal issues recs and gaps at the clock's time (issued_at and timestamp).
func (f *fixture) sealAt(t *testing.T, clk *testClock, recs []vpec.Record, gaps []vpec.Gap) []byte {
	t.Helper()
	v := &vpec.VPEC{VPECID: names.NewID("vpec_"), RunID: "run_rules", WorkflowID: "wf", OrgID: "org_1",
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_abc", Records: recs, Gaps: gaps, IssuedAt: vpec.FormatTime(clk.now())}
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

// session gives rec a check session whose open and close tokens are
// stamped at the given offsets from the clock's current time.
func session(t *testing.T, f *fixture, clk *testClock, rec *vpec.Record, open, close time.Duration) {
	t.Helper()
	base := clk.now()
	defer clk.set(base)
	id := names.NewID("chk_")
	stamp := func(at time.Duration, digest []byte) string {
		clk.set(base.Add(at))
		tok, err := f.tsa.Timestamp(context.Background(), digest)
		if err != nil {
			t.Fatal(err)
		}
		return b64(tok)
	}
	rec.CheckSession = &vpec.CheckSession{SessionID: id,
		CheckOpenTST:  stamp(open, issue.CheckOpenImprint(id)),
		CheckCloseTST: stamp(close, issue.CheckCloseImprint(id, rec.CommitmentHash))}
}

// D7: nothing in a VPEC may be dated after its own timestamp (plus
// MaxClockSkew), no gap before the run, no session may close before it
// opens; the check that fails is "time" (TIME VIOLATION).
func TestTimeRules(t *testing.T) {
	f, clk := clockFixture(t)
	at := func(d time.Duration) string { return vpec.FormatTime(clk.now().Add(d)) }
	gap := func(ts string) []vpec.Gap {
		return []vpec.Gap{{GapID: "gap_1", GapType: gap.SystemUnavailable, Severity: gap.High, Timestamp: ts}}
	}
	for _, tc := range []struct {
		name  string
		edit  func(recs []vpec.Record) []vpec.Gap
		valid bool
	}{
		{"in order", func(r []vpec.Record) []vpec.Gap { return nil }, true},
		{"record 4 min ahead (within skew)", func(r []vpec.Record) []vpec.Gap { r[1].RecordedAt = at(4 * time.Minute); return nil }, true},
		{"record 30 days ahead", func(r []vpec.Record) []vpec.Gap { r[1].RecordedAt = at(30 * 24 * time.Hour); return nil }, false},
		{"record 6 min ahead", func(r []vpec.Record) []vpec.Gap { r[0].RecordedAt = at(6 * time.Minute); return nil }, false},
		{"gap at close", func(r []vpec.Record) []vpec.Gap { return gap(at(0)) }, true},
		{"gap dated 1970", func(r []vpec.Record) []vpec.Gap { return gap("1970-01-01T00:00:00Z") }, false},
		{"gap an hour ahead", func(r []vpec.Record) []vpec.Gap { return gap(at(time.Hour)) }, false},
		{"gap before the first record", func(r []vpec.Record) []vpec.Gap { return gap(at(-2 * time.Hour)) }, false},
		{"session in order", func(r []vpec.Record) []vpec.Gap { session(t, f, clk, &r[0], -time.Minute, -30*time.Second); return nil }, true},
		{"session closed an hour after the timestamp", func(r []vpec.Record) []vpec.Gap { session(t, f, clk, &r[0], -time.Minute, time.Hour); return nil }, false},
		{"session closes before it opens", func(r []vpec.Record) []vpec.Gap { session(t, f, clk, &r[0], -time.Minute, -2*time.Minute); return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := records(2, vpec.Execution)
			for i := range recs {
				recs[i].RecordedAt = at(-time.Hour)
			}
			gaps := tc.edit(recs)
			r := verifyDoc(t, f.sealAt(t, clk, recs, gaps), verify.Options{Trust: f.trust})
			c := r.Check(verify.CheckTime)
			if r.Valid != tc.valid || (tc.valid && c.Status != verify.Pass) || (!tc.valid && (c.Status != verify.Fail || c.Code != "TIME VIOLATION")) {
				for _, c := range r.Checks {
					t.Logf("%s %s %s %v", c.Status, c.Name, c.Message, c.Details)
				}
				t.Fatalf("verdict %s, time check %s, want valid=%v", r.Verdict, c.Status, tc.valid)
			}
		})
	}
}

// TestTraceModes: a Bounded Inference record's trace_mode is full,
// production or residual; any other is a schema failure naming it.
func TestTraceModes(t *testing.T) {
	f, clk := clockFixture(t)
	for _, tc := range []struct {
		mode string
		ok   bool
	}{{profile.TraceFull, true}, {profile.TraceProduction, true}, {profile.TraceResidual, true}, {"fast", false}, {"Residual", false}} {
		t.Run(tc.mode, func(t *testing.T) {
			recs := records(1, vpec.OperatorBound)
			recs[0].StageType, recs[0].StagePart = stage.BoundCommittedInference, stage.PartInference
			recs[0].BoundedInference = &vpec.BoundedInference{ProfileID: "acme/pii-class/v1.0.0", GPUClass: "cpu",
				ONNXModelHash: commitment.String([]byte("m")), TraceMode: tc.mode, OperatorCount: 12, MerkleRoot: commitment.String([]byte("t"))}
			r := verifyDoc(t, f.sealAt(t, clk, recs, nil), verify.Options{Trust: f.trust})
			c := r.Check(verify.CheckSchema)
			if (c.Status == verify.Pass) != tc.ok || (!tc.ok && !strings.Contains(c.Message, "trace_mode")) {
				t.Fatalf("trace_mode %q: schema %s %q", tc.mode, c.Status, c.Message)
			}
		})
	}
}

// D6: a mathematical claim without a proof stands only on a pre/post-
// condition record of a bound_committed_inference stage whose
// operator_bound inference record is in the same VPEC: of its check (the
// condition's check without ":<part>") and on its input (the same
// commitment_hash). Found: any operator_bound record of any check was
// taken as the evidence.
func TestEvidence(t *testing.T) {
	f, clk := clockFixture(t)
	decomposition := func(anchor bool, edit func(recs []vpec.Record)) []vpec.Record {
		recs := records(3, vpec.Mathematical)
		for i, part := range []string{stage.PartPre, stage.PartInference, stage.PartPost} {
			recs[i].StageType, recs[i].StagePart = stage.BoundCommittedInference, part
			recs[i].CommitmentHash = commitment.String([]byte("the input"))
		}
		recs[0].Check, recs[1].Check, recs[2].Check = "pii:tokenization", "pii", "pii:threshold_check"
		recs[1].ProofLevel = vpec.Execution
		if anchor {
			recs[1].ProofLevel = vpec.OperatorBound
			recs[1].BoundedInference = &vpec.BoundedInference{ProfileID: "acme/pii-class/v1.0.0", GPUClass: "cpu",
				ONNXModelHash: commitment.String([]byte("m")), TraceMode: profile.TraceProduction, OperatorCount: 9, MerkleRoot: commitment.String([]byte("t"))}
		}
		if edit != nil {
			edit(recs)
		}
		return recs
	}
	for _, tc := range []struct {
		name string
		recs []vpec.Record
		ok   bool
	}{
		{"decomposition with its operator_bound record", decomposition(true, nil), true},
		{"pre/post without an operator_bound record", decomposition(false, nil), false},
		{"plain mathematical claim", records(2, vpec.Mathematical), false},
		{"execution needs nothing", records(2, vpec.Execution), true},
		{"condition of another check", decomposition(true, func(r []vpec.Record) { r[2].Check = "toxicity:threshold_check" }), false},
		{"condition of another input", decomposition(true, func(r []vpec.Record) { r[2].CommitmentHash = commitment.String([]byte("other")) }), false},
		{"condition without a part", decomposition(true, func(r []vpec.Record) { r[2].Check = "pii" }), false},
		{"condition named with a slash", decomposition(true, func(r []vpec.Record) { r[0].Check = "pii/tokenization" }), false},
		{"inference of the check at execution", decomposition(true, func(r []vpec.Record) {
			r[1].ProofLevel, r[1].BoundedInference = vpec.Execution, nil
		}), false},
		{"nested part names", decomposition(true, func(r []vpec.Record) {
			r[1].Check, r[0].Check, r[2].Check = "a:b", "a:b:tokenization", "a:b:threshold_check"
		}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := verifyDoc(t, f.sealAt(t, clk, tc.recs, nil), verify.Options{Trust: f.trust})
			c := r.Check(verify.CheckEvidence)
			if (c.Status == verify.Pass) != tc.ok || (!tc.ok && (r.Valid || c.Code != "CLAIM WITHOUT EVIDENCE")) {
				t.Fatalf("evidence %s %q, verdict %s; want ok=%v", c.Status, c.Message, r.Verdict, tc.ok)
			}
		})
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
