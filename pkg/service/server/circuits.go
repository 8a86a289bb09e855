package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/zk"
)

// ErrNoCircuitStore reports a server without the circuit registry
// (Config.Storage.Circuits is nil).
var ErrNoCircuitStore = errors.New("the store has no circuit registry")

// circuitStore is the circuit registry, or ErrNoCircuitStore.
func (s *Server) circuitStore() (store.CircuitReader, error) {
	if s.cfg.Storage.Circuits == nil {
		return nil, fmt.Errorf("%w: Config.Storage.Circuits is not set", ErrNoCircuitStore)
	}
	return s.cfg.Storage.Circuits, nil
}

// PublishCircuit signs a circuit entry with the service key and publishes
// it: lookups by its circuit id (and, for an mlp_head circuit, by its
// model) find it from now on. Entries are immutable: publishing the
// identical entry again is a no-op, anything else under a published
// circuit id fails with store.ErrExists.
func PublishCircuit(ctx context.Context, cs store.CircuitStore, signer *signing.Signer, signedBy string, e *zk.Entry, now time.Time) ([]byte, error) {
	if old, err := cs.CircuitByID(ctx, e.CircuitID); err == nil {
		// Re-publishing: keep the first publication (same keys, same
		// ceremony) when the entry says the same, refuse otherwise.
		prev, perr := zk.ParseEntry(old.Body)
		if perr == nil && sameEntry(prev, e) {
			return old.Body, nil
		}
		return nil, fmt.Errorf("publish circuit %s: %w", e.CircuitID, store.ErrExists)
	}
	e.PublishedAt = vpec.FormatTime(now)
	if err := zk.Sign(e, signer, signedBy); err != nil {
		return nil, err
	}
	body, err := document.MarshalIndent(e)
	if err != nil {
		return nil, err
	}
	pub, _ := time.Parse(time.RFC3339Nano, e.PublishedAt)
	if err := cs.PutCircuit(ctx, store.Circuit{ID: e.CircuitID, Circuit: e.Circuit, ModelHash: e.ONNXModelHash, Body: body, PublishedAt: pub}); err != nil {
		return nil, fmt.Errorf("publish circuit %s: %w", e.CircuitID, err)
	}
	return body, nil
}

// sameEntry compares what an entry states, ignoring its publication time
// and signature.
func sameEntry(a, b *zk.Entry) bool {
	x, y := *a, *b
	for _, e := range []*zk.Entry{&x, &y} {
		e.PublishedAt, e.SignedBy, e.SigningKeyID, e.CircuitSignature = "", "", "", ""
	}
	bx, err1 := document.Marshal(&x)
	by, err2 := document.Marshal(&y)
	return err1 == nil && err2 == nil && bytes.Equal(bx, by)
}

// circuits serves GET /api/v1/registry/circuits with exactly one of
// ?model_hash= (the latest mlp_head entry for the model) or ?circuit_id=:
// 200 with the signed entry, 404 with {"found": false}.
func (s *Server) circuits(w http.ResponseWriter, r *http.Request) {
	cs, err := s.circuitStore()
	if err != nil {
		s.fail(w, r, &httpError{http.StatusNotImplemented, api.CodeNotImplemented, err.Error(), ""})
		return
	}
	model, hasModel, err := oneParam(r, "model_hash")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	id, hasID, err := oneParam(r, "circuit_id")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var c store.Circuit
	switch {
	case hasModel == hasID:
		s.fail(w, r, badRequest("model_hash", "give exactly one of model_hash (the model's onnx_model_hash) and circuit_id"))
		return
	case model != "":
		if _, err := commitment.ParseSHA256(model); err != nil {
			s.fail(w, r, badRequest("model_hash", "model_hash: %v", err))
			return
		}
		c, err = cs.CircuitByModelHash(r.Context(), model)
	default:
		if _, err := commitment.ParseSHA256(id); err != nil {
			s.fail(w, r, badRequest("circuit_id", "circuit_id: %v", err))
			return
		}
		c, err = cs.CircuitByID(r.Context(), id)
	}
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusNotFound, api.Lookup{Found: false})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(c.Body)
}

// checkProof verifies a record's zk_proof as the offline verifier will:
// against the published, service-signed entry of its circuit id, with
// public inputs rebuilt from the record. A proof for an unpublished
// circuit, or one that does not verify, is refused (422 naming zk_proof).
func (s *Server) checkProof(ctx context.Context, runID string, rec *vpec.Record) error {
	cs, err := s.circuitStore()
	if err != nil {
		return err
	}
	c, err := cs.CircuitByID(ctx, rec.ZKProof.CircuitID)
	if errors.Is(err, store.ErrNotFound) {
		return &httpError{http.StatusUnprocessableEntity, api.CodeProofInvalid,
			fmt.Sprintf("zk_proof.circuit_id %s is not a published circuit: publish its entry (svc registry publish-circuit) or record at a lower level", rec.ZKProof.CircuitID), "zk_proof.circuit_id"}
	}
	if err != nil {
		return err
	}
	set := zk.NewSet()
	if _, err := set.Add(c.Body); err != nil {
		return err
	}
	v := &zk.Verifier{Trust: s.cfg.Trust, Circuits: set}
	_, end := s.span(ctx, "zk.verify_proof")
	begin := time.Now()
	_, err = v.VerifyProof(runID, rec)
	s.metrics.ZKVerification(zkResult(err), time.Since(begin))
	end(err)
	if err != nil {
		return &httpError{http.StatusUnprocessableEntity, api.CodeProofInvalid, "zk_proof rejected: " + err.Error(), "zk_proof"}
	}
	return nil
}

// circuitGap returns the circuit_missing gap of an MLP head's inference
// recorded without a proof, or nil when a circuit for its model has been
// published since (the gap resolves itself, like model_profile_missing).
func (s *Server) circuitGap(r *http.Request, rec *vpec.Record, stamp string) (*vpec.Gap, error) {
	cs, err := s.circuitStore()
	if err != nil {
		return nil, err
	}
	if rec.ONNXModelHash != "" {
		_, err := cs.CircuitByModelHash(r.Context(), rec.ONNXModelHash)
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	check, sq := rec.Check, rec.Sequence
	return &vpec.Gap{GapID: names.NewID("gap_"), GapType: gap.CircuitMissing, Severity: gap.Medium, Check: &check, Sequence: &sq, Timestamp: stamp}, nil
}
