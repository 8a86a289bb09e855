package verify_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
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
	rep, err := verify.Verify(doc, verify.Options{Trust: f.trust, Proofs: all})
	if err != nil || !strings.HasPrefix(rep.Check(verify.CheckZK).Message, "ZK proofs valid (2 proofs") {
		t.Fatalf("verify: %v\n%s", err, dump(rep))
	}
	for _, tc := range []struct {
		name, want string
		mut        func(r *vpec.Record)
	}{
		{"read as at-or-above", "circuit mismatch", func(r *vpec.Record) { r.ZKProof.Circuit = zkverify.CircuitThreshold }},
		{"under the at-or-above key", "circuit mismatch", func(r *vpec.Record) { r.ZKProof.CircuitID = f.keys[conditions.Threshold].CircuitID }},
		{"at-or-above name and key", "groth16 verify", func(r *vpec.Record) {
			r.ZKProof.Circuit, r.ZKProof.CircuitID = zkverify.CircuitThreshold, f.keys[conditions.Threshold].CircuitID
			r.CheckResult = vpec.ResultPass // 500 >= 500 would pass at or above
		}},
		{"flipped", "groth16 verify", func(r *vpec.Record) { r.CheckResult = vpec.ResultPass }},
	} {
		r := fail
		z := *fail.ZKProof
		r.ZKProof = &z
		tc.mut(&r)
		rep, err := verify.Verify(f.issueRecs(t, r), verify.Options{Trust: f.trust, Proofs: all})
		if c := rep.Check(verify.CheckZK); err == nil || c.Code != "ZK PROOF INVALID" || !strings.Contains(c.Message, tc.want) {
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
// names the input of an inference record of its check, which lists the
// condition's commitment back; a condition without that (another input,
// no link, not listed, replaced by another input's, listed but missing)
// fails the ZK proofs check, while the same record outside a
// decomposition (no stage_type) needs no link.
func TestZKDecompositionLink(t *testing.T) {
	f := newZKFixture(t)
	all := f.verifier(f.entries[conditions.Truncation])
	inA, inB := "sha256:"+strings.Repeat("ab", 32), "sha256:"+strings.Repeat("cd", 32)
	inference := func(in string, listed map[string]any) vpec.Record {
		r := vpec.Record{RecordID: names.NewID("rec_"), Check: "pii", ManifestID: "sha256:" + strings.Repeat("ab", 32),
			CheckResult: vpec.ResultPass, ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256", CommitmentHash: in,
			Visibility: vpec.Opaque, RecordedAt: "2026-11-22T00:00:00.000Z", StageType: stage.OpenSourceML, StagePart: stage.PartInference}
		if listed != nil {
			r.Details = map[string]any{"gpu_class": "cpu", "condition_commitments": listed}
		}
		return r
	}
	cond := func(tokens uint32, details map[string]any, stageType string) vpec.Record {
		r := f.condRecord(t, conditions.Truncation, tokens, 32)
		r.Check, r.StageType, r.StagePart, r.Details = "pii:truncation_check", stageType, stage.PartPre, details
		return r
	}
	a := cond(12, map[string]any{"input_commitment": inA, "max_tokens": 32}, stage.OpenSourceML)
	b := cond(40, map[string]any{"input_commitment": inB, "max_tokens": 32}, stage.OpenSourceML)
	listA, listB := map[string]any{"truncation_check": a.CommitmentHash}, map[string]any{"truncation_check": b.CommitmentHash}
	fresh := func(r vpec.Record, details map[string]any) vpec.Record {
		r.RecordID = names.NewID("rec_")
		if details != nil {
			r.Details = details
		}
		return r
	}
	bAsA := fresh(b, map[string]any{"input_commitment": inA, "max_tokens": 32})
	for _, tc := range []struct {
		name, want string
		recs       []vpec.Record
	}{
		{"linked", "", []vpec.Record{a, inference(inA, listA), b, inference(inB, listB)}},
		{"standalone", "", []vpec.Record{cond(12, nil, "")}},
		{"no link", "condition not linked", []vpec.Record{cond(12, map[string]any{"max_tokens": 32}, stage.OpenSourceML), inference(inA, listA)}},
		{"another input", "condition not linked", []vpec.Record{cond(12, map[string]any{"input_commitment": "sha256:" + strings.Repeat("ef", 32)}, stage.OpenSourceML), inference(inA, listA)}},
		{"another stage type", "condition not linked", []vpec.Record{cond(12, map[string]any{"input_commitment": inA}, stage.BoundCommittedInference), inference(inA, listA)}},
		{"not listed", "lists", []vpec.Record{a, inference(inA, nil)}},
		{"replaced by another input's", "carried by 0", []vpec.Record{fresh(b, nil), inference(inA, listA), b, inference(inB, listB)}},
		{"another input's, relabelled", "lists", []vpec.Record{bAsA, inference(inA, listA), b, inference(inB, listB)}},
		{"listed but missing", "carried by 0", []vpec.Record{inference(inA, listA)}},
		{"another max_tokens", "max_tokens mismatch", []vpec.Record{fresh(a, map[string]any{"input_commitment": inA, "max_tokens": 512}), inference(inA, listA)}},
	} {
		rep, err := verify.Verify(f.issueRecs(t, tc.recs...), verify.Options{Trust: f.trust, Proofs: all})
		c := rep.Check(verify.CheckZK)
		if tc.want == "" {
			if c.Status != verify.Pass {
				t.Errorf("%s: %v %+v", tc.name, err, c)
			}
			continue
		}
		if c.Code != "ZK PROOF INVALID" || !strings.Contains(strings.Join(append([]string{c.Message}, c.Details...), "\n"), tc.want) {
			t.Errorf("%s: %v %+v", tc.name, err, c)
		}
	}
}
