package ceremony

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	cs "github.com/consensys/gnark/constraint/bn254"

	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
	"github.com/svc-gov/svc/pkg/zk/head"
)

// HeadCircuitName is the circuit name of an MLP head in a transcript.
const HeadCircuitName = "mlp-head"

// HeadFile is the quantised head a head ceremony sets up, written into the
// phase-2 directory: the exact integers the circuit computes, which the
// prover must use (head.Compile of it gives the ceremony's constraint
// system, whose hash the transcript records).
const HeadFile = "head.json"

// Calibration of --model: heads quantised by the ceremony itself are
// calibrated on head.RandomCorpus(input width, HeadCalibrationVectors,
// HeadCalibrationSeed). Give a quantised head (HeadCircuitFromQuantized)
// to use another calibration, e.g. real pooled embeddings.
const (
	HeadCalibrationVectors = 256
	HeadCalibrationSeed    = 1
)

// HeadCircuitFromONNX loads an ONNX MLP head, quantises it with the
// default calibration and compiles it. The transcript names the model's
// sha256 hash; HeadFile holds the quantised head.
func HeadCircuitFromONNX(path string) (Circuit, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Circuit{}, fmt.Errorf("%w: %w", ErrCircuit, err)
	}
	m, err := head.LoadONNX(data)
	if err != nil {
		return Circuit{}, fmt.Errorf("%w: %s: %w", ErrCircuit, path, err)
	}
	q, _, err := head.Quantize(m, head.RandomCorpus(m.Dims()[0], HeadCalibrationVectors, HeadCalibrationSeed))
	if err != nil {
		return Circuit{}, fmt.Errorf("%w: %s: %w", ErrCircuit, path, err)
	}
	c, err := headCircuit(q)
	if err != nil {
		return Circuit{}, err
	}
	c.ONNXModelHash = transcript.HashBytes(data)
	return c, nil
}

// HeadCircuitFromQuantized reads a quantised head (head.Quantized as
// JSON, strictly decoded and checked) and compiles it; onnxModelHash, if
// not empty, is the sha256 hash of the ONNX model it came from.
func HeadCircuitFromQuantized(path, onnxModelHash string) (Circuit, error) {
	if onnxModelHash != "" && !transcript.ValidHash(onnxModelHash) {
		return Circuit{}, fmt.Errorf("%w: ONNX model hash %q: want sha256: and 64 lowercase hex digits", ErrArgument, onnxModelHash)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Circuit{}, fmt.Errorf("%w: %w", ErrCircuit, err)
	}
	q, err := decodeQuantized(data)
	if err != nil {
		return Circuit{}, fmt.Errorf("%w: %s: %w", ErrCircuit, path, err)
	}
	c, err := headCircuit(q)
	if err != nil {
		return Circuit{}, err
	}
	c.ONNXModelHash = onnxModelHash
	return c, nil
}

func headCircuit(q *head.Quantized) (Circuit, error) {
	compiled, err := head.Compile(q)
	if err != nil {
		return Circuit{}, fmt.Errorf("%w: %w", ErrCircuit, err)
	}
	ccs, ok := compiled.CS.(*cs.R1CS)
	if !ok {
		return Circuit{}, fmt.Errorf("%w: the head did not compile to a BN254 R1CS", ErrCircuit)
	}
	raw, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return Circuit{}, fmt.Errorf("encode quantised head: %w", err)
	}
	return Circuit{Name: HeadCircuitName, R1CS: ccs, Files: map[string][]byte{HeadFile: append(raw, '\n')}}, nil
}

// decodeQuantized decodes a quantised head: I-JSON (document.ParseTree's
// input rules), no unknown members, nothing after the object; head.Compile
// then checks its shapes and bounds (Quantized.Check).
func decodeQuantized(data []byte) (*head.Quantized, error) {
	if _, err := document.ParseTree(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var q head.Quantized
	if err := dec.Decode(&q); err != nil {
		return nil, fmt.Errorf("not a quantised head: %w", err)
	}
	return &q, nil
}
