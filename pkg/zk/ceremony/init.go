package ceremony

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	cs "github.com/consensys/gnark/constraint/bn254"

	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// ReadR1CS decodes a BN254 constraint system in gnark's serialisation.
func ReadR1CS(data []byte) (*cs.R1CS, error) {
	ccs := new(cs.R1CS)
	if _, err := ccs.ReadFrom(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("%w: %s: not a BN254 R1CS: %v", ErrStateFile, R1CSFile, err)
	}
	return ccs, nil
}

// InitOptions say which ceremony Init starts.
type InitOptions struct {
	// Dir is the new ceremony's directory.
	Dir string
	// Phase is 1 or 2.
	Phase int
	// Power is phase 1's domain: 2^Power constraints (phase 1 only).
	Power int
	// Phase1Dir is the sealed phase-1 ceremony (phase 2 only).
	Phase1Dir string
	// Circuit is the built-in circuit to set up ("demo"); or give one of
	// Model, Quantized or R1CSFile (phase 2 only).
	Circuit string
	// Model is an ONNX MLP head (HeadCircuitFromONNX).
	Model string
	// Quantized is a quantised head as JSON (HeadCircuitFromQuantized),
	// from the ONNX model whose sha256 hash is ONNXModelHash (optional).
	Quantized     string
	ONNXModelHash string
	// R1CSFile is a BN254 constraint system in gnark's serialisation
	// (phase 2 only), named CircuitName in the transcript.
	R1CSFile    string
	CircuitName string
}

// Init starts phase 1 (InitPhase1) or phase 2 (InitPhase2 for the demo
// circuit or a constraint system read from a file), as opts say.
func Init(opts InitOptions) (*Ceremony, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	if opts.Phase == 1 {
		return InitPhase1(opts.Dir, opts.Power)
	}
	var circ Circuit
	var err error
	switch {
	case opts.Model != "":
		circ, err = HeadCircuitFromONNX(opts.Model)
	case opts.Quantized != "":
		circ, err = HeadCircuitFromQuantized(opts.Quantized, opts.ONNXModelHash)
	default:
		circ, err = LoadCircuit(opts.Circuit, opts.R1CSFile, opts.CircuitName)
	}
	if err != nil {
		return nil, err
	}
	return InitPhase2(opts.Dir, opts.Phase1Dir, circ)
}

// Check checks the options alone, reading nothing: a phase of 1 or 2,
// phase 1 with a power only, phase 2 with the phase-1 directory and
// exactly one circuit. Errors wrap ErrPhase or ErrCircuit.
func (opts InitOptions) Check() error {
	switch opts.Phase {
	case 1:
		if opts.Phase1Dir != "" || opts.Circuit != "" || opts.R1CSFile != "" || opts.Model != "" || opts.Quantized != "" {
			return fmt.Errorf("%w: phase 1 takes a power only; the circuit comes in phase 2", ErrPhase)
		}
		return nil
	case 2:
		if opts.Phase1Dir == "" {
			return fmt.Errorf("%w: phase 2 needs the sealed phase-1 ceremony directory", ErrPhase)
		}
		n := 0
		for _, s := range []string{opts.Circuit, opts.R1CSFile, opts.Model, opts.Quantized} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%w: give exactly one of a built-in circuit, an ONNX head, a quantised head or an R1CS file", ErrCircuit)
		}
		return nil
	}
	return fmt.Errorf("%w: phase %d: want 1 or 2", ErrPhase, opts.Phase)
}

// ErrCircuit: the circuit to set up is unknown or unreadable.
var ErrCircuit = errors.New("ceremony: no such circuit")

// LoadCircuit returns the built-in circuit named kind ("demo", or a
// condition circuit: threshold_check, truncation_check,
// below_threshold_check), or the constraint system in r1csFile named name
// (default: the file's base name).
func LoadCircuit(kind, r1csFile, name string) (Circuit, error) {
	switch {
	case kind != "" && r1csFile != "":
		return Circuit{}, fmt.Errorf("%w: give a built-in circuit or an R1CS file, not both", ErrCircuit)
	case kind == DemoCircuitName:
		return CompileDemo()
	case conditions.Kind(kind).Valid():
		ccs, err := conditions.Compile(conditions.Kind(kind))
		if err != nil {
			return Circuit{}, fmt.Errorf("%w: %w", ErrCircuit, err)
		}
		return Circuit{Name: kind, R1CS: ccs.(*cs.R1CS)}, nil
	case kind != "":
		return Circuit{}, fmt.Errorf("%w: %q (built in: %s, %s, %s, %s)", ErrCircuit, kind, DemoCircuitName, conditions.Threshold, conditions.Truncation, conditions.BelowThreshold)
	case r1csFile == "":
		return Circuit{}, fmt.Errorf("%w: give a built-in circuit or an R1CS file", ErrCircuit)
	}
	data, err := os.ReadFile(r1csFile)
	if err != nil {
		return Circuit{}, fmt.Errorf("%w: %w", ErrCircuit, err)
	}
	ccs, err := ReadR1CS(data)
	if err != nil {
		return Circuit{}, err
	}
	if name == "" {
		name = filepath.Base(r1csFile)
	}
	return Circuit{Name: name, R1CS: ccs}, nil
}
