package vpec_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/vpec"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// TestZKBelowThreshold: below_threshold_check records verify with their
// own entry; read as threshold_check, flipped, or under the
// threshold_check key they fail; its statement fields follow the schema.
func TestZKBelowThreshold(t *testing.T) {
	f := newZKFixture(t)
	all := f.verifier(f.entries[conditions.Threshold], f.entries[conditions.Truncation], f.entries[conditions.BelowThreshold])
	pass, fail := f.condRecord(t, conditions.BelowThreshold, 499, 500), f.condRecord(t, conditions.BelowThreshold, 500, 500)
	if pass.CheckResult != vpec.ResultPass || fail.CheckResult != vpec.ResultFail {
		t.Fatalf("below 499/500 %s, 500/500 %s", pass.CheckResult, fail.CheckResult)
	}
	doc := f.issueRecs(t, pass, fail)
	rep, err := vpec.Verify(doc, vpec.Options{Trust: f.trust, Proofs: all})
	if err != nil || !strings.HasPrefix(rep.Check(vpec.CheckZK).Message, "ZK proofs valid (2 proofs") {
		t.Fatalf("verify: %v\n%s", err, dump(rep))
	}
	for _, tc := range []struct {
		name, want string
		mut        func(r *vpec.Record)
	}{
		{"read as at-or-above", "circuit mismatch", func(r *vpec.Record) { r.ZKProof.Circuit = vpec.CircuitThreshold }},
		{"under the at-or-above key", "circuit mismatch", func(r *vpec.Record) { r.ZKProof.CircuitID = f.keys[conditions.Threshold].CircuitID }},
		{"at-or-above name and key", "groth16 verify", func(r *vpec.Record) {
			r.ZKProof.Circuit, r.ZKProof.CircuitID = vpec.CircuitThreshold, f.keys[conditions.Threshold].CircuitID
			r.CheckResult = vpec.ResultPass // 500 >= 500 would pass at or above
		}},
		{"flipped", "groth16 verify", func(r *vpec.Record) { r.CheckResult = vpec.ResultPass }},
	} {
		r := fail
		z := *fail.ZKProof
		r.ZKProof = &z
		tc.mut(&r)
		rep, err := vpec.Verify(f.issueRecs(t, r), vpec.Options{Trust: f.trust, Proofs: all})
		if c := rep.Check(vpec.CheckZK); err == nil || c.Code != "ZK PROOF INVALID" || !strings.Contains(c.Message, tc.want) {
			t.Errorf("%s: %v %+v", tc.name, err, c)
		}
	}
	for name, mut := range map[string]func(r *vpec.Record){
		"missing threshold": func(r *vpec.Record) { r.ZKProof.Threshold = nil },
		"max_tokens":        func(r *vpec.Record) { m := int64(3); r.ZKProof.MaxTokens = &m },
		"execution level":   func(r *vpec.Record) { r.ProofLevel = vpec.Execution },
	} {
		r := pass
		z := *pass.ZKProof
		r.ZKProof = &z
		mut(&r)
		if err := r.Validate(); !errors.Is(err, vpec.ErrInvalidRecord) {
			t.Errorf("%s: Validate %v", name, err)
		}
	}
}

// TestZKDecompositionLink: a proved condition of a decomposition stage
// names the input of an inference record of its check; one without
// (another input, no link) fails the ZK proofs check, while the same
// record outside a decomposition (no stage_type) needs no link.
func TestZKDecompositionLink(t *testing.T) {
	f := newZKFixture(t)
	all := f.verifier(f.entries[conditions.Truncation])
	in := "sha256:" + strings.Repeat("ab", 32)
	inference := vpec.Record{RecordID: vpec.NewID("rec_"), Check: "pii", ManifestID: "sha256:" + strings.Repeat("ab", 32),
		CheckResult: vpec.ResultPass, ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256", CommitmentHash: in,
		Visibility: vpec.Opaque, RecordedAt: "2026-11-22T00:00:00.000Z", StageType: vpec.StageOpenSourceML, StagePart: vpec.StagePartInference}
	cond := func(details map[string]any, stage string) vpec.Record {
		r := f.condRecord(t, conditions.Truncation, 12, 32)
		r.Check, r.StageType, r.StagePart, r.Details = "pii:truncation_check", stage, vpec.StagePartPre, details
		return r
	}
	for _, tc := range []struct {
		name, want string
		recs       []vpec.Record
	}{
		{"linked", "", []vpec.Record{cond(map[string]any{"input_commitment": in, "max_tokens": 32}, vpec.StageOpenSourceML), inference}},
		{"standalone", "", []vpec.Record{cond(nil, "")}},
		{"no link", "condition not linked", []vpec.Record{cond(map[string]any{"max_tokens": 32}, vpec.StageOpenSourceML), inference}},
		{"another input", "condition not linked", []vpec.Record{cond(map[string]any{"input_commitment": "sha256:" + strings.Repeat("cd", 32)}, vpec.StageOpenSourceML), inference}},
		{"another stage type", "condition not linked", []vpec.Record{cond(map[string]any{"input_commitment": in}, vpec.StageBoundCommittedInference), inference}},
		{"another max_tokens", "max_tokens mismatch", []vpec.Record{cond(map[string]any{"input_commitment": in, "max_tokens": 512}, vpec.StageOpenSourceML), inference}},
	} {
		rep, err := vpec.Verify(f.issueRecs(t, tc.recs...), vpec.Options{Trust: f.trust, Proofs: all})
		c := rep.Check(vpec.CheckZK)
		if tc.want == "" {
			if c.Status != vpec.Pass {
				t.Errorf("%s: %v %+v", tc.name, err, c)
			}
			continue
		}
		if c.Code != "ZK PROOF INVALID" || !strings.Contains(c.Message, tc.want) {
			t.Errorf("%s: %v %+v", tc.name, err, c)
		}
	}
}

// TestQuantizeProbability: vpec's copy of the fixed-point score is
// conditions.QuantizeScore.
func TestQuantizeProbability(t *testing.T) {
	for _, p := range []float64{0, 0x1p-32, 0.3, 0.5, math.Nextafter(0.5, 0), math.Nextafter(1, 0), 1, math.NaN(), -1, 2, 1e-300} {
		a, aok := vpec.QuantizeProbability(p)
		b, err := conditions.QuantizeScore(p)
		if aok != (err == nil) || (aok && a != int64(b)) {
			t.Errorf("Q(%v): vpec %d %v, conditions %d %v", p, a, aok, b, err)
		}
	}
}
