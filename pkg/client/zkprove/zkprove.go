// Package zkprove records proved checks: the inference of a small MLP
// classifier head at verifiable_inference level (a Groth16 proof of the
// quantised head's run, against the circuit the service published for the
// model) and threshold_check / truncation_check conditions at mathematical
// level. Without a published circuit for the head it falls back to an
// execution-level record that raises a circuit_missing gap, as Bounded
// Inference falls back when a model has no profile (docs/PROOFS.md).
package zkprove

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/head"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// Options configure a Head.
type Options struct {
	// Trust verifies circuit entries (the service's keys). Required: an
	// entry whose signature does not verify is not used.
	Trust *signing.Bundle
	// CircuitDir, when set, is the on-disk cache of circuit entries:
	// looked in before the service, and where fetched entries are kept
	// (svc verify reads the same directory).
	CircuitDir string
	// ProvingKey is the circuit's proving key (gnark's compressed
	// encoding; its SHA-256 is bound in the signed entry). Proving keys
	// are megabytes: the operator hands them out with the ceremony's
	// output, the registry holds only their hash.
	ProvingKey []byte
	// PassClass is the class for which the check passes (default 0);
	// any other class fails it.
	PassClass int
}

// ErrNoProvingKey reports a published circuit without a proving key to
// prove with.
var ErrNoProvingKey = errors.New("zkprove: the model has a published circuit, but no proving key was given")

// Head is an ONNX MLP head ready to prove its inferences.
type Head struct {
	p         *client.Pipeline
	q         *head.Quantized
	modelHash string
	keys      *zk.Keys // nil: no circuit published, execution fallback
	entry     *zk.Entry
	note      string
	opts      Options
}

// New loads and quantises an ONNX MLP head and resolves its circuit: the
// signed entry from the cache or the service's registry, the proving key
// from opts (checked against the entry). No entry: the head records at
// execution level (Note says why). An entry but no matching proving key
// is an error (ErrNoProvingKey, or zk.ErrKeys).
func New(ctx context.Context, p *client.Pipeline, onnx []byte, opts Options) (*Head, error) {
	if opts.Trust == nil {
		return nil, fmt.Errorf("zkprove: Options.Trust is required to check circuit entries")
	}
	q, _, modelHash, err := zk.QuantizeHead(onnx)
	if err != nil {
		return nil, err
	}
	h := &Head{p: p, q: q, modelHash: modelHash, opts: opts}
	if opts.PassClass < 0 || opts.PassClass >= q.Dims()[len(q.Dims())-1] {
		return nil, fmt.Errorf("zkprove: pass class %d: the head has %d classes", opts.PassClass, q.Dims()[len(q.Dims())-1])
	}
	doc, note := h.findEntry(ctx)
	if doc == nil {
		h.note = note
		return h, nil
	}
	e, err := zk.VerifyEntry(doc, opts.Trust)
	if err != nil {
		h.note = "circuit entry not usable: " + err.Error()
		return h, nil
	}
	if len(opts.ProvingKey) == 0 {
		return nil, fmt.Errorf("%w: circuit %s for model %s binds proving key %s", ErrNoProvingKey, e.CircuitID, modelHash, e.ProvingKeyHash)
	}
	keys, err := zk.LoadEntryKeys(e, onnx, opts.ProvingKey)
	if err != nil {
		return nil, err
	}
	h.keys, h.entry = keys, e
	return h, nil
}

// findEntry looks in the cache, then asks the service.
func (h *Head) findEntry(ctx context.Context) ([]byte, string) {
	if dir := h.opts.CircuitDir; dir != "" {
		// Several cached entries may prove the model (keys of several
		// ceremonies): the one bound to the given proving key wins.
		pkHash := ""
		if len(h.opts.ProvingKey) > 0 {
			pkHash = zk.HashBytes(h.opts.ProvingKey)
		}
		var first []byte
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, path := range paths {
			doc, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			if e, err := zk.ParseEntry(doc); err == nil && e.Circuit == zkverify.CircuitMLPHead && e.ONNXModelHash == h.modelHash {
				if pkHash == "" || e.ProvingKeyHash == pkHash {
					return doc, ""
				}
				if first == nil {
					first = doc
				}
			}
		}
		if first != nil {
			return first, ""
		}
	}
	doc, err := h.p.CircuitDocument(ctx, h.modelHash)
	var ae *client.APIError
	switch {
	case errors.As(err, &ae) && ae.Status == 404:
		return nil, "no circuit published for model " + h.modelHash
	case err != nil:
		return nil, "circuit lookup failed: " + err.Error()
	}
	Keep(h.opts.CircuitDir, doc)
	return doc, ""
}

