package ceremony

import (
	"bytes"
	"fmt"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"
	cs "github.com/consensys/gnark/constraint/bn254"

	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

// Result is what Verify checked.
type Result struct {
	// Transcript is the ceremony's transcript.
	Transcript *transcript.Transcript
	// TranscriptHash is the transcript's hash.
	TranscriptHash string
	// Phase1Checked is the number of phase-1 contributions whose proofs were
	// verified against the state files (0 when they were not available).
	Phase1Checked int
	// Phase1Files says whether phase 1's state files were available.
	Phase1Files bool
	// Phase2Checked is the number of phase-2 contributions verified.
	Phase2Checked int
	// Sealed and Finalized say whether the seal of phase 1 and the keys of
	// phase 2 were recomputed and matched.
	Sealed, Finalized bool

	srs   *mpcsetup.SrsCommons // phase 1's sealed parameters, when known
	last2 *mpcsetup.Phase2     // phase 2's last state, for the seal
	evals *mpcsetup.Phase2Evaluations
	r1cs  *cs.R1CS
	pk    groth16.ProvingKey
	vk    groth16.VerifyingKey
}

// VerifyOptions adjust Verify.
type VerifyOptions struct {
	// Phase1Dir is the phase-1 ceremony directory, whose state files let a
	// phase-2 ceremony's phase-1 contributions be verified too. Empty: a
	// phase-2 ceremony's phase 1 is checked only through srs.bin's hash.
	Phase1Dir string
}

// Verify runs the full check of the ceremony in dir: the transcript's
// rules; every state file's hash against the transcript; each phase's
// initial state recomputed from its inputs; for every contribution, that
// its challenge is its predecessor's hash and gnark's proofs of the update
// verify; where sealed, the seal recomputed from the beacon (srs.bin,
// proving.key and verifying.key must be exactly what it gives).
func Verify(dir string, opts VerifyOptions) (*Result, error) {
	c, err := Open(dir)
	if err != nil {
		return nil, err
	}
	return c.verify(opts)
}

func (c *Ceremony) verify(opts VerifyOptions) (*Result, error) {
	_, h, err := c.T.Marshal()
	if err != nil {
		return nil, err
	}
	r := &Result{Transcript: c.T, TranscriptHash: h}
	phase1Dir := c.Dir
	if c.T.Phase2 != nil {
		phase1Dir = opts.Phase1Dir
	}
	if phase1Dir != "" {
		if err := c.verifyPhase1(phase1Dir, r); err != nil {
			return nil, err
		}
	}
	if c.T.Phase2 != nil {
		if err := c.verifyPhase2(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// verifyPhase1 checks phase 1 against the state files in dir.
func (c *Ceremony) verifyPhase1(dir string, r *Result) error {
	fc := &Ceremony{Dir: dir, T: c.T}
	if dir != c.Dir {
		other, err := Open(dir)
		if err != nil {
			return err
		}
		if other.T.Phase1 != c.T.Phase1 || !equalContributions(other.T.Contributions, c.T.Contributions[:c.count(1)]) {
			return fmt.Errorf("%w: the phase-1 ceremony in %s is not the one this transcript records", ErrStateHash, dir)
		}
	}
	power := c.T.Phase1.Power
	want, prev, err := phase1Initial(power)
	if err != nil {
		return err
	}
	prevData, err := fc.readHashedSized(StateFile(1, 0), c.T.Phase1.InitialStateHash, phase1Size(power, true))
	if err != nil {
		return err
	}
	if !bytes.Equal(prevData, want) {
		return fmt.Errorf("%w: %s is not the initial state of a 2^%d domain", ErrStateHash, StateFile(1, 0), power)
	}
	for k, e := range c.T.Contributions[:c.count(1)] {
		name := StateFile(1, k+1)
		data, err := fc.readHashedSized(name, e.StateHash, phase1Size(power, false))
		if err != nil {
			return err
		}
		next, err := readPhase1(name, data, power, false)
		if err != nil {
			return err
		}
		if got := phase1ContributionHash(data); got != e.ContributionHash {
			return fmt.Errorf("%w: contributions[%d].contribution_hash is %s, %s holds %s", ErrStateHash, k, e.ContributionHash, name, got)
		}
		if err := step(func() error { return prev.Verify(next) }, next.Challenge, prevData, c.label(k)); err != nil {
			return err
		}
		prev, prevData = next, data
		r.Phase1Checked++
	}
	r.Phase1Files = true
	if c.T.Phase1.Beacon == "" {
		return nil
	}
	beacon, err := transcript.ParseBeacon(c.T.Phase1.Beacon)
	if err != nil {
		return err
	}
	srs := prev.Seal(beacon)
	srsData, err := serialize(&srs)
	if err != nil {
		return err
	}
	if got := transcript.HashBytes(srsData); got != c.T.Phase1.SRSHash {
		return fmt.Errorf("%w: phase 1 sealed with the beacon gives parameters with hash %s, the transcript records %s", transcript.ErrKeyMismatch, got, c.T.Phase1.SRSHash)
	}
	if _, err := fc.readHashedSized(SRSFile, c.T.Phase1.SRSHash, srsSize(power)); err != nil {
		return err
	}
	r.srs, r.Sealed = &srs, true
	return nil
}

func equalContributions(a, b []transcript.Contribution) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// verifyPhase2 checks phase 2 against the files in c.Dir.
func (c *Ceremony) verifyPhase2(r *Result) error {
	p := c.T.Phase2
	srsData, err := c.readHashedSized(SRSFile, c.T.Phase1.SRSHash, srsSize(c.T.Phase1.Power))
	if err != nil {
		return err
	}
	srs, err := readSRS(SRSFile, srsData, c.T.Phase1.Power)
	if err != nil {
		return err
	}
	r1csData, err := c.readHashed(R1CSFile, p.R1CSHash)
	if err != nil {
		return err
	}
	ccs, err := ReadR1CS(r1csData)
	if err != nil {
		return err
	}
	if n := ccs.GetNbConstraints(); n != p.Constraints || circuitPower(n) != p.Power {
		return fmt.Errorf("%w: %s has %d constraints, the transcript records %d (power %d)", ErrStateHash, R1CSFile, n, p.Constraints, p.Power)
	}
	var prev mpcsetup.Phase2
	evals := prev.Initialize(ccs, truncateSRS(srs, p.Power))
	prevData, err := serialize(&prev)
	if err != nil {
		return err
	}
	if got := transcript.HashBytes(prevData); got != p.InitialStateHash {
		return fmt.Errorf("%w: the circuit and phase 1's parameters give an initial phase-2 state with hash %s, the transcript records %s", ErrStateHash, got, p.InitialStateHash)
	}
	if _, err := c.readHashed(StateFile(2, 0), p.InitialStateHash); err != nil {
		return err
	}
	last := &prev
	first := c.count(1)
	for k, e := range c.T.Contributions[first:] {
		name := StateFile(2, k+1)
		data, err := c.readHashed(name, e.StateHash)
		if err != nil {
			return err
		}
		next, err := readPhase2(name, data, &prev, false)
		if err != nil {
			return err
		}
		got, err := phase2ContributionHash(next)
		if err != nil {
			return err
		}
		if got != e.ContributionHash {
			return fmt.Errorf("%w: contributions[%d].contribution_hash is %s, %s holds %s", ErrStateHash, first+k, e.ContributionHash, name, got)
		}
		if err := step(func() error { return last.Verify(next) }, next.Challenge, prevData, c.label(first+k)); err != nil {
			return err
		}
		last, prevData = next, data
		r.Phase2Checked++
	}
	r.last2, r.evals, r.r1cs, r.srs = last, &evals, ccs, truncateSRS(srs, p.Power)
	if p.Beacon == "" {
		return nil
	}
	pkData, vkData, err := r.seal(p.Beacon)
	if err != nil {
		return err
	}
	if got := transcript.HashBytes(vkData); got != p.VerifyingKeyHash {
		return fmt.Errorf("%w: sealing the last state with the beacon gives a verifying key with hash %s, the transcript records %s", transcript.ErrKeyMismatch, got, p.VerifyingKeyHash)
	}
	if got := transcript.HashBytes(pkData); got != p.ProvingKeyHash {
		return fmt.Errorf("%w: sealing the last state with the beacon gives a proving key with hash %s, the transcript records %s", transcript.ErrKeyMismatch, got, p.ProvingKeyHash)
	}
	for _, f := range []struct{ name, want string }{{VerifyingKeyFile, p.VerifyingKeyHash}, {ProvingKeyFile, p.ProvingKeyHash}} {
		if _, err := c.readHashed(f.name, f.want); err != nil {
			return fmt.Errorf("%w: %w", transcript.ErrKeyMismatch, err)
		}
	}
	r.Finalized = true
	return nil
}
