package zkprove_test

import (
	"context"
	"errors"
	"github.com/svc-gov/svc/internal/svctest"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/zkprove"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

type service struct {
	sv  *svctest.Service
	st  store.CircuitStore
	mat *server.Material
	url string
	key string
}

func newService(t *testing.T) *service {
	sv := svctest.New(t, nil)
	return &service{st: sv.Store, mat: sv.Material, url: sv.URL, key: sv.Key, sv: sv}
}

func (s *service) pipeline(t *testing.T) *client.Pipeline { return s.sv.Pipeline(t) }

// publish sets a circuit up with a dev setup and publishes its entry; it
// returns the proving key.
func (s *service) publish(t *testing.T, circuit string, onnx []byte) ([]byte, []byte) {
	t.Helper()
	k, err := zk.DevSetup(circuit, onnx)
	if err != nil {
		t.Fatal(err)
	}
	e, err := zk.NewEntry(k, k.ModelHash, zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("ceremony")), Contributors: []string{"acme-ops", "auditor-llp"}}, time.Now())
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
	return pk, doc
}

func embedding(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%5-2) / 2
	}
	return x
}

// Without a published circuit the head records at execution level with a
// circuit_missing gap; once the circuit is published, the same check is
// proved (verifiable_inference) beside a proved threshold condition, and
// the VPEC verifies VALID with "ZK proofs valid" against the cached
// entries.
func TestProvedHead(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	onnx, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{32, 8, 2}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	p := s.pipeline(t)

	h, err := zkprove.New(ctx, p, onnx, zkprove.Options{Trust: s.mat.Trust, CircuitDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if h.Proving() || !strings.Contains(h.Note(), "no circuit published") {
		t.Fatalf("proving %v, note %q", h.Proving(), h.Note())
	}
	run, _ := p.Open(ctx, "")
	res, err := h.Check(ctx, run, "toxicity_head", "sha256:"+strings.Repeat("ab", 32), embedding(32))
	if err != nil || res.Proved || res.Record.ProofLevel != vpec.Execution {
		t.Fatalf("fallback: %+v %v", res, err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.VPEC.Gaps) != 1 || v.VPEC.Gaps[0].GapType != gap.CircuitMissing {
		t.Fatalf("gaps %+v", v.VPEC.Gaps)
	}

	pk, _ := s.publish(t, zkverify.CircuitMLPHead, onnx)
	tpk, tdoc := s.publish(t, zkverify.CircuitThreshold, nil)
	if _, err := zkprove.New(ctx, p, onnx, zkprove.Options{Trust: s.mat.Trust, CircuitDir: cache}); !errors.Is(err, zkprove.ErrNoProvingKey) {
		t.Fatalf("published circuit without a proving key: %v", err)
	}
	if _, err := zkprove.New(ctx, p, onnx, zkprove.Options{Trust: s.mat.Trust, CircuitDir: cache, ProvingKey: tpk}); !errors.Is(err, zk.ErrKeys) {
		t.Fatalf("another circuit's proving key: %v", err)
	}
	h, err = zkprove.New(ctx, p, onnx, zkprove.Options{Trust: s.mat.Trust, CircuitDir: cache, ProvingKey: pk})
	if err != nil || !h.Proving() {
		t.Fatalf("head: %v (%s)", err, h.Note())
	}
	cond, err := zkprove.NewCondition(tdoc, tpk, s.mat.Trust)
	if err != nil {
		t.Fatal(err)
	}
	zkprove.Keep(cache, tdoc)

	run, _ = p.Open(ctx, "")
	// The encoder's record (here at execution level) commits to the text
	// and, as its output, to the quantised pooled embedding: the head's
	// proved record takes the same value as its input commitment.
	linked := h.InputCommitment(embedding(32))
	if _, err := run.Record(ctx, "encoder", "sha256:"+strings.Repeat("ab", 32), vpec.ResultPass, []byte("the text"), client.WithOutputCommitment(linked)); err != nil {
		t.Fatal(err)
	}
	res, err = h.Check(ctx, run, "toxicity_head", "sha256:"+strings.Repeat("ab", 32), embedding(32))
	if err != nil || !res.Proved || res.Record.ProofLevel != vpec.VerifiableInference || res.Record.Queued {
		t.Fatalf("proved: %+v %v", res, err)
	}
	if _, result, _, err := cond.Check(ctx, run, "score_threshold", "sha256:"+strings.Repeat("ab", 32), 731, 500); err != nil || result != vpec.ResultPass {
		t.Fatalf("condition: %s %v", result, err)
	}
	v, err = run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set := zk.NewSet()
	for _, e := range set.AddDir(cache) {
		t.Fatal(e)
	}
	if set.Len() != 2 {
		t.Fatalf("cache holds %d entries", set.Len())
	}
	rep, err := verify.Verify(v.Raw, verify.Options{Trust: s.mat.Trust, Proofs: &zk.Verifier{Trust: s.mat.Trust, Circuits: set}})
	if err != nil {
		t.Fatalf("verify: %v %+v", err, rep.FirstFailure())
	}
	c := rep.Check(verify.CheckZK)
	if !strings.HasPrefix(c.Message, "ZK proofs valid (2 proofs") || !strings.Contains(c.Message, "acme-ops, auditor-llp") || !v.VPEC.IsClean {
		t.Fatalf("zk check %q, clean %v", c.Message, v.VPEC.IsClean)
	}
	// The VPEC's records carry the proofs the verifier checked.
	var doc vpec.VPEC
	if _, err := document.Parse(v.Raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Records[1].ZKProof == nil || doc.Records[1].ZKProof.Circuit != zkverify.CircuitMLPHead || doc.Records[2].ZKProof == nil {
		t.Fatalf("records %+v", doc.Records)
	}
	if doc.Records[0].OutputCommitment != linked || doc.Records[1].CommitmentHash != linked {
		t.Fatalf("encoder output %s, head input %s, want both %s", doc.Records[0].OutputCommitment, doc.Records[1].CommitmentHash, linked)
	}
}
