package zkprove_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cs "github.com/consensys/gnark/constraint/bn254"

	"github.com/svc-gov/svc/pkg/client/zkprove"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/ceremony"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// A two-contributor ceremony end to end: phase 1 and phase 2 (the
// threshold_check circuit) each with two contributors, finalized with a
// beacon; its keys and transcript are published, a condition is proved
// with the ceremony's proving key and recorded, and the VPEC verifies
// VALID naming both contributors of both phases. A transcript that did not
// seal the published keys is refused.
func TestCeremonyKeysEndToEnd(t *testing.T) {
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "p1"), filepath.Join(dir, "p2")
	c1, err := ceremony.InitPhase1(p1, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Example Org", "Auditor LLP"} {
		if _, err := c1.Contribute(name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ceremony.Finalize(p1, "8f2e4d1c0b9a79685746352413021f0e", ceremony.VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	ccs, err := conditions.Compile(conditions.Threshold)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := ceremony.InitPhase2(p2, p1, ceremony.Circuit{Name: "threshold_check", R1CS: ccs.(*cs.R1CS)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Example Org", "Auditor LLP"} {
		if _, err := c2.Contribute(name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ceremony.Finalize(p2, "0e1f2021324354657687a9b0c1d2e3f4", ceremony.VerifyOptions{Phase1Dir: p1}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(p2, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	vk, pk, tr := read(ceremony.VerifyingKeyFile), read(ceremony.ProvingKeyFile), read("transcript.json")

	// Keys another setup made are not what this transcript sealed.
	other, err := zk.DevSetup(zkverify.CircuitThreshold, nil)
	if err != nil {
		t.Fatal(err)
	}
	ovk, _ := zk.MarshalVerifyingKey(other.VK)
	opk, _ := zk.MarshalProvingKey(other.PK)
	if _, _, err := zk.PrepareEntry(zk.PublishInput{Circuit: zkverify.CircuitThreshold, VerifyingKey: ovk, ProvingKey: opk, Transcript: tr}, time.Now()); !errors.Is(err, zk.ErrTranscript) {
		t.Fatalf("keys the transcript did not seal: %v", err)
	}

	e, _, err := zk.PrepareEntry(zk.PublishInput{Circuit: zkverify.CircuitThreshold, VerifyingKey: vk, ProvingKey: pk, Transcript: tr}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Example Org (phase 1)", "Auditor LLP (phase 1)", "Example Org (phase 2)", "Auditor LLP (phase 2)"}
	if strings.Join(e.Ceremony.Contributors, "|") != strings.Join(want, "|") || e.Ceremony.TranscriptHash != zk.HashBytes(tr) {
		t.Fatalf("ceremony block %+v", e.Ceremony)
	}
	if err := zk.CheckTranscript(e, tr); err != nil {
		t.Fatalf("the entry's own transcript: %v", err)
	}
	forged := *e
	forged.Ceremony.Contributors = append([]string{"Mallory (phase 2)"}, e.Ceremony.Contributors...)
	if err := zk.CheckTranscript(&forged, tr); !errors.Is(err, zk.ErrTranscript) {
		t.Fatalf("contributors the transcript does not list: %v", err)
	}
	s := newService(t)
	ctx := context.Background()
	doc, err := server.PublishCircuit(ctx, s.st, s.mat.Signer, "test", e, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cond, err := zkprove.NewCondition(doc, pk, s.mat.Trust)
	if err != nil {
		t.Fatal(err)
	}
	p := s.pipeline(t)
	run, _ := p.Open(ctx, "")
	if _, res, _, err := cond.Check(ctx, run, "score_threshold", "sha256:"+strings.Repeat("ab", 32), 80, 500); err != nil || res != vpec.ResultFail {
		t.Fatalf("condition: %s %v", res, err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set := zk.NewSet()
	if _, err := set.Add(doc); err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Verify(v.Raw, verify.Options{Trust: s.mat.Trust, Proofs: &zk.Verifier{Trust: s.mat.Trust, Circuits: set}})
	if err != nil {
		t.Fatalf("verify: %v %+v", err, rep.FirstFailure())
	}
	if c := rep.Check(verify.CheckZK); !strings.Contains(c.Message, "Example Org (phase 1), Auditor LLP (phase 1), Example Org (phase 2), Auditor LLP (phase 2)") {
		t.Fatalf("zk check %q", c.Message)
	}
}
