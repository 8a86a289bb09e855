package docs_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// TestSecondImplConditionLinks: the second implementation follows
// FORMATS.md "Condition records of a decomposition" as svc-verify does.
// The proofs vector's threshold record is made a decomposition's post
// condition of the check pii_detection, with a below_threshold_check
// proof (its first record becomes the inference record, which lists it
// back); linked, svc-verify finds it VALID and the Python
// verifier, which has no Groth16, stops at ZK PROOF NOT CHECKED; with a
// broken link both say ZK PROOF INVALID.
func TestSecondImplConditionLinks(t *testing.T) {
	python3(t)
	trust, err := signing.LoadBundle(bundle)
	if err != nil {
		t.Fatal(err)
	}
	s := newResealer(t)
	kit := newConditionKit(t, s)
	// the proof of a below_threshold_check condition (Q(0.3) < Q(0.5)): a
	// decomposition's threshold part (the at-or-above threshold_check of
	// the vector cannot be one: TestSecondImplConditionEdges)
	cHash, cResult, cProof := kit.prove(t, conditions.BelowThreshold, 1288490188, 2147483648, 7)
	link := func(d doc) {
		in := rec(d, 0)
		in["stage_type"], in["stage_part"] = "open_source_ml", "inference"
		c := rec(d, 2)
		c["check"], c["stage_type"] = "pii_detection:threshold_check", "open_source_ml"
		c["commitment_hash"], c["check_result"], c["zk_proof"] = cHash, cResult, cProof
		c["details"] = doc{"input_commitment": in["commitment_hash"], "threshold": json.Number("0.5"), "label": json.Number("1")}
		in["details"] = doc{"gpu_class": "cpu", "condition_commitments": doc{"threshold_check": c["commitment_hash"]}}
	}
	for _, tc := range []struct {
		name, want string
		mutate     func(d doc)
	}{
		{"linked", "", func(d doc) {}},
		{"no input commitment", "condition not linked", func(d doc) { delete(rec(d, 2)["details"].(doc), "input_commitment") }},
		{"another input", "condition not linked", func(d doc) {
			rec(d, 2)["details"].(doc)["input_commitment"] = "sha256:" + strings.Repeat("0", 64)
		}},
		{"another inference check", "condition not linked", func(d doc) { rec(d, 2)["check"] = "other:threshold_check" }},
		{"another threshold in details", "threshold mismatch", func(d doc) { rec(d, 2)["details"].(doc)["threshold"] = json.Number("0.25") }},
		{"not listed by the inference", "lists", func(d doc) { delete(rec(d, 0)["details"].(doc), "condition_commitments") }},
		{"listed but not carried", "carried by 0", func(d doc) {
			rec(d, 0)["details"].(doc)["condition_commitments"].(doc)["truncation_check"] = "poseidon2:" + strings.Repeat("0", 64)
		}},
	} {
		d := loadDoc(t, filepath.Join(vectorsDir, "vpec/valid/proofs.json"))
		link(d)
		tc.mutate(d)
		rechain(t, d)
		p := s.seal(t, "links "+tc.name, d, nil)
		rep, _ := verify.Verify(mustRead(t, p), verify.Options{Trust: trust, Proofs: &zk.Verifier{Trust: trust, Circuits: kit.set}})
		py := runSecondImpl(t, []pyJob{{File: p, TrustRoot: bundle}})[0]
		zc, pc := rep.Check(verify.CheckZK), py.check("zk_proofs")
		if tc.want == "" {
			if !rep.Valid || py.Verdict != "UNVERIFIED — ZK PROOF NOT CHECKED" {
				t.Errorf("%s: svc-verify %q (%+v), second implementation %q", tc.name, rep.Verdict, rep.FirstFailure(), py.Verdict)
			}
			continue
		}
		if rep.Verdict != "INVALID — ZK PROOF INVALID" || py.Verdict != rep.Verdict ||
			!strings.Contains(zc.Message, tc.want) || !strings.Contains(pc.Message, tc.want) {
			t.Errorf("%s: svc-verify %q %q; second implementation %q %q; want %s", tc.name, rep.Verdict, zc.Message, py.Verdict, pc.Message, tc.want)
		}
	}
}
