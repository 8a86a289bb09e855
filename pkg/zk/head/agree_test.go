package head

import (
	"testing"

	"github.com/svc-gov/svc/pkg/zk/internal/gnarkcheck"
)

// TestAgreesWithGnark: zkverify's verifier (gnark-crypto alone) and
// gnark's give the same result on a head proof (one Pedersen commitment)
// and every mutation of it.
func TestAgreesWithGnark(t *testing.T) {
	f := smallFixture(t)
	proof, pub, err := Prove(f.c, f.pk, f.q.QuantizeInput(f.corpus[0]))
	if err != nil {
		t.Fatal(err)
	}
	v, err := pub.Vector()
	if err != nil {
		t.Fatal(err)
	}
	cases := gnarkcheck.Cases(proof, v)
	if n := gnarkcheck.Agree(t, f.vk, cases); n != 1 {
		t.Errorf("%d of %d cases verified, want only the honest one", n, len(cases))
	}
}
