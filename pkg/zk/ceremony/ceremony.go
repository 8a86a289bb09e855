// Package ceremony runs a multi-party setup for Groth16 on BN254 with
// gnark's mpcsetup (backend/groth16/bn254/mpcsetup), keeping its state in a
// directory and its history in a transcript (package transcript).
//
// Phase 1 (powers of tau) runs once for a domain of 2^power points, large
// enough for the largest circuit; phase 2 runs per circuit on the prefix of
// phase 1's parameters the circuit's size needs. Each phase is a chain of
// contributions: a contributor reads the latest state, multiplies in
// secrets drawn from crypto/rand, and writes the new state with proofs of
// knowledge of those secrets. The secrets live only in local variables of
// gnark's Contribute and are never written anywhere; the process exits
// after one contribution. Each phase ends with a seal by a public random
// beacon, which gives the sealed parameters (phase 1) or the proving and
// verifying keys (phase 2).
//
// The keys are sound if, in each phase, at least one contributor discarded
// their secrets. Nothing in a ceremony directory is secret: every file can
// be published (files are written 0644).
//
// Files in a ceremony directory: transcript.json; phase1-NNNN.state or
// phase2-NNNN.state (NNNN: 0000 for the phase's initial state, then the
// number of the contribution within the phase); srs.bin (phase 1 sealed);
// circuit.r1cs (phase 2's constraint system); proving.key and
// verifying.key (phase 2 finalized).
package ceremony

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

// File names in a ceremony directory.
const (
	TranscriptFile   = "transcript.json"
	SRSFile          = "srs.bin"
	R1CSFile         = "circuit.r1cs"
	ProvingKeyFile   = "proving.key"
	VerifyingKeyFile = "verifying.key"
	lockFile         = ".ceremony.lock"
)

// filePerm: nothing a ceremony writes is secret.
const filePerm = 0o644

// Errors of the full (file-based) checks, besides transcript's ErrChain
// and ErrKeyMismatch.
var (
	// ErrStateFile: a state, SRS, circuit or key file is missing, malformed
	// or not in canonical form.
	ErrStateFile = errors.New("ceremony: bad state file")
	// ErrStateHash: a file's hash is not the one the transcript records (a
	// replaced file), or a phase's initial state is not the one its inputs
	// give.
	ErrStateHash = errors.New("ceremony: file does not match the transcript")
	// ErrContribution: a contribution's proofs do not verify: it is not a
	// valid update of its predecessor by someone who knew the secrets.
	ErrContribution = errors.New("ceremony: invalid contribution")
	// ErrPhase: the operation does not fit the ceremony's phase (e.g.
	// contributing to a sealed phase).
	ErrPhase = errors.New("ceremony: wrong phase")
	// ErrArgument: a contributor or circuit name, or a power, is not
	// acceptable.
	ErrArgument = errors.New("ceremony: invalid argument")
	// ErrSize: the circuit does not fit phase 1's domain.
	ErrSize = errors.New("ceremony: circuit too large for the phase-1 domain")
)

// StateFile returns the file name of a phase's state: n = 0 for the
// initial state, n = k for the k-th contribution of the phase.
func StateFile(phase, n int) string { return fmt.Sprintf("phase%d-%04d.state", phase, n) }

// Ceremony is a ceremony directory and its transcript.
type Ceremony struct {
	// Dir is the ceremony directory.
	Dir string
	// T is the transcript as last read or written.
	T *transcript.Transcript
}

// InitPhase1 creates a phase-1 ceremony in dir (created if absent; it must
// not already hold a transcript) for a domain of 2^power points.
func InitPhase1(dir string, power int) (*Ceremony, error) {
	if power < transcript.MinPower || power > transcript.MaxPower {
		return nil, fmt.Errorf("%w: power %d: want %d to %d (a domain of 2^power constraints)", ErrArgument, power, transcript.MinPower, transcript.MaxPower)
	}
	initial, _, err := phase1Initial(power)
	if err != nil {
		return nil, err
	}
	t := &transcript.Transcript{
		Schema:        transcript.Schema,
		ProofSystem:   transcript.ProofSystem,
		Phase1:        transcript.Phase1{Power: power, InitialStateHash: transcript.HashBytes(initial)},
		Contributions: []transcript.Contribution{},
	}
	c := &Ceremony{Dir: dir, T: t}
	if err := c.create(map[string][]byte{StateFile(1, 0): initial}); err != nil {
		return nil, err
	}
	return c, nil
}

