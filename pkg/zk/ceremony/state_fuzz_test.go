package ceremony

import (
	"bytes"
	"errors"
	"testing"

	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"
	"github.com/consensys/gnark/logger"
)

// fuzzSeeds returns real states: an initial and a contributed phase-1 state
// of a 2^5 domain, the sealed parameters, and an initial and a contributed
// phase-2 state of the demo circuit.
func fuzzSeeds(tb testing.TB) (p1a, p1b, srs, p2a, p2b []byte, shape *mpcsetup.Phase2) {
	logger.Disable()
	const power = 5
	p1a, p, err := phase1Initial(power)
	if err != nil {
		tb.Fatal(err)
	}
	p.Contribute()
	p1b, _ = serialize(p)
	commons := p.Seal([]byte("fuzz beacon 0123456789"))
	srs, _ = serialize(&commons)
	circ, err := CompileDemo()
	if err != nil {
		tb.Fatal(err)
	}
	shape = new(mpcsetup.Phase2)
	shape.Initialize(circ.R1CS, truncateSRS(&commons, circuitPower(circ.R1CS.GetNbConstraints())))
	p2a, _ = serialize(shape)
	var q mpcsetup.Phase2
	if _, err := q.ReadFrom(bytes.NewReader(p2a)); err != nil {
		tb.Fatal(err)
	}
	q.Contribute()
	p2b, _ = serialize(&q)
	return p1a, p1b, srs, p2a, p2b, shape
}

// FuzzReadState: the decoders of state files (untrusted: they come from
// other contributors) never panic or allocate beyond the file's size, and
// what they accept re-serializes to the same bytes.
func FuzzReadState(f *testing.F) {
	p1a, p1b, srs, p2a, p2b, shape := fuzzSeeds(f)
	for _, s := range [][]byte{p1a, p1b, srs, p2a, p2b} {
		for kind := range byte(5) {
			f.Add(kind, s)
		}
	}
	f.Add(byte(3), []byte{0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, kind byte, data []byte) {
		var err error
		switch kind % 5 {
		case 0:
			_, err = readPhase1("f", data, 5, true)
		case 1:
			_, err = readPhase1("f", data, 5, false)
		case 2:
			_, err = readSRS("f", data, 5)
		case 3:
			_, err = readPhase2("f", data, nil, kind%2 == 0)
		case 4:
			_, err = readPhase2("f", data, shape, kind%2 == 0)
		}
		if err != nil && !errors.Is(err, ErrStateFile) {
			t.Fatalf("error %v does not match ErrStateFile", err)
		}
	})
}

// TestReadStateRefuses: the checks before gnark's decoder refuse a wrong
// domain, a wrong size, an inflated vector length and uncompressed or
// otherwise non-canonical bytes.
func TestReadStateRefuses(t *testing.T) {
	p1a, p1b, srs, p2a, p2b, shape := fuzzSeeds(t)
	if _, err := readPhase1("a", p1a, 5, true); err != nil {
		t.Fatal(err)
	}
	if _, err := readPhase1("b", p1b, 5, false); err != nil {
		t.Fatal(err)
	}
	if _, err := readSRS("s", srs, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := readPhase2("c", p2a, nil, true); err != nil {
		t.Fatal(err)
	}
	if _, err := readPhase2("d", p2b, shape, false); err != nil {
		t.Fatal(err)
	}
	bad := map[string]error{}
	_, bad["phase 1 of another domain"] = readPhase1("b", p1b, 4, false)
	_, bad["phase 1 truncated"] = readPhase1("b", p1b[:len(p1b)-1], 5, false)
	_, bad["initial read as contribution"] = readPhase1("a", p1a, 5, false)
	inflated := bytes.Clone(p2b)
	inflated[2+g1Size] = 0x7f // PKK's length prefix
	_, bad["inflated vector"] = readPhase2("d", inflated, nil, false)
	_, bad["inflated vector, shaped"] = readPhase2("d", inflated, shape, false)
	flipped := bytes.Clone(p1b)
	flipped[phase1Head+8+5] ^= 0x01 // a coordinate of [β]₂: off the curve or another point
	_, bad["altered point"] = readPhase1("b", flipped, 5, false)
	for name, err := range bad {
		if !errors.Is(err, ErrStateFile) {
			t.Errorf("%s: got %v, want ErrStateFile", name, err)
		}
	}
}
