package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// WithZKProof attaches a zero-knowledge proof (docs/FORMATS.md, "Proofs in
// records") and sets the proof level its circuit gives: verifiable_inference
// for an mlp_head proof, mathematical for a condition proof. Use it with
// RecordCommitted: the record's commitment hash must be the proof's
// poseidon2 input commitment. pkg/client/zkprove makes both.
func WithZKProof(z *vpec.ZKProof) RecordOption {
	return func(c *recordConfig) {
		c.zkProof = z
		if z != nil && z.Circuit == zkverify.CircuitMLPHead {
			c.level = vpec.VerifiableInference
		} else if z != nil {
			c.level = vpec.Mathematical
		}
	}
}

// WithOutputCommitment sets the record's output_commitment to a commitment
// the caller computed (sha256: or poseidon2:), for example the poseidon2
// commitment of an encoder's quantised pooled embedding, which the head's
// proved record then takes as its input commitment (docs/PROOFS.md,
// "Composition with Bounded Inference"). It does not go with WithOutput.
func WithOutputCommitment(h string) RecordOption {
	return func(c *recordConfig) { c.outputCommitment = h }
}

// RecordCommitted records a check whose input the caller has committed
// itself: commitmentHash is "sha256:<hex>" or "poseidon2:<hex>" (a proved
// record's is the poseidon2 commitment its proof is about). Otherwise it
// is Record: the same options, chaining, queueing and errors; no raw data
// is involved.
func (r *Run) RecordCommitted(ctx context.Context, check, manifestID string, result vpec.CheckResult, commitmentHash string, opts ...RecordOption) (*RecordResult, error) {
	h, err := commitment.Parse(commitmentHash)
	if err != nil {
		return nil, fmt.Errorf("%w: commitment hash: %v", ErrInvalidRecord, err)
	}
	p := r.p
	if err := p.enter(); err != nil {
		return nil, err
	}
	var c recordConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.outputCommitment != "" {
		if _, err := commitment.Parse(c.outputCommitment); err != nil {
			p.exit()
			return nil, fmt.Errorf("%w: output commitment: %v", ErrInvalidRecord, err)
		}
	}
	if c.hasOutput || c.review != nil {
		p.exit()
		return nil, fmt.Errorf("%w: RecordCommitted takes no output or review (record those with Record)", ErrInvalidRecord)
	}
	ctx, cancel := p.callCtx(ctx)
	r.mu.Lock()
	rec, res, err := r.record(ctx, check, manifestID, result, &c, hashes{input: h.String(), algorithm: h.Algorithm, output: c.outputCommitment})
	r.mu.Unlock()
	cancel()
	p.exit()
	if err != nil {
		return nil, err
	}
	p.emit(rec, r.id, r.workflowID)
	return res, nil
}

// CircuitDocument returns the signed circuit entry of the latest mlp_head
// circuit published for a model (docs/API.md), as the service sent it;
// verify it with zk.VerifyEntry. No circuit: an *APIError with Status 404.
func (p *Pipeline) CircuitDocument(ctx context.Context, modelHash string) ([]byte, error) {
	var raw json.RawMessage
	err := p.getJSON(ctx, http.MethodGet, "/api/v1/registry/circuits?model_hash="+url.QueryEscape(modelHash), nil, &raw)
	return raw, err
}

// CircuitDocumentByID returns the signed circuit entry with a circuit id.
func (p *Pipeline) CircuitDocumentByID(ctx context.Context, circuitID string) ([]byte, error) {
	var raw json.RawMessage
	err := p.getJSON(ctx, http.MethodGet, "/api/v1/registry/circuits?circuit_id="+url.QueryEscape(circuitID), nil, &raw)
	return raw, err
}
