package zk

import (
	"fmt"
	"time"
)

// DevSetupTranscript is the transcript_hash of an entry whose keys come
// from a single-party dev setup: SHA-256 of this string. Its contributors
// name the operator; such keys are no better than the operator's word.
const DevSetupTranscript = "svc.zk.dev-setup/v1: single-party groth16.Setup, no ceremony"

// PublishInput is what an operator publishes a circuit from.
type PublishInput struct {
	// Circuit is mlp_head, threshold_check or truncation_check.
	Circuit string
	// Model is the ONNX head of an mlp_head circuit (nil otherwise).
	Model []byte
	// VerifyingKey and ProvingKey are the keys of a ceremony (canonical
	// verifying key, gnark's compressed proving key); both nil with
	// DevSetup.
	VerifyingKey, ProvingKey []byte
	// Transcript is the ceremony's transcript file (its SHA-256 becomes
	// transcript_hash); Contributors name who contributed, in order.
	Transcript   []byte
	Contributors []string
	// DevSetup makes the keys with a single-party setup instead: for
	// trying things; the entry says so (DevSetupTranscript, Operator as
	// the only contributor).
	DevSetup bool
	Operator string
}

// PrepareEntry compiles the circuit, loads or makes its keys (loaded keys
// must prove and verify a sample statement, so keys of another circuit or
// model are refused), and returns the unsigned entry and the keys (whose
// proving key a dev setup's caller must save and hand to provers).
func PrepareEntry(in PublishInput, now time.Time) (*Entry, *Keys, error) {
	var k *Keys
	var cer Ceremony
	var err error
	model := in.Model
	if in.Circuit != "mlp_head" {
		model = nil
	}
	if in.DevSetup {
		if in.VerifyingKey != nil || in.ProvingKey != nil || in.Transcript != nil {
			return nil, nil, fmt.Errorf("%w: a dev setup makes its own keys: give no keys or transcript", ErrKeys)
		}
		if k, err = DevSetup(in.Circuit, model); err != nil {
			return nil, nil, err
		}
		op := in.Operator
		if op == "" {
			op = "operator"
		}
		cer = Ceremony{TranscriptHash: HashBytes([]byte(DevSetupTranscript)), Contributors: []string{op + " (single-party dev setup)"}}
	} else {
		if in.VerifyingKey == nil || in.ProvingKey == nil || in.Transcript == nil || len(in.Contributors) == 0 {
			return nil, nil, fmt.Errorf("%w: publishing ceremony keys needs the verifying key, the proving key, the transcript and its contributors", ErrKeys)
		}
		if k, err = LoadKeys(in.Circuit, model, in.VerifyingKey, in.ProvingKey); err != nil {
			return nil, nil, err
		}
		cer = Ceremony{TranscriptHash: HashBytes(in.Transcript), Contributors: in.Contributors}
	}
	e, err := NewEntry(k, k.ModelHash, cer, now)
	if err != nil {
		return nil, nil, err
	}
	return e, k, nil
}
