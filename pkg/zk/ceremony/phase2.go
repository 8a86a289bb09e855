package ceremony

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"
	cs "github.com/consensys/gnark/constraint/bn254"

	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

// circuitPower is the log2 of a circuit's domain: the smallest power of
// two at least its constraint count (at least 2^1).
func circuitPower(constraints int) int {
	return max(transcript.MinPower, bits.Len(uint(constraints-1)))
}

// Circuit is a compiled circuit for phase 2.
type Circuit struct {
	// Name is a short name for people, e.g. "demo" or "mlp-head".
	Name string
	// ONNXModelHash is the sha256 hash of the ONNX model the circuit was
	// compiled from, if any.
	ONNXModelHash string
	// R1CS is the constraint system.
	R1CS *cs.R1CS
	// Files are written into the phase-2 directory beside the circuit
	// (e.g. HeadFile for a head).
	Files map[string][]byte
}

// InitPhase2 starts phase 2 for circ in dir (created if absent), on the
// sealed phase 1 in phase1Dir: it copies phase 1's transcript and sealed
// parameters (srs.bin), writes the circuit's constraint system and the
// phase's deterministic initial state.
func InitPhase2(dir, phase1Dir string, circ Circuit) (*Ceremony, error) {
	p1, err := Open(phase1Dir)
	if err != nil {
		return nil, err
	}
	if p1.T.Phase2 != nil {
		return nil, fmt.Errorf("%w: %s is a phase-2 ceremony; give the phase-1 directory", ErrPhase, phase1Dir)
	}
	if p1.T.Phase1.Beacon == "" {
		return nil, fmt.Errorf("%w: phase 1 in %s is not sealed: finalize it first", ErrPhase, phase1Dir)
	}
	if err := transcript.ValidName(circ.Name); err != nil {
		return nil, fmt.Errorf("%w: circuit name: %v", ErrArgument, err)
	}
	srsData, err := p1.readHashedSized(SRSFile, p1.T.Phase1.SRSHash, srsSize(p1.T.Phase1.Power))
	if err != nil {
		return nil, err
	}
	srs, err := readSRS(SRSFile, srsData, p1.T.Phase1.Power)
	if err != nil {
		return nil, err
	}
	nc := circ.R1CS.GetNbConstraints()
	power := circuitPower(nc)
	if power > p1.T.Phase1.Power {
		return nil, fmt.Errorf("%w: %d constraints need a domain of 2^%d, phase 1 has 2^%d", ErrSize, nc, power, p1.T.Phase1.Power)
	}
	r1csData, err := serialize(circ.R1CS)
	if err != nil {
		return nil, err
	}
	var p2 mpcsetup.Phase2
	p2.Initialize(circ.R1CS, truncateSRS(srs, power))
	initial, err := serialize(&p2)
	if err != nil {
		return nil, err
	}
	t := *p1.T
	t.Contributions = append([]transcript.Contribution{}, p1.T.Contributions...)
	t.Phase2 = &transcript.Phase2{
		Circuit:          circ.Name,
		ONNXModelHash:    circ.ONNXModelHash,
		R1CSHash:         transcript.HashBytes(r1csData),
		Constraints:      nc,
		Power:            power,
		InitialStateHash: transcript.HashBytes(initial),
	}
	c := &Ceremony{Dir: dir, T: &t}
	files := map[string][]byte{SRSFile: srsData, R1CSFile: r1csData, StateFile(2, 0): initial}
	for name, data := range circ.Files {
		files[name] = data
	}
	err = c.create(files)
	if err != nil {
		return nil, err
	}
	return c, nil
}
