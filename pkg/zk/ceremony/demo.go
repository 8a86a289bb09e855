package ceremony

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/std/rangecheck"
)

// DemoCircuitName is the name of the built-in demo circuit.
const DemoCircuitName = "demo"

// DemoCircuit is a tiny circuit for trying a ceremony quickly and for
// tests: knowledge of a secret X below 2^16 with X³ + X + 5 = Y, Y public.
// The range check uses gnark's commitment-based lookup, as the MLP head
// circuits do, so a demo ceremony exercises the same phase-2 parts (the
// σ of each commitment) as a real one. It has a few dozen constraints.
type DemoCircuit struct {
	// X is the secret.
	X frontend.Variable
	// Y is the public output.
	Y frontend.Variable `gnark:",public"`
}

// Define declares the circuit's constraints.
func (c *DemoCircuit) Define(api frontend.API) error {
	x3 := api.Mul(c.X, c.X, c.X)
	api.AssertIsEqual(c.Y, api.Add(x3, c.X, 5))
	rangecheck.New(api).Check(c.X, 16)
	return nil
}

// DemoAssignment returns a satisfying assignment of DemoCircuit for x.
func DemoAssignment(x uint64) *DemoCircuit {
	return &DemoCircuit{X: x, Y: x*x*x + x + 5}
}

// CompileDemo compiles DemoCircuit for BN254.
func CompileDemo() (Circuit, error) {
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &DemoCircuit{})
	if err != nil {
		return Circuit{}, fmt.Errorf("compile demo circuit: %w", err)
	}
	return Circuit{Name: DemoCircuitName, R1CS: ccs.(*cs.R1CS)}, nil
}