// Keep writes a circuit entry to the cache directory dir (best effort,
// never overwriting): <circuit id hex>.json.
func Keep(dir string, doc []byte) {
	if dir == "" {
		return
	}
	e, err := zk.ParseEntry(doc)
	if err != nil {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	path := filepath.Join(dir, strings.TrimPrefix(e.CircuitID, "sha256:")+".json")
	if _, err := os.Stat(path); err == nil {
		return
	}
	fsutil.WriteNew(path, doc, 0o644)
}

// ModelHash is the head's onnx_model_hash.
func (h *Head) ModelHash() string { return h.modelHash }

// InputCommitment returns the poseidon2 commitment of the quantised
// embedding x (tag svc/poseidon2/int8/v1): the head record's
// commitment_hash, and what the encoder's record should carry as its
// output_commitment (client.WithOutputCommitment) to link the two.
func (h *Head) InputCommitment(x []float32) string {
	return commitment.SumPoseidon2Int8(h.q.QuantizeInput(x)).String()
}

// Proving reports whether inferences are proved (a circuit is published
// and its keys loaded); Note says why not.
func (h *Head) Proving() bool { return h.keys != nil }

// Note says why the head records without proofs ("" when it proves).
func (h *Head) Note() string { return h.note }

// Entry is the verified circuit entry the head proves against (nil when
// it does not prove).
func (h *Head) Entry() *zk.Entry { return h.entry }

// Result is one checked inference.
type Result struct {
	Class   int
	Logits  []int64
	Verdict vpec.CheckResult
	// Proved is true when the record carries a proof (verifiable_inference);
	// false for the execution fallback.
	Proved bool
	Record *client.RecordResult
}

// Check runs the head on the embedding x inside run, as check (manifest
// manifestID): proved and recorded at verifiable_inference, or without a
// circuit at execution level (stage_type mlp_head, a circuit_missing gap).
// The record's commitment is the poseidon2 commitment of the quantised
// embedding in both cases.
func (h *Head) Check(ctx context.Context, run *client.Run, check, manifestID string, x []float32) (*Result, error) {
	if d := h.q.Dims()[0]; len(x) != d {
		return nil, fmt.Errorf("%w: the input vector has %d values, the head takes %d", head.ErrInput, len(x), d)
	}
	verdict := func(class int) vpec.CheckResult {
		if class == h.opts.PassClass {
			return vpec.ResultPass
		}
		return vpec.ResultFail
	}
	if h.keys == nil {
		xq := h.q.QuantizeInput(x)
		logits, class, err := h.q.Run(xq)
		if err != nil {
			return nil, err
		}
		res := &Result{Class: class, Logits: logits, Verdict: verdict(class)}
		res.Record, err = run.RecordCommitted(ctx, check, manifestID, res.Verdict, commitment.SumPoseidon2Int8(xq).String(),
			client.WithModelHash(h.modelHash), client.WithStage(stage.MLPHead, stage.PartInference),
			client.WithDetails(map[string]any{"circuit_missing": h.note}))
		return res, err
	}
	hp, err := zk.ProveHead(h.keys, x)
	if err != nil {
		return nil, err
	}
	res := &Result{Class: hp.Class, Logits: hp.Logits, Verdict: verdict(hp.Class), Proved: true}
	res.Record, err = run.RecordCommitted(ctx, check, manifestID, res.Verdict, hp.CommitmentHash,
		client.WithModelHash(h.modelHash), client.WithZKProof(hp.ZKProof))
	return res, err
}

// Condition proves threshold_check or truncation_check conditions with the
// keys of a signed circuit entry.
type Condition struct {
	keys  *zk.Keys
	entry *zk.Entry
}

// NewCondition verifies a condition circuit's signed entry and loads its
// proving key (checked against the entry).
func NewCondition(entryDoc, provingKey []byte, trust *signing.Bundle) (*Condition, error) {
	e, err := zk.VerifyEntry(entryDoc, trust)
	if err != nil {
		return nil, err
	}
	if !conditions.Kind(e.Circuit).Valid() {
		return nil, fmt.Errorf("%w: entry %s is an %s circuit", conditions.ErrKind, e.CircuitID, e.Circuit)
	}
	keys, err := zk.LoadEntryKeys(e, nil, provingKey)
	if err != nil {
		return nil, err
	}
	return &Condition{keys: keys, entry: e}, nil
}

// Kind is the condition's circuit.
func (c *Condition) Kind() conditions.Kind { return conditions.Kind(c.entry.Circuit) }

// Check proves that value (committed with a fresh random salt) passes or
// fails the condition against bound and records it at mathematical level.
// The salt is returned: whoever holds it can open the commitment later.
func (c *Condition) Check(ctx context.Context, run *client.Run, check, manifestID string, value, bound uint32, opts ...client.RecordOption) (*client.RecordResult, vpec.CheckResult, conditions.Salt, error) {
	cp, salt, err := c.Prove(value, bound)
	if err != nil {
		return nil, "", salt, err
	}
	opts = append(opts, client.WithZKProof(cp.ZKProof))
	res, err := run.RecordCommitted(ctx, check, manifestID, cp.CheckResult, cp.CommitmentHash, opts...)
	return res, cp.CheckResult, salt, err
}

// Prove proves that value, committed under a fresh random salt, passes or
// fails the condition against bound, without recording: the caller
// records cp.CommitmentHash, cp.CheckResult and cp.ZKProof (client.Run's
// RecordCommitted with client.WithZKProof) and keeps the salt, which opens
// the commitment.
func (c *Condition) Prove(value, bound uint32) (cp *zk.ConditionProof, salt conditions.Salt, err error) {
	if salt, err = conditions.NewSalt(); err != nil {
		return nil, salt, err
	}
	cp, err = zk.ProveCondition(c.keys, value, bound, salt)
	return cp, salt, err
}

// Entry is the verified circuit entry of the condition.
func (c *Condition) Entry() *zk.Entry { return c.entry }

// ErrConditionPairs reports condition entries and proving keys that do not
// pair up.
var ErrConditionPairs = errors.New("zkprove: give one proving key per condition circuit entry, in the same order")

// NewConditions is NewCondition for several circuits: entries[i] is
// proved with provingKeys[i].
func NewConditions(entries, provingKeys [][]byte, trust *signing.Bundle) ([]*Condition, error) {
	if len(entries) != len(provingKeys) {
		return nil, fmt.Errorf("%w: %d entries, %d proving keys", ErrConditionPairs, len(entries), len(provingKeys))
	}
	out := make([]*Condition, len(entries))
	for i := range entries {
		c, err := NewCondition(entries[i], provingKeys[i], trust)
		if err != nil {
			return nil, fmt.Errorf("condition circuit entry %d: %w", i+1, err)
		}
		out[i] = c
	}
	return out, nil
}
