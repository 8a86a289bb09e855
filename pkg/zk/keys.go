package zk

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/head"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// The canonical calibration corpus of a head's quantisation: the circuit
// of an ONNX head is a function of the model bytes alone, so the operator
// who publishes it and every client that proves with it compile the same
// constraints. It is head.RandomCorpus(input width, CorpusSize, CorpusSeed).
const (
	CorpusSize = 256
	CorpusSeed = 1
)

// ErrKeys reports keys that do not belong together or to the circuit.
var ErrKeys = errors.New("zk: keys do not match the circuit")

// QuantizeHead loads an ONNX MLP head and quantises it on the canonical
// corpus. It returns the head's onnx_model_hash with the quantisation
// report (agreement with the float model on the corpus).
func QuantizeHead(onnx []byte) (*head.Quantized, head.Report, string, error) {
	m, err := head.LoadONNX(onnx)
	if err != nil {
		return nil, head.Report{}, "", err
	}
	q, rep, err := head.Quantize(m, head.RandomCorpus(m.Dims()[0], CorpusSize, CorpusSeed))
	if err != nil {
		return nil, head.Report{}, "", err
	}
	return q, rep, commitment.String(onnx), nil
}

// compile returns the constraint system of a circuit; onnx is the model
// of an mlp_head circuit (nil for conditions).
func compile(circuit string, onnx []byte) (*Keys, error) {
	switch circuit {
	case zkverify.CircuitMLPHead:
		if onnx == nil {
			return nil, fmt.Errorf("%w: an mlp_head circuit needs its ONNX model", ErrKeys)
		}
		q, _, modelHash, err := QuantizeHead(onnx)
		if err != nil {
			return nil, err
		}
		c, err := head.Compile(q)
		if err != nil {
			return nil, err
		}
		return &Keys{Circuit: circuit, Head: c, ModelHash: modelHash, CCS: c.CS}, nil
	case zkverify.CircuitThreshold, zkverify.CircuitTruncation, zkverify.CircuitBelowThreshold:
		if onnx != nil {
			return nil, fmt.Errorf("%w: a %s circuit proves no model", ErrKeys, circuit)
		}
		ccs, err := conditions.Compile(conditions.Kind(circuit))
		if err != nil {
			return nil, err
		}
		return &Keys{Circuit: circuit, CCS: ccs}, nil
	}
	return nil, fmt.Errorf("%w: unknown circuit %q", ErrKeys, circuit)
}

// DevSetup compiles a circuit (onnx: the model of an mlp_head circuit, nil
// otherwise) and makes its keys with a single-party setup: for tests and
// trying things only; whoever ran it can forge proofs.
func DevSetup(circuit string, onnx []byte) (*Keys, error) {
	k, err := compile(circuit, onnx)
	if err != nil {
		return nil, err
	}
	pk, vk, err := groth16.Setup(k.CCS)
	if err != nil {
		return nil, fmt.Errorf("zk: setup %s: %w", circuit, err)
	}
	k.PK, k.VK = pk, vk
	vkb, err := MarshalVerifyingKey(vk)
	if err != nil {
		return nil, err
	}
	k.CircuitID = CircuitID(vkb)
	return k, nil
}

// LoadKeys compiles a circuit and reads its keys (from a ceremony or a
// dev setup): vkBytes canonical, pkBytes gnark's compressed encoding. It
// proves and verifies one sample statement, so keys made for another
// circuit (another model, another condition) are refused with ErrKeys.
func LoadKeys(circuit string, onnx, vkBytes, pkBytes []byte) (*Keys, error) {
	k, err := compile(circuit, onnx)
	if err != nil {
		return nil, err
	}
	if k.VK, err = ParseVerifyingKey(vkBytes); err != nil {
		return nil, err
	}
	k.CircuitID = CircuitID(vkBytes)
	pk := groth16.NewProvingKey(ecc.BN254)
	n, err := readFrom(pk, pkBytes)
	if err != nil || n != int64(len(pkBytes)) {
		return nil, fmt.Errorf("%w: proving key is not gnark's encoding of one BN254 Groth16 key", ErrEncoding)
	}
	k.PK = pk
	if err := k.selfTest(); err != nil {
		return nil, err
	}
	return k, nil
}

// LoadEntryKeys loads the keys of a signed entry's circuit: the proving
// key must hash to the entry's proving_key_hash, the model (mlp_head) to
// its onnx_model_hash.
func LoadEntryKeys(e *Entry, onnx, pkBytes []byte) (*Keys, error) {
	if got := HashBytes(pkBytes); got != e.ProvingKeyHash {
		return nil, fmt.Errorf("%w: the proving key hashes to %s, circuit entry %s binds %s", ErrKeys, shortID(got), shortID(e.CircuitID), shortID(e.ProvingKeyHash))
	}
	if e.Circuit == zkverify.CircuitMLPHead {
		if got := commitment.String(onnx); got != e.ONNXModelHash {
			return nil, fmt.Errorf("%w: the model hashes to %s, circuit entry %s proves %s", ErrKeys, shortID(got), shortID(e.CircuitID), shortID(e.ONNXModelHash))
		}
	} else {
		onnx = nil
	}
	vk, err := e.VerifyingKeyBytes()
	if err != nil {
		return nil, err
	}
	return LoadKeys(e.Circuit, onnx, vk, pkBytes)
}

// selfTest proves a sample statement with the proving key and verifies
// it with the verifying key.
func (k *Keys) selfTest() (err error) {
	// gnark's prover panics on a key made for another constraint system.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: the proving key does not fit the %s circuit (%v)", ErrKeys, k.Circuit, p)
		}
	}()
	vkb, err := MarshalVerifyingKey(k.VK)
	if err != nil {
		return err
	}
	switch {
	case k.Head != nil:
		pk, ok := k.PK.(*groth16bn254.ProvingKey)
		if !ok {
			return fmt.Errorf("%w: not a BN254 proving key", ErrKeys)
		}
		x := make([]int8, k.Head.Q.Dims()[0])
		for i := range x {
			x[i] = int8(i%255 - 127)
		}
		proof, pub, err := head.Prove(k.Head, pk, x)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrKeys, err)
		}
		if err := head.Verify(vkb, proof, pub); err != nil {
			return fmt.Errorf("%w: a proof made with the proving key does not verify under the verifying key: %v", ErrKeys, err)
		}
	default:
		salt, err := conditions.NewSalt()
		if err != nil {
			return err
		}
		cp, err := ProveCondition(k, 1, 1, salt)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrKeys, err)
		}
		r := &vpec.Record{CommitmentHash: cp.CommitmentHash, CheckResult: cp.CheckResult, ZKProof: cp.ZKProof}
		w, err := PublicWitness(r)
		if err != nil {
			return err
		}
		pb, _ := base64.StdEncoding.DecodeString(cp.ZKProof.Proof)
		if err := Verify(vkb, pb, w); err != nil {
			return fmt.Errorf("%w: a proof made with the proving key does not verify under the verifying key: %v", ErrKeys, err)
		}
	}
	return nil
}
