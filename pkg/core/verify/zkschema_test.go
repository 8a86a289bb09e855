package verify_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// A zk_proof on a record of another level, or with the wrong statement
// fields, is a schema error.
func TestZKProofSchema(t *testing.T) {
	f := newZKFixture(t)
	base := f.condRecord(t, conditions.Threshold, 700, 500)
	for name, mut := range map[string]func(r *vpec.Record){
		"execution level": func(r *vpec.Record) { r.ProofLevel = vpec.Execution },
		"sha256 commitment": func(r *vpec.Record) {
			r.CommitmentAlgorithm, r.CommitmentHash = "sha256", "sha256:"+strings.Repeat("0", 64)
		},
		"skipped result":    func(r *vpec.Record) { r.CheckResult = vpec.ResultSkipped },
		"missing threshold": func(r *vpec.Record) { r.ZKProof.Threshold = nil },
		"class on condition": func(r *vpec.Record) {
			c := int64(1)
			r.ZKProof.Class = &c
		},
		"other system":    func(r *vpec.Record) { r.ZKProof.System = "plonk-bn254" },
		"unknown circuit": func(r *vpec.Record) { r.ZKProof.Circuit = "sum_check" },
		"huge threshold": func(r *vpec.Record) {
			h := int64(1) << 33
			r.ZKProof.Threshold = &h
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := base
			z := *base.ZKProof
			r.ZKProof = &z
			mut(&r)
			if err := r.Validate(); err == nil || !errors.Is(err, vpec.ErrInvalidRecord) {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

// An explicitly given entry that is corrupt fails the check even when no
// record needs it.
func TestZKExplicitEntryProblems(t *testing.T) {
	f := newZKFixture(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(p, unsign(t, f.entries[conditions.Threshold]), 0o600); err != nil {
		t.Fatal(err)
	}
	set := zk.NewSet()
	if err := set.AddExplicit(p); err != nil {
		t.Fatal(err)
	}
	doc := f.issueRecs(t, records(1, vpec.Execution)...)
	rep, err := verify.Verify(doc, verify.Options{Trust: f.trust, Proofs: &zk.Verifier{Trust: f.trust, Circuits: set}})
	if err == nil || rep.Check(verify.CheckZK).Code != "ZK PROOF INVALID" {
		t.Fatalf("err %v\n%s", err, dump(rep))
	}
}
