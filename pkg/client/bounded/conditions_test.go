//go:build cgo

package bounded_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/client/zkprove"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// publishCondition makes dev-setup keys of a condition circuit, publishes
// the signed entry on the service and returns a prover for it and the
// entry.
func (s *service) publishCondition(t testing.TB, kind conditions.Kind) (*zkprove.Condition, []byte) {
	t.Helper()
	k, err := zk.DevSetupCondition(kind)
	if err != nil {
		t.Fatal(err)
	}
	e, err := zk.NewEntry(k, "", zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("ceremony")), Contributors: []string{"acme-ops", "auditor-llp"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := server.PublishCircuit(context.Background(), s.st, s.mat.Signer, "test", e, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pk, err := zk.MarshalProvingKey(k.PK)
	if err != nil {
		t.Fatal(err)
	}
	c, err := zkprove.NewCondition(doc, pk, s.mat.Trust)
	if err != nil {
		t.Fatal(err)
	}
	return c, doc
}

// TestProvedConditions: a Bounded Inference check beside an operator_bound
// inference, with truncation_check and below_threshold_check circuits
// published, records both conditions with Groth16 proofs; the VPEC
// verifies VALID with "ZK proofs valid"; the openings the client returns
// open the commitments; a cut input gives a valid proof of fail; and each
// tampering fails the ZK proofs check naming the record.
func TestProvedConditions(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{})
	svc := newService(t)
	ctx := context.Background()
	p := svc.pipeline(t)
	prof, err := calibration.Calibrate(m, piiMeta, calibration.Options{Passes: 12})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Publish(ctx, svc.st, svc.mat.Signer, "test", prof, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	trunc, tdoc := svc.publishCondition(t, conditions.Truncation)
	below, bdoc := svc.publishCondition(t, conditions.BelowThreshold)
	above, adoc := svc.publishCondition(t, conditions.Threshold)

	if _, err := bounded.New(p, m, bounded.Options{Conditions: []*zkprove.Condition{above}}); !errors.Is(err, bounded.ErrConditions) {
		t.Fatalf("a threshold_check (at or above) prover: %v", err)
	}
	if _, err := bounded.New(p, m, bounded.Options{Conditions: []*zkprove.Condition{trunc, trunc}}); !errors.Is(err, bounded.ErrConditions) {
		t.Fatalf("two truncation provers: %v", err)
	}
	if _, err := bounded.New(p, m, bounded.Options{Threshold: 1e-12}); err == nil || !strings.Contains(err.Error(), "below 2^-32") {
		t.Fatalf("a threshold below the score's resolution: %v", err)
	}
	profDir := t.TempDir()
	newC := func(threshold float64) *bounded.Classifier {
		c, err := bounded.New(p, m, bounded.Options{Trust: svc.mat.Trust, ProfileDir: profDir, Threshold: threshold, Conditions: []*zkprove.Condition{trunc, below}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	lenient, strict := newC(1), newC(0x1p-32)

	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	short := []byte("Jane asks for a refill.")
	long := []byte(strings.Repeat("refill please ", 60))
	type want struct {
		trunc, thr vpec.CheckResult
	}
	var results []*bounded.Result
	var wants []want
	for i, tc := range []struct {
		c     *bounded.Classifier
		input []byte
		want  want
	}{
		{lenient, short, want{vpec.ResultPass, vpec.ResultPass}},
		{lenient, long, want{vpec.ResultFail, vpec.ResultPass}},
		{strict, short, want{vpec.ResultPass, vpec.ResultFail}},
	} {
		res, err := tc.c.Check(ctx, run, "pii", "manifest-1", tc.input)
		if err != nil {
			t.Fatal(err)
		}
		if res.ProofLevel != vpec.OperatorBound || len(res.Conditions) != 2 {
			t.Fatalf("check %d: level %s, %d proved conditions (%s)", i, res.ProofLevel, len(res.Conditions), res.ProfileNote)
		}
		tr, th := res.Records[2], res.Records[4]
		if tc.want.thr != res.Verdict || tr.ProofLevel != vpec.Mathematical || th.ProofLevel != vpec.Mathematical ||
			!strings.HasPrefix(tr.CommitmentHash, "poseidon2:") || !strings.HasPrefix(th.CommitmentHash, "poseidon2:") {
			t.Fatalf("check %d: truncation %+v, threshold %+v, verdict %s", i, tr, th, res.Verdict)
		}
		wants = append(wants, tc.want)
		// The openings open the commitments: the count before truncation
		// and the quantised score.
		for _, o := range res.Conditions {
			var s vpec.CheckResult
			switch o.Circuit {
			case conditions.Truncation:
				s = tc.want.trunc
				if n := m.Tokenizer.Count(string(tc.input)); o.Value != uint32(n) || int(o.Bound) != m.SeqLen || (n > m.SeqLen) != res.Trace.Truncated {
					t.Fatalf("check %d: truncation opening %+v, count %d, max %d", i, o, n, m.SeqLen)
				}
			case conditions.BelowThreshold:
				s = tc.want.thr
				if q, _ := conditions.QuantizeScore(res.Score); o.Value != q {
					t.Fatalf("check %d: score opening %d, Q(score) %d", i, o.Value, q)
				}
			}
			cm, err := conditions.Commit(o.Circuit, o.Value, o.Salt)
			if err != nil || "poseidon2:"+hexs(cm[:]) != o.Commitment || (conditions.Holds(o.Circuit, o.Value, o.Bound) != (s == vpec.ResultPass)) {
				t.Fatalf("check %d: opening %+v does not open its record (%v)", i, o, err)
			}
		}
		results = append(results, res)
	}
	if results[0].Conditions[0].Salt == results[2].Conditions[0].Salt {
		t.Fatal("the same salt twice")
	}
	// The service refuses a proof whose record says the opposite.
	cp, _, err := below.Prove(10, 20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.RecordCommitted(ctx, "pii:threshold_check", "manifest-1", vpec.ResultFail, cp.CommitmentHash, client.WithZKProof(cp.ZKProof))
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 422 || ae.Code != "proof_invalid" {
		t.Fatalf("a flipped proved record: %v", err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	verifyDoc := func(raw []byte) *verify.Report {
		t.Helper()
		pset := profile.NewSet()
		pset.AddDir(profDir)
		set := zk.NewSet()
		for _, d := range [][]byte{tdoc, bdoc, adoc} {
			if _, err := set.Add(d); err != nil {
				t.Fatal(err)
			}
		}
		rep, _ := verify.Verify(raw, verify.Options{Trust: svc.mat.Trust, Profiles: pset, Proofs: &zk.Verifier{Trust: svc.mat.Trust, Circuits: set}})
		if rep == nil {
			t.Fatal("no report")
		}
		return rep
	}
	rep := verifyDoc(v.Raw)
	if c := rep.Check(verify.CheckZK); !rep.Valid || !strings.HasPrefix(c.Message, "ZK proofs valid (6 proofs") || !strings.Contains(c.Message, "acme-ops, auditor-llp") {
		t.Fatalf("verdict %s; zk check %q; first failure %+v", rep.Verdict, c.Message, rep.FirstFailure())
	}
	if rep.ProofLevelFloor != vpec.OperatorBound {
		t.Fatalf("floor %s", rep.ProofLevelFloor)
	}

	// Without a profile for the GPU class the inference falls back to
	// open_source_ml at execution level; the conditions are still proved,
	// mathematical on their own evidence, and linked.
	fb, err := bounded.New(p, m, bounded.Options{Trust: svc.mat.Trust, ProfileDir: profDir, GPUClass: "a100", Conditions: []*zkprove.Condition{trunc, below}})
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	runFB, _ := p.Open(ctx, "")
	if res, err := fb.Check(ctx, runFB, "pii", "manifest-1", short); err != nil || res.StageType != stage.OpenSourceML || len(res.Conditions) != 2 {
		t.Fatalf("fallback: %+v %v", res, err)
	}
	vFB, err := runFB.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep := verifyDoc(vFB.Raw); !rep.Valid || !strings.HasPrefix(rep.Check(verify.CheckZK).Message, "ZK proofs valid (2 proofs") || len(vFB.VPEC.Gaps) != 1 {
		t.Fatalf("fallback VPEC: %s %+v, gaps %+v", rep.Verdict, rep.FirstFailure(), vFB.VPEC.Gaps)
	}

	// Tampering: each change is re-chained and re-signed by the service
	// key, so only the proofs and their links can catch it.
	var doc vpec.VPEC
	if _, err := document.Parse(v.Raw, &doc); err != nil {
		t.Fatal(err)
	}
	// A condition record of the same check on an input this VPEC does not hold.
	run2, _ := p.Open(ctx, "")
	_, err = lenient.Check(ctx, run2, "pii", "manifest-1", []byte("another note entirely"))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := run2.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var doc2 vpec.VPEC
	if _, err := document.Parse(v2.Raw, &doc2); err != nil {
		t.Fatal(err)
	}
	for i, w := range wants {
		if r := doc.Records[6*i+2]; r.CheckResult != w.trunc || r.Details["input_commitment"] != doc.Records[6*i+3].CommitmentHash {
			t.Fatalf("check %d: truncation record %+v", i, r)
		}
		listed, _ := doc.Records[6*i+3].Details["condition_commitments"].(map[string]any)
		if listed["truncation_check"] != doc.Records[6*i+2].CommitmentHash || listed["threshold_check"] != doc.Records[6*i+4].CommitmentHash ||
			doc.Records[6*i+3].Details["gpu_class"] != "cpu" {
			t.Fatalf("check %d: inference details %v", i, doc.Records[6*i+3].Details)
		}
		if r := doc.Records[6*i+4]; r.CheckResult != w.thr || r.OutputCommitment != doc.Records[6*i+3].OutputCommitment {
			t.Fatalf("check %d: threshold record %+v", i, r)
		}
	}
	aboveEntry, _ := zk.ParseEntry(adoc)
	thr := func(recs []vpec.Record, i int) *vpec.Record { return &recs[6*i+4] }
	for _, tc := range []struct {
		name, want string
		mutate     func(recs []vpec.Record)
	}{
		{"flipped result", "pii:threshold_check", func(r []vpec.Record) { thr(r, 0).CheckResult = vpec.ResultFail }},
		{"flipped truncation result", "pii:truncation_check", func(r []vpec.Record) { r[6+2].CheckResult = vpec.ResultPass }},
		{"other threshold in the proof", "pii:threshold_check", func(r []vpec.Record) { t := *thr(r, 0).ZKProof.Threshold - 1; thr(r, 0).ZKProof.Threshold = &t }},
		{"other threshold in the details", "threshold mismatch", func(r []vpec.Record) { thr(r, 0).Details["threshold"] = 0.5 }},
		{"other max_tokens in the details", "max_tokens mismatch", func(r []vpec.Record) { r[2].Details["max_tokens"] = 512 }},
		{"proof moved to another record", "pii:threshold_check", func(r []vpec.Record) { thr(r, 0).ZKProof = thr(r, 2).ZKProof }},
		{"swapped commitment", "pii:threshold_check", func(r []vpec.Record) { thr(r, 0).CommitmentHash = thr(r, 1).CommitmentHash }},
		{"condition record of another input", "condition not linked", func(r []vpec.Record) {
			o := doc2.Records[4]
			t := thr(r, 0)
			t.CommitmentHash, t.ZKProof, t.Details, t.CheckResult = o.CommitmentHash, o.ZKProof, o.Details, o.CheckResult
		}},
		{"link removed", "condition not linked", func(r []vpec.Record) { delete(r[2].Details, "input_commitment") }},
		{"replaced by another input's condition", "carried by 0", func(r []vpec.Record) {
			o := r[6+2] // the cut input's truncation_check (fail), over the first's (pass)
			r[2].CommitmentHash, r[2].ZKProof, r[2].Details, r[2].CheckResult = o.CommitmentHash, o.ZKProof, o.Details, o.CheckResult
		}},
		{"proof stripped", "carried by 0", func(r []vpec.Record) {
			r[2].ZKProof, r[2].CommitmentAlgorithm, r[2].CommitmentHash = nil, "sha256", r[3].CommitmentHash
		}},
		{"below read as at-or-above", "circuit mismatch", func(r []vpec.Record) { thr(r, 0).ZKProof.Circuit = zkverify.CircuitThreshold }},
		{"below proof under the at-or-above key", "groth16 verify", func(r []vpec.Record) {
			z := thr(r, 2).ZKProof // a fail below: would read as a pass at or above
			z.Circuit, z.CircuitID = zkverify.CircuitThreshold, aboveEntry.CircuitID
			thr(r, 2).CheckResult = vpec.ResultPass
		}},
	} {
		var d vpec.VPEC
		if _, err := document.Parse(v.Raw, &d); err != nil {
			t.Fatal(err)
		}
		tc.mutate(d.Records)
		raw := reseal(t, svc, &d)
		rep := verifyDoc(raw)
		c := rep.Check(verify.CheckZK)
		if rep.Valid || c.Status != verify.Fail || !strings.Contains(strings.Join(append([]string{c.Message}, c.Details...), "\n"), tc.want) {
			t.Errorf("%s: verdict %s, zk check %q %v", tc.name, rep.Verdict, c.Message, c.Details)
		}
		t.Logf("%s: %s", tc.name, c.Message)
	}
}

// reseal re-chains a mutated VPEC's records, recomputes its Merkle root
// and signs it again with the service's key and TSA.
func reseal(t *testing.T, s *service, d *vpec.VPEC) []byte {
	t.Helper()
	if _, err := issue.Chain(vpec.Genesis(d.RunID), d.Records); err != nil {
		t.Fatal(err)
	}
	d.MerkleRoot = vpec.MerkleRoot(d.Records)
	if err := issue.Seal(context.Background(), d, s.mat.Signer, s.mat.TSA); err != nil {
		t.Fatal(err)
	}
	raw, err := document.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func hexs(b []byte) string { return hex.EncodeToString(b) }

// BenchmarkCheckConditions: one Bounded Inference check (generated
// bert-style model, production trace, six records on a loopback service)
// with its truncation and threshold conditions proved, against the same
// check unproved in the same run (docs/BENCHMARKS.md).
func BenchmarkCheckConditions(b *testing.B) {
	m, _ := ortest.Model(b, modelgen.Config{})
	svc := newService(b)
	ctx := context.Background()
	p := svc.pipeline(b)
	trunc, _ := svc.publishCondition(b, conditions.Truncation)
	below, _ := svc.publishCondition(b, conditions.BelowThreshold)
	input := []byte("Jane asks for a refill.")
	for _, bc := range []struct {
		name  string
		conds []*zkprove.Condition
	}{{"unproved", nil}, {"proved", []*zkprove.Condition{trunc, below}}} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := bounded.New(p, m, bounded.Options{Trust: svc.mat.Trust, Conditions: bc.conds})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			run, err := p.Open(ctx, "")
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := c.Check(ctx, run, "pii", "manifest-1", input)
				if err != nil || len(res.Conditions) != len(bc.conds) {
					b.Fatal(err)
				}
			}
		})
	}
}
