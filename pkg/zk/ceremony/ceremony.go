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
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"
	cs "github.com/consensys/gnark/constraint/bn254"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
	"github.com/svc-gov/svc/pkg/zk/conditions"
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

// seal seals phase 2's last state with beacon (hex) and returns the
// proving and verifying keys' bytes (gnark's compressed WriteTo form).
func (r *Result) seal(beaconHex string) (pk, vk []byte, err error) {
	beacon, err := transcript.ParseBeacon(beaconHex)
	if err != nil {
		return nil, nil, err
	}
	r.pk, r.vk = r.last2.Seal(r.srs, r.evals, beacon)
	if pk, err = serialize(r.pk); err != nil {
		return nil, nil, err
	}
	if vk, err = serialize(r.vk); err != nil {
		return nil, nil, err
	}
	return pk, vk, nil
}

// Keys are a finalized ceremony's outputs.
type Keys struct {
	// ProvingKey and VerifyingKey are gnark's keys.
	ProvingKey   groth16.ProvingKey
	VerifyingKey groth16.VerifyingKey
	// TranscriptHash is the final transcript's hash.
	TranscriptHash string
}

// Finalize verifies the ceremony in dir (Verify) and seals the phase in
// progress with beacon (lowercase hex of 16 to 1024 bytes: public
// randomness fixed after the last contribution, e.g. a drand round). Phase
// 1: it writes srs.bin and records the beacon and the parameters' hash.
// Phase 2: it writes proving.key and verifying.key and records the beacon
// and both keys' hashes; Keys then holds them. A phase needs at least one
// contribution.
func Finalize(dir, beacon string, opts VerifyOptions) (*Keys, error) {
	if _, err := transcript.ParseBeacon(beacon); err != nil {
		return nil, err
	}
	c, err := Open(dir)
	if err != nil {
		return nil, err
	}
	unlock, err := c.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if c, err = Open(dir); err != nil {
		return nil, err
	}
	phase := c.Phase()
	if phase == 1 && c.T.Phase1.Beacon != "" || phase == 2 && c.T.Phase2.Beacon != "" {
		return nil, fmt.Errorf("%w: phase %d is already sealed", ErrPhase, phase)
	}
	if c.count(phase) == 0 {
		return nil, fmt.Errorf("%w: %w: phase %d has no contribution; a seal without one protects nothing", ErrPhase, transcript.ErrNoContributions, phase)
	}
	if phase == 1 {
		opts.Phase1Dir = dir
	}
	r, err := c.verify(opts)
	if err != nil {
		return nil, err
	}
	if phase == 1 {
		return c.seal1(beacon)
	}
	pkData, vkData, err := r.seal(beacon)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{ProvingKeyFile, pkData}, {VerifyingKeyFile, vkData}} {
		if err := fsutil.WriteNew(filepath.Join(dir, f.name), f.data, filePerm); err != nil {
			return nil, err
		}
	}
	c.T.Phase2.Beacon = beacon
	c.T.Phase2.VerifyingKeyHash = transcript.HashBytes(vkData)
	c.T.Phase2.ProvingKeyHash = transcript.HashBytes(pkData)
	h, err := c.save()
	if err != nil {
		return nil, err
	}
	return &Keys{ProvingKey: r.pk, VerifyingKey: r.vk, TranscriptHash: h}, nil
}

// seal1 seals phase 1 (already verified) with beacon.
func (c *Ceremony) seal1(beacon string) (*Keys, error) {
	k := c.count(1)
	data, err := c.readHashedSized(StateFile(1, k), c.T.LastState(1), phase1Size(c.T.Phase1.Power, k == 0))
	if err != nil {
		return nil, err
	}
	last, err := readPhase1(StateFile(1, k), data, c.T.Phase1.Power, false)
	if err != nil {
		return nil, err
	}
	b, err := transcript.ParseBeacon(beacon)
	if err != nil {
		return nil, err
	}
	srs := last.Seal(b)
	srsData, err := serialize(&srs)
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteNew(filepath.Join(c.Dir, SRSFile), srsData, filePerm); err != nil {
		return nil, err
	}
	c.T.Phase1.Beacon = beacon
	c.T.Phase1.SRSHash = transcript.HashBytes(srsData)
	h, err := c.save()
	if err != nil {
		return nil, err
	}
	return &Keys{TranscriptHash: h}, nil
}

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