// create makes the ceremony directory and writes files and the transcript.
func (c *Ceremony) create(files map[string][]byte) error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return fmt.Errorf("create ceremony directory: %w", err)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, TranscriptFile)); err == nil {
		return fmt.Errorf("%s already holds a ceremony (%s): %w", c.Dir, TranscriptFile, fs.ErrExist)
	}
	for name, data := range files {
		if err := fsutil.WriteNew(filepath.Join(c.Dir, name), data, filePerm); err != nil {
			return err
		}
	}
	raw, _, err := c.T.Marshal()
	if err != nil {
		return err
	}
	return fsutil.WriteNew(filepath.Join(c.Dir, TranscriptFile), raw, filePerm)
}

// MaxTranscriptBytes bounds transcript.json: a transcript of
// transcript.MaxContributions contributions with names of
// transcript.MaxNameBytes and beacons of transcript.MaxBeaconBytes is
// under 8 MiB in its canonical form, so a larger file (re-indented copies
// included) is refused before it is read.
const MaxTranscriptBytes = 16 << 20

// Open reads the ceremony in dir; its transcript must be valid.
func Open(dir string) (*Ceremony, error) {
	data, err := readLimited(filepath.Join(dir, TranscriptFile), MaxTranscriptBytes)
	if err != nil {
		return nil, fmt.Errorf("open ceremony: %w", err)
	}
	t, _, err := transcript.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("open ceremony %s: %w", dir, err)
	}
	return &Ceremony{Dir: dir, T: t}, nil
}

// readLimited reads a file of at most max bytes; a larger one is refused
// (ErrStateFile) without being read.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrStateFile, filepath.Base(path), max)
	}
	return data, nil
}

// Phase returns the phase in progress: 1 or 2.
func (c *Ceremony) Phase() int {
	if c.T.Phase2 != nil {
		return 2
	}
	return 1
}

// count returns the number of contributions to phase.
func (c *Ceremony) count(phase int) int { return len(c.T.Contributors(phase)) }

// read reads a file of the ceremony directory.
func (c *Ceremony) read(name string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(c.Dir, name))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStateFile, err)
	}
	return data, nil
}

// checkSize refuses, before it is read, a file whose length is not size
// (a replaced file of any size then costs no memory).
func (c *Ceremony) checkSize(name string, size uint64) error {
	fi, err := os.Stat(filepath.Join(c.Dir, name))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStateFile, err)
	}
	if fi.Size() < 0 || uint64(fi.Size()) != size {
		return stateErr(name, "%d bytes, want %d", fi.Size(), size)
	}
	return nil
}

// readHashedSized is readHashed of a file whose length must be size.
func (c *Ceremony) readHashedSized(name, want string, size uint64) ([]byte, error) {
	if err := c.checkSize(name, size); err != nil {
		return nil, err
	}
	return c.readHashed(name, want)
}

// readHashed reads a file and checks its hash against want.
func (c *Ceremony) readHashed(name, want string) ([]byte, error) {
	data, err := c.read(name)
	if err != nil {
		return nil, err
	}
	if got := transcript.HashBytes(data); got != want {
		return nil, fmt.Errorf("%w: %s has hash %s, the transcript records %s", ErrStateHash, name, got, want)
	}
	return data, nil
}

// lock takes the ceremony directory's lock, so that two contributors
// cannot build on the same state at once.
func (c *Ceremony) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(c.Dir, lockFile), os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, fmt.Errorf("lock ceremony: %w", err)
	}
	if err := fsutil.LockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock ceremony %s: %w (another contribution or finalize is running)", c.Dir, err)
	}
	return func() { fsutil.UnlockFile(f); f.Close() }, nil
}

// save replaces the transcript file with c.T.
func (c *Ceremony) save() (string, error) {
	raw, h, err := c.T.Marshal()
	if err != nil {
		return "", err
	}
	return h, fsutil.WriteReplace(filepath.Join(c.Dir, TranscriptFile), raw, filePerm)
}
