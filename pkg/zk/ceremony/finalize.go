package ceremony

import (
	"fmt"
	"path/filepath"

	"github.com/consensys/gnark/backend/groth16"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

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
