package ceremony_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/zk/ceremony"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// The condition circuits are built in (svc zk ceremony init --circuit
// below_threshold_check): the constraint system a ceremony sets up is
// byte for byte the one the publisher and the prover compile, so the
// published keys match (publish-circuit compares their hashes).
func TestBuiltInConditionCircuits(t *testing.T) {
	for _, k := range conditions.Kinds() {
		c, err := ceremony.LoadCircuit(string(k), "", "")
		if err != nil {
			t.Fatal(err)
		}
		ccs, err := conditions.Compile(k)
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		if _, err := c.R1CS.WriteTo(&a); err != nil {
			t.Fatal(err)
		}
		if _, err := ccs.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		if c.Name != string(k) || !bytes.Equal(a.Bytes(), b.Bytes()) || c.R1CS.GetNbConstraints() != 475 {
			t.Fatalf("%s: name %q, %d constraints, same bytes %v", k, c.Name, c.R1CS.GetNbConstraints(), bytes.Equal(a.Bytes(), b.Bytes()))
		}
	}
	if _, err := ceremony.LoadCircuit("above_threshold_check", "", ""); !errors.Is(err, ceremony.ErrCircuit) {
		t.Fatalf("unknown circuit: %v", err)
	}
}
