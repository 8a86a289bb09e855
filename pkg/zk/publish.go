package zk

import (
	"bytes"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
	"github.com/svc-gov/svc/pkg/zk/zkverify/ceremonycheck"
)

// DevSetupTranscript is the transcript_hash of an entry whose keys come
// from a single-party dev setup: SHA-256 of this string. Its contributors
// name the operator; such keys are no better than the operator's word.
const DevSetupTranscript = "svc.zk.dev-setup/v1: single-party groth16.Setup, no ceremony"

// PublishInput is what an operator publishes a circuit from.
type PublishInput struct {
	// Circuit is mlp_head, threshold_check, truncation_check or
	// below_threshold_check.
	Circuit string
	// Model is the ONNX head of an mlp_head circuit (nil otherwise).
	Model []byte
	// VerifyingKey and ProvingKey are the keys of a ceremony (canonical
	// verifying key, gnark's compressed proving key); both nil with
	// DevSetup.
	VerifyingKey, ProvingKey []byte
	// Transcript is the finalized ceremony's transcript.json: it must
	// record both keys' hashes (and the model of a head); its hash becomes
	// transcript_hash and its contributors the entry's.
	Transcript []byte
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
		if in.VerifyingKey == nil || in.ProvingKey == nil || in.Transcript == nil {
			return nil, nil, fmt.Errorf("%w: publishing ceremony keys needs the verifying key, the proving key and the ceremony's transcript", ErrKeys)
		}
		var r1csHash string
		if cer, r1csHash, err = CeremonyOf(in.Transcript, in.VerifyingKey, in.ProvingKey, model); err != nil {
			return nil, nil, err
		}
		if k, err = LoadKeys(in.Circuit, model, in.VerifyingKey, in.ProvingKey); err != nil {
			return nil, nil, err
		}
		var b bytes.Buffer
		if _, err := k.CCS.WriteTo(&b); err != nil {
			return nil, nil, fmt.Errorf("zk: encode constraint system: %w", err)
		}
		if got := HashBytes(b.Bytes()); got != r1csHash {
			return nil, nil, fmt.Errorf("%w: it set up constraint system %s; the %s circuit compiles to %s", ErrTranscript, shortID(r1csHash), in.Circuit, shortID(got))
		}
	}
	e, err := NewEntry(k, k.ModelHash, cer, now)
	if err != nil {
		return nil, nil, err
	}
	return e, k, nil
}

// ErrTranscript reports a ceremony transcript that does not vouch for the
// keys being published.
var ErrTranscript = ceremonycheck.ErrTranscript

// CeremonyOf reads a finalized ceremony's transcript (pkg/zk/ceremony) and
// checks that it sealed exactly these keys (its phase 2 records their
// SHA-256) for this model (a head's onnx_model_hash, when model is not
// nil). It returns the entry's ceremony block and the hash of the
// constraint system the ceremony set up (which the caller compares with
// its own compiled circuit): the transcript's hash and
// its contributors in order, each named with its phase ("Example Org
// (phase 1)"), since the keys are sound if one contributor of each phase
// discarded their randomness.
func CeremonyOf(transcriptJSON, vk, pk, model []byte) (_ Ceremony, r1csHash string, _ error) {
	t, hash, err := transcript.Parse(transcriptJSON)
	if err != nil {
		return Ceremony{}, "", fmt.Errorf("%w: %v", ErrTranscript, err)
	}
	p2 := t.Phase2
	switch {
	case p2 == nil || p2.Beacon == "":
		return Ceremony{}, "", fmt.Errorf("%w: phase 2 is not finalized", ErrTranscript)
	case p2.VerifyingKeyHash != HashBytes(vk):
		return Ceremony{}, "", fmt.Errorf("%w: it sealed verifying key %s, not this one (%s)", ErrTranscript, shortID(p2.VerifyingKeyHash), shortID(HashBytes(vk)))
	case p2.ProvingKeyHash != HashBytes(pk):
		return Ceremony{}, "", fmt.Errorf("%w: it sealed proving key %s, not this one (%s)", ErrTranscript, shortID(p2.ProvingKeyHash), shortID(HashBytes(pk)))
	case model != nil && p2.ONNXModelHash != "" && p2.ONNXModelHash != HashBytes(model):
		return Ceremony{}, "", fmt.Errorf("%w: it set up model %s, not this one (%s)", ErrTranscript, shortID(p2.ONNXModelHash), shortID(HashBytes(model)))
	}
	var names []string
	for _, ph := range []int{1, 2} {
		for _, n := range t.Contributors(ph) {
			names = append(names, fmt.Sprintf("%s (phase %d)", n, ph))
		}
	}
	return Ceremony{TranscriptHash: hash, Contributors: names}, p2.R1CSHash, nil
}

// CheckTranscript checks a signed entry against the ceremony transcript it
// names (ceremonycheck.CheckTranscript).
func CheckTranscript(e *Entry, transcriptJSON []byte) error {
	return ceremonycheck.CheckTranscript(e, transcriptJSON)
}
