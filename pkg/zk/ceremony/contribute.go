package ceremony

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

// Contribute adds one contribution by name to the phase in progress: it
// reads the latest state (its hash must be the transcript's), checks it
// against its predecessor when that file is present, draws fresh secrets
// from crypto/rand, writes the new state and appends the contribution to
// the transcript. The secrets are discarded when it returns.
func (c *Ceremony) Contribute(name string) (*transcript.Contribution, error) {
	if err := transcript.ValidName(name); err != nil {
		return nil, fmt.Errorf("%w: contributor name: %v", ErrArgument, err)
	}
	unlock, err := c.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	fresh, err := Open(c.Dir) // the transcript as it is now, under the lock
	if err != nil {
		return nil, err
	}
	c.T = fresh.T
	phase := c.Phase()
	if phase == 1 && c.T.Phase1.Beacon != "" {
		return nil, fmt.Errorf("%w: phase 1 is sealed; start phase 2 for a circuit (init --phase 2) and contribute there", ErrPhase)
	}
	if phase == 2 && c.T.Phase2.Beacon != "" {
		return nil, fmt.Errorf("%w: phase 2 is finalized; no more contributions", ErrPhase)
	}
	k := c.count(phase)
	prevHash := c.T.LastState(phase)
	if phase == 1 {
		if err := c.checkSize(StateFile(1, k), phase1Size(c.T.Phase1.Power, k == 0)); err != nil {
			return nil, err
		}
	}
	prevData, err := c.readHashed(StateFile(phase, k), prevHash)
	if err != nil {
		return nil, err
	}
	var next []byte
	var contribHash string
	if phase == 1 {
		next, contribHash, err = c.contribute1(k, prevData)
	} else {
		next, contribHash, err = c.contribute2(k, prevData)
	}
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteNew(filepath.Join(c.Dir, StateFile(phase, k+1)), next, filePerm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s exists but the transcript does not list it (an interrupted contribution?): remove it and contribute again: %w", StateFile(phase, k+1), err)
		}
		return nil, err
	}
	entry := transcript.Contribution{
		Index:             len(c.T.Contributions) + 1,
		Phase:             phase,
		Contributor:       name,
		ContributionHash:  contribHash,
		PreviousStateHash: prevHash,
		StateHash:         transcript.HashBytes(next),
	}
	c.T.Contributions = append(c.T.Contributions, entry)
	if _, err := c.save(); err != nil {
		return nil, err
	}
	return &entry, nil
}

func (c *Ceremony) contribute1(k int, prevData []byte) ([]byte, string, error) {
	power := c.T.Phase1.Power
	prev, err := readPhase1(StateFile(1, k), prevData, power, k == 0)
	if err != nil {
		return nil, "", err
	}
	if k > 0 {
		if err := c.checkLast1(k, prev); err != nil {
			return nil, "", err
		}
	}
	prev.Contribute()
	next, err := serialize(prev)
	if err != nil {
		return nil, "", err
	}
	return next, phase1ContributionHash(next), nil
}

// checkLast1 verifies contribution k against its predecessor when the
// predecessor's file is present.
func (c *Ceremony) checkLast1(k int, last *mpcsetup.Phase1) error {
	if err := c.checkSize(StateFile(1, k-1), phase1Size(c.T.Phase1.Power, k == 1)); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	data, err := c.read(StateFile(1, k-1))
	if err != nil {
		return err
	}
	before, err := readPhase1(StateFile(1, k-1), data, c.T.Phase1.Power, k == 1)
	if err != nil {
		return err
	}
	return step(func() error { return before.Verify(last) }, last.Challenge, data, c.label(k-1))
}

func (c *Ceremony) contribute2(k int, prevData []byte) ([]byte, string, error) {
	shape, err := c.phase2Shape()
	if err != nil {
		return nil, "", err
	}
	prev, err := readPhase2(StateFile(2, k), prevData, shape, k == 0)
	if err != nil {
		return nil, "", err
	}
	if k > 0 {
		data, err := c.read(StateFile(2, k-1))
		if err == nil {
			before, err := readPhase2(StateFile(2, k-1), data, shape, k == 1)
			if err != nil {
				return nil, "", err
			}
			if err := step(func() error { return before.Verify(prev) }, prev.Challenge, data, c.label(c.count(1)+k-1)); err != nil {
				return nil, "", err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
	}
	prev.Contribute()
	next, err := serialize(prev)
	if err != nil {
		return nil, "", err
	}
	h, err := phase2ContributionHash(prev)
	return next, h, err
}

// phase2Shape reads the phase's initial state, whose vector lengths every
// later state must have. A contributor may not have it (only the latest
// state): then (nil, nil), and states are read with their own lengths,
// each bounded by the file's size.
func (c *Ceremony) phase2Shape() (*mpcsetup.Phase2, error) {
	data, err := c.readHashed(StateFile(2, 0), c.T.Phase2.InitialStateHash)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Its vector lengths come from the file itself, each bounded by the
	// bytes left (readPhase2 with no shape); Verify recomputes the initial
	// state from the circuit.
	return readPhase2(StateFile(2, 0), data, nil, true)
}

// step checks that a contribution builds on its predecessor (its
// challenge is the SHA-256 of prevData, the transcript's chain) and then
// runs gnark's verification of the update (verify).
func step(verify func() error, challenge, prevData []byte, label string) error {
	want := transcript.HashBytes(prevData)
	if got := (commitment.Hash{Algorithm: commitment.SHA256, Digest: challenge}).String(); got != want {
		return fmt.Errorf("%w: %s was made on a state with hash %s, not on its predecessor (%s)", transcript.ErrChain, label, got, want)
	}
	if err := verify(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrContribution, label, err)
	}
	return nil
}

// label names contribution i of the transcript for messages.
func (c *Ceremony) label(i int) string {
	e := c.T.Contributions[i]
	return fmt.Sprintf("contributions[%d] (phase %d, %q)", i, e.Phase, e.Contributor)
}
