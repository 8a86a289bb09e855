package conditions

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/test"
)

// TestRelations: for every kind and the boundary values, the constraints
// hold with the honest passed bit and fail with the flipped one (a prover
// cannot claim the other outcome), and the kinds' relations are what the
// documentation says: below_threshold_check is exactly the negation of
// threshold_check.
func TestRelations(t *testing.T) {
	var salt Salt
	salt[31] = 7
	pairs := [][2]uint32{{0, 0}, {0, 1}, {1, 0}, {5, 5}, {4, 5}, {6, 5}, {MaxValue, MaxValue}, {MaxValue - 1, MaxValue}, {MaxValue, 0}, {0, MaxValue}}
	for _, k := range Kinds() {
		for _, pr := range pairs {
			v, b := pr[0], pr[1]
			want := Holds(k, v, b)
			switch k {
			case Threshold:
				if want != (v >= b) {
					t.Fatalf("threshold %d %d", v, b)
				}
			case BelowThreshold:
				if want != (v < b) || want == Holds(Threshold, v, b) {
					t.Fatalf("below %d %d", v, b)
				}
			case Truncation:
				if want != (v <= b) {
					t.Fatalf("truncation %d %d", v, b)
				}
			}
			for _, passed := range []bool{want, !want} {
				cm, err := Commit(k, v, salt)
				if err != nil {
					t.Fatal(err)
				}
				var cmE, se fr.Element
				cmE.SetBytes(cm[:])
				se.SetBytes(salt[:])
				a := &Circuit{Commitment: cmE, Bound: b, Value: v, Salt: se, Passed: 0}
				if passed {
					a.Passed = 1
				}
				c, _ := New(k)
				err = test.IsSolved(c, a, ecc.BN254.ScalarField())
				if (err == nil) != (passed == want) {
					t.Errorf("%s v=%d b=%d passed=%v: solved err %v", k, v, b, passed, err)
				}
			}
		}
	}
}

// TestKindsSeparated: a below_threshold_check commitment differs from the
// threshold_check commitment of the same value and salt (different
// domains), and a below proof verifies only under the below key, with its
// own statement: not with the opposite bit, not under a threshold_check key.
func TestKindsSeparated(t *testing.T) {
	var salt Salt
	salt[31] = 9
	a, _ := Commit(BelowThreshold, 731, salt)
	b, _ := Commit(Threshold, 731, salt)
	if a == b {
		t.Fatal("same commitment under two domains")
	}
	bccs, err := Compile(BelowThreshold)
	if err != nil {
		t.Fatal(err)
	}
	tccs, err := Compile(Threshold)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("constraints: below_threshold_check %d, threshold_check %d", bccs.GetNbConstraints(), tccs.GetNbConstraints())
	bpk, bvk, err := groth16.Setup(bccs)
	if err != nil {
		t.Fatal(err)
	}
	_, tvk, err := groth16.Setup(tccs)
	if err != nil {
		t.Fatal(err)
	}
	proof, st, err := Prove(BelowThreshold, bccs, bpk, 731, 2000, salt)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Passed || st.Commitment != a {
		t.Fatalf("statement %+v", st)
	}
	w, err := st.PublicWitness()
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, bvk, w); err != nil {
		t.Fatalf("honest below proof: %v", err)
	}
	flipped := st
	flipped.Passed = false
	fw, _ := flipped.PublicWitness()
	if groth16.Verify(proof, bvk, fw) == nil {
		t.Fatal("a below proof verified with the opposite bit")
	}
	as := st
	as.Kind = Threshold
	aw, _ := as.PublicWitness()
	if groth16.Verify(proof, tvk, aw) == nil {
		t.Fatal("a below proof verified under a threshold_check key")
	}
}
