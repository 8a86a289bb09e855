package quickstart

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/zkprove"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// runProved is the quickstart's zero-knowledge part: a small MLP head
// (64-16-2) and the threshold_check circuit get single-party dev keys
// (labelled as such in their signed entries), are published, and one head
// inference (verifiable_inference) and one threshold condition
// (mathematical) are proved and recorded. It returns the circuit entries
// and the directory holding them (dir/circuits, svc verify's
// --circuit-dir).
func runProved(ctx context.Context, dir string, st store.CircuitStore, mat *server.Material, p *client.Pipeline,
	run *client.Run, manifestID string, say func(string, ...any)) (*zk.Set, string, error) {
	onnx, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{64, 16, 2}, Seed: 1})
	if err != nil {
		return nil, "", fail("generate head", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "head.onnx"), onnx, 0o644); err != nil {
		return nil, "", fail("write head", err)
	}
	publish := func(name, circuit string, model []byte) ([]byte, []byte, error) {
		return publishDev(ctx, dir, st, mat, name, circuit, model)
	}
	headDoc, headPK, err := publish("head", zkverify.CircuitMLPHead, onnx)
	if err != nil {
		return nil, "", fail("publish head circuit", err)
	}
	thrDoc, thrPK, err := publish("threshold", zkverify.CircuitThreshold, nil)
	if err != nil {
		return nil, "", fail("publish threshold circuit", err)
	}
	say("circuits published (single-party dev setup, for trying only): mlp_head for head.onnx, threshold_check")
	cache := filepath.Join(dir, "circuits") // the client's circuit cache: the entries it proves against
	zkprove.Keep(cache, headDoc)
	h, err := zkprove.New(ctx, p, onnx, zkprove.Options{Trust: mat.Trust, CircuitDir: cache, ProvingKey: headPK})
	if err != nil {
		return nil, "", fail("load head", err)
	}
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i%9-4) / 4
	}
	res, err := h.Check(ctx, run, "toxicity_head", manifestID, x)
	if err != nil {
		return nil, "", fail("prove head", err)
	}
	say("recorded toxicity_head: %s, class %d, %s (Groth16 proof of the head's run on the committed embedding %s)", res.Verdict, res.Class, res.Record.ProofLevel, res.Record.CommitmentHash)
	cond, err := zkprove.NewCondition(thrDoc, thrPK, mat.Trust)
	if err != nil {
		return nil, "", fail("load threshold circuit", err)
	}
	zkprove.Keep(cache, thrDoc)
	_, result, _, err := cond.Check(ctx, run, "score_threshold", manifestID, 731, 500)
	if err != nil {
		return nil, "", fail("prove threshold", err)
	}
	say("recorded score_threshold: %s, mathematical (proof that a committed score is at least 500; the score stays here)", result)
	set := zk.NewSet()
	for _, err := range set.AddDir(cache) {
		say("skipping cached circuit entry: %v", err)
	}
	return set, cache, nil
}

// publishDev makes and publishes a circuit's single-party dev keys once
// per quickstart directory (dir/<name>.circuit.json and dir/<name>.pk);
// later runs reuse its entry and proving key.
func publishDev(ctx context.Context, dir string, st store.CircuitStore, mat *server.Material, name, circuit string, model []byte) ([]byte, []byte, error) {
	docPath, pkPath := filepath.Join(dir, name+".circuit.json"), filepath.Join(dir, name+".pk")
	doc, derr := os.ReadFile(docPath)
	pk, perr := os.ReadFile(pkPath)
	if derr == nil && perr == nil {
		return doc, pk, nil
	}
	operator := "quickstart operator (svc key " + mat.ProfileSigner.KeyID() + ")"
	e, keys, err := zk.PrepareEntry(zk.PublishInput{Circuit: circuit, Model: model, DevSetup: true, Operator: operator}, time.Now())
	if err != nil {
		return nil, nil, err
	}
	if doc, err = server.PublishCircuit(ctx, st, mat.ProfileSigner, "quickstart", e, time.Now()); err != nil {
		return nil, nil, err
	}
	if pk, err = zk.MarshalProvingKey(keys.PK); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(pkPath, pk, 0o600); err != nil {
		return nil, nil, err
	}
	return doc, pk, os.WriteFile(docPath, doc, 0o644)
}

// conditionProvers publishes (once) dev keys of the truncation_check and
// below_threshold_check circuits and returns their provers, keeping the
// entries in the circuit cache dir/circuits that the verification reads.
func conditionProvers(ctx context.Context, dir string, st store.CircuitStore, mat *server.Material) ([]*zkprove.Condition, error) {
	var out []*zkprove.Condition
	for _, c := range []struct{ name, circuit string }{{"truncation", zkverify.CircuitTruncation}, {"below-threshold", zkverify.CircuitBelowThreshold}} {
		doc, pk, err := publishDev(ctx, dir, st, mat, c.name, c.circuit, nil)
		if err != nil {
			return nil, fail("publish "+c.circuit+" circuit", err)
		}
		cond, err := zkprove.NewCondition(doc, pk, mat.Trust)
		if err != nil {
			return nil, fail("load "+c.circuit+" circuit", err)
		}
		zkprove.Keep(filepath.Join(dir, "circuits"), doc)
		out = append(out, cond)
	}
	return out, nil
}
