package quickstart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// calibrationPasses keeps the quickstart's calibration to about two seconds.
const calibrationPasses = 200

// boundedStep is what the quickstart's Bounded Inference step
// leaves for the audit.
type boundedStep struct {
	model                                       *trace.Model
	trace                                       *trace.Trace
	input                                       []byte
	modelDir, tracePath, profilePath, inputPath string
}

// registry is what the Bounded Inference step publishes to: the
// calibrated profile (answering calibration requests) and the condition
// circuits.
type registry interface {
	server.PublishStore
	store.CircuitStore
}

// runBounded runs the Bounded Inference part of the quickstart when
// this build has ONNX Runtime: a classifier in the patterns of a torch
// export, calibrated on real executions, its profile signed and published,
// then one bound_committed_inference check on the run. Without a runtime
// it says so and returns nil.
func runBounded(ctx context.Context, dir string, st registry, mat *server.Material, p *client.Pipeline,
	run *client.Run, manifestID string, input []byte, set *profile.Set, say func(string, ...any)) (*boundedStep, error) {
	lib, err := inference.LibraryPath("")
	if err == nil {
		err = inference.Init(lib)
	}
	if err != nil {
		say("skipping Bounded Inference: %v (install the runtime with 'make ort')", err)
		return nil, nil
	}
	q := &boundedStep{modelDir: filepath.Join(dir, "model"), tracePath: filepath.Join(dir, "trace.json"),
		profilePath: filepath.Join(dir, "profile.json"), inputPath: filepath.Join(dir, "input.txt"), input: input}
	for _, path := range []string{q.tracePath, q.profilePath, q.inputPath} {
		os.Remove(path) // a quickstart directory is rewritten on every run
	}
	if err := modelgen.WriteDir(q.modelDir, modelgen.Config{Style: modelgen.StyleTorch, SeqLen: 128}); err != nil {
		return nil, fail("generate model", err)
	}
	if q.model, err = trace.LoadModel(q.modelDir); err != nil {
		return nil, fail("load model", err)
	}
	say("classifier: %s (DistilBERT-style export: decomposed LayerNorm, Erf GELU, logits), ONNX Runtime %s", q.model.Hash, inference.Version())
	start := time.Now()
	prof, err := calibration.Calibrate(q.model, calibration.Meta{ProfileID: "quickstart/toxicity-class/v1.0.0",
		ModelClass: "toxicity", Architecture: "distilbert", Date: time.Now()}, calibration.Options{Passes: calibrationPasses})
	if err != nil {
		return nil, fail("calibrate", err)
	}
	say("calibrated on real executions: %d passes, production vs reference, in %s", calibrationPasses, time.Since(start).Round(10*time.Millisecond))
	if _, err := server.Publish(ctx, st, mat.ProfileSigner, "localhost/.well-known/svc/trust-bundle.pem", prof, nil, time.Now()); err != nil && !errors.Is(err, store.ErrExists) {
		return nil, fail("publish profile", err)
	}
	conds, err := conditionProvers(ctx, dir, st, mat)
	if err != nil {
		return nil, err
	}
	c, err := bounded.New(p, q.model, bounded.Options{Trust: mat.Trust, Conditions: conds})
	if err != nil {
		return nil, fail("classifier", err)
	}
	defer c.Close()
	res, err := c.Check(ctx, run, "toxicity_classifier", manifestID, input)
	if err != nil {
		return nil, fail("record toxicity_classifier", err)
	}
	if res.ProofLevel != vpec.OperatorBound {
		return nil, fail("record toxicity_classifier", fmt.Errorf("no profile applied: %s", res.ProfileNote))
	}
	say("recorded toxicity_classifier: %s, score %.3f, operator_bound (%d operators, root %s) + 5 mathematical pre/post conditions, %d of them with Groth16 proofs (truncation_check, threshold_check: dev keys)",
		res.Verdict, res.Score, res.Trace.OperatorCount, res.Trace.MerkleRoot, len(res.Conditions))
	signed, err := p.ProfileDocument(ctx, q.model.Hash)
	if err != nil {
		return nil, fail("fetch profile", err)
	}
	if _, err := profile.Verify(signed, mat.Trust); err != nil {
		return nil, fail("verify profile", err)
	}
	if _, err := set.Add(signed); err != nil {
		return nil, fail("profile", err)
	}
	q.trace = res.Trace
	traceDoc, err := document.MarshalIndent(res.Trace)
	if err != nil {
		return nil, fail("trace", err)
	}
	for path, data := range map[string][]byte{q.profilePath: signed, q.tracePath: traceDoc, q.inputPath: input} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, fail("write "+path, err)
		}
	}
	return q, nil
}

// audit is the replay audit of the quickstart's VPEC doc: what
// svc verify --trace runs, on the kept trace, model and input.
func (q *boundedStep) audit(doc []byte, trust *signing.Bundle, set *profile.Set) (verify.Check, bool, error) {
	c, err := calibration.AuditRecord(calibration.RecordAudit{VPEC: doc, Trace: q.trace, Input: q.input, Trust: trust, Profiles: set,
		LoadModel: func() (*trace.Model, error) { return q.model, nil }})
	return c, true, err
}
