package zkverify_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// TestCircuitNamesAreTheSchemas: the circuit names this package exports
// are exactly the zk_proof.circuit values the VPEC schema (pkg/core/vpec,
// which cannot import this package) accepts, each with the statement
// members of its kind; any other name is a schema error.
func TestCircuitNamesAreTheSchemas(t *testing.T) {
	one, two := int64(1), int64(2)
	proved := func(circuit string, level vpec.ProofLevel, z vpec.ZKProof) vpec.Record {
		z.System, z.Circuit = "groth16-bn254", circuit
		z.CircuitID = commitment.String([]byte(circuit))
		z.Proof = base64.StdEncoding.EncodeToString([]byte("proof"))
		r := vpec.Record{RecordID: "rec_1", Sequence: 1, Check: "c", ManifestID: "m", CheckResult: vpec.ResultPass, ProofLevel: level,
			CommitmentAlgorithm: "poseidon2", CommitmentHash: "poseidon2:" + strings.Repeat("0", 64), Visibility: vpec.Opaque,
			RecordedAt: "2026-11-22T00:00:00.000Z", ChainHash: commitment.String(nil), ZKProof: &z}
		if level == vpec.VerifiableInference {
			r.ONNXModelHash = commitment.String([]byte("model"))
		}
		return r
	}
	for _, tc := range []struct {
		circuit string
		level   vpec.ProofLevel
		z       vpec.ZKProof
		ok      bool
	}{
		{zkverify.CircuitMLPHead, vpec.VerifiableInference, vpec.ZKProof{Class: &one, Logits: []int64{3, 4}}, true},
		{zkverify.CircuitThreshold, vpec.Mathematical, vpec.ZKProof{Threshold: &two}, true},
		{zkverify.CircuitBelowThreshold, vpec.Mathematical, vpec.ZKProof{Threshold: &two}, true},
		{zkverify.CircuitTruncation, vpec.Mathematical, vpec.ZKProof{MaxTokens: &two}, true},
		{zkverify.CircuitTruncation, vpec.Mathematical, vpec.ZKProof{Threshold: &two}, false}, // another kind's member
		{"mlp_head_v2", vpec.VerifiableInference, vpec.ZKProof{Class: &one, Logits: []int64{3, 4}}, false},
		{"threshold", vpec.Mathematical, vpec.ZKProof{Threshold: &two}, false},
	} {
		r := proved(tc.circuit, tc.level, tc.z)
		if err := r.Validate(); (err == nil) != tc.ok || (err != nil && !errors.Is(err, vpec.ErrInvalidRecord)) {
			t.Errorf("circuit %q: Validate() = %v, want ok=%v", tc.circuit, err, tc.ok)
		}
	}
}
