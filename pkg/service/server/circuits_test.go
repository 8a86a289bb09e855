package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// A published circuit entry is found by circuit id, verifies offline
// under the service key, and is immutable.
func TestPublishCircuit(t *testing.T) {
	e := newEnv(t)
	keys, err := zk.DevSetupCondition(conditions.Threshold)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := zk.NewEntry(keys, "", zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("t")), Contributors: []string{"operator"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.PublishCircuit(context.Background(), e.st, e.mat.Signer, "test", entry, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Publishing the same entry again is a no-op; another ceremony under
	// the same key is refused.
	again := *entry
	if _, err := server.PublishCircuit(context.Background(), e.st, e.mat.Signer, "test", &again, time.Now()); err != nil {
		t.Fatalf("republish: %v", err)
	}
	other := *entry
	other.Ceremony = zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("u")), Contributors: []string{"someone else"}}
	if _, err := server.PublishCircuit(context.Background(), e.st, e.mat.Signer, "test", &other, time.Now()); !errors.Is(err, store.ErrExists) {
		t.Fatalf("other entry under a published id: %v", err)
	}
	code, body := e.do("GET", "/api/v1/registry/circuits?circuit_id="+keys.CircuitID, e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("get: %d %s", code, body)
	}
	got, err := zk.VerifyEntry(body, e.mat.Trust)
	if err != nil || got.CircuitID != keys.CircuitID {
		t.Fatalf("entry from the registry: %v", err)
	}
	model := commitment.String([]byte("no such model"))
	if code, body := e.do("GET", "/api/v1/registry/circuits?model_hash="+model, e.keyA, nil, nil); code != 404 || strings.TrimSpace(string(body)) != `{"found":false}` {
		t.Fatalf("unknown model: %d %s", code, body)
	}
	for _, q := range []string{"", "?model_hash=x", "?circuit_id=" + keys.CircuitID + "&model_hash=" + model,
		"?circuit_id=" + keys.CircuitID + "&circuit_id=" + keys.CircuitID, "?model_hash=" + model + "&model_hash=" + model,
		"?model_hash=" + strings.ToUpper(model), "?circuit_id=" + keys.CircuitID + "%00", "?circuit_id=" + strings.Repeat("a", 1<<16),
		// One reading: an empty parameter is not an absent one, and a
		// query string that does not parse is not read in part.
		"?model_hash=&circuit_id=" + keys.CircuitID, "?circuit_id=" + keys.CircuitID + "&model_hash=%zz", "?circuit_id=" + keys.CircuitID + ";x=1"} {
		if code, body := e.do("GET", "/api/v1/registry/circuits"+q, e.keyA, nil, nil); code != 400 {
			t.Fatalf("query %q: %d %s", q, code, body)
		}
	}
}

// Records with a zk_proof: accepted on a mathematical record when the
// proof verifies against the published entry; refused (422 naming the
// field) on another level, for an unpublished circuit, or when the proof
// does not match the record.
func TestRecordWithProof(t *testing.T) {
	e := newEnv(t)
	keys, err := zk.DevSetupCondition(conditions.Threshold)
	if err != nil {
		t.Fatal(err)
	}
	salt, _ := conditions.NewSalt()
	cp, err := zk.ProveCondition(keys, 640, 500, salt)
	if err != nil {
		t.Fatal(err)
	}
	proved := func(r *vpec.Record) {
		z := *cp.ZKProof
		r.ProofLevel, r.CommitmentAlgorithm, r.CommitmentHash, r.CheckResult, r.ZKProof = vpec.Mathematical, "poseidon2", cp.CommitmentHash, cp.CheckResult, &z
	}
	if _, code, eb, data := e.recordOne(e.keyA, proved); code != 422 || eb.Error.Code != api.CodeProofInvalid || eb.Error.Field != "zk_proof.circuit_id" {
		t.Fatalf("unpublished circuit: %d %s", code, data)
	}
	entry, _ := zk.NewEntry(keys, "", zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("t")), Contributors: []string{"operator"}}, time.Now())
	if _, err := server.PublishCircuit(context.Background(), e.st, e.mat.Signer, "test", entry, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, code, _, data := e.recordOne(e.keyA, proved); code != 201 {
		t.Fatalf("proved record: %d %s", code, data)
	}
	if _, code, eb, data := e.recordOne(e.keyA, func(r *vpec.Record) { proved(r); r.CheckResult = vpec.ResultFail }); code != 422 || eb.Error.Field != "zk_proof" {
		t.Fatalf("flipped result: %d %s", code, data)
	}
	if _, code, eb, data := e.recordOne(e.keyA, func(r *vpec.Record) { proved(r); r.ProofLevel = vpec.Execution }); code != 422 || eb.Error.Field != "zk_proof" {
		t.Fatalf("execution record with a proof: %d %s", code, data)
	}
	if _, code, eb, data := e.recordOne(e.keyA, func(r *vpec.Record) { r.ProofLevel = vpec.VerifiableInference }); code != 422 || eb.Error.Field != "proof_level" {
		t.Fatalf("verifiable_inference without a proof: %d %s", code, data)
	}
	// The verifications are counted: the proved record valid, the flipped
	// result invalid.
	fams := scrape(t, e.url)
	for _, result := range []string{"valid", "invalid"} {
		if n := sample(fams, "svc_zk_verifications_total", map[string]string{"result": result}); n < 1 {
			t.Errorf("svc_zk_verifications_total{result=%q} = %v", result, n)
		}
	}
	if n := sample(fams, "svc_zk_verification_duration_seconds", nil); n < 2 {
		t.Errorf("svc_zk_verification_duration_seconds count %v, want >= 2", n)
	}
}
