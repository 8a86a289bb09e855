package client

import (
	"fmt"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Transparent and Selective are the visibility modes that disclose data
// (docs/FORMATS.md, "Disclosures"); use them with WithVisibility.
//
//   - Transparent: the raw input (and output, when given) is sent and
//     carried in the VPEC, visible to anyone holding it. For
//     non-sensitive data only.
//   - Selective: the input is a JSON object; only its top-level members
//     that the manifest stage named by the check declares (disclose) are
//     sent, each with a fresh salt; every other member leaves the client
//     as a salted digest only. Needs WithManifest.
//
// Opaque records (the default) send commitments only.
const (
	Opaque      = vpec.Opaque
	Transparent = vpec.Transparent
	Selective   = vpec.Selective
)

// WithManifest gives the manifest the record's manifestID names (its id,
// ManifestID(m), must be manifestID). A selective record discloses the
// input fields its stage (the one whose stage_name is the check) declares
// and carries the manifest, so a verifier reads the declaration offline.
func WithManifest(m api.Manifest) RecordOption {
	return func(c *recordConfig) { c.manifest = &m }
}

// disclosed is what a record discloses besides its commitments.
type disclosed struct {
	input, output string
	split         *disclosure.Split
	manifest      *vpec.Manifest
}

// disclose builds the disclosures of a record from its raw data (which
// stop here) according to its visibility; for a selective record it
// returns the input commitment, which then covers the field digests.
func disclose(c *recordConfig, check, manifestID string, input []byte, inputCommitment string) (*disclosed, string, error) {
	invalid := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidRecord, fmt.Sprintf(format, a...))
	}
	switch c.vis {
	case vpec.Transparent:
		if len(input) > disclosure.MaxDisclosedBytes || len(c.output) > disclosure.MaxDisclosedBytes {
			return nil, "", invalid("a transparent record discloses at most %d bytes of input and of output (record it opaque)", disclosure.MaxDisclosedBytes)
		}
		d := &disclosed{input: disclosure.EncodeBytes(input)}
		if c.hasOutput {
			d.output = disclosure.EncodeBytes(c.output)
		}
		return d, inputCommitment, nil
	case vpec.Selective:
		if c.manifest == nil {
			return nil, "", invalid("a selective record needs its manifest (WithManifest): its stage %q declares the fields that may be disclosed", check)
		}
		if c.review != nil && c.review.signer == nil {
			// Its commitment covers salts drawn here, which a signature
			// made beforehand (Run.ReviewStatement) cannot cover.
			return nil, "", invalid("a selective record's commitment covers salts drawn at record time: sign its review with WithReview, not WithReviewerSignature")
		}
		m := c.manifest.AsDocument()
		id, err := m.ID()
		if err != nil {
			return nil, "", invalid("manifest: %v", err)
		}
		if id != manifestID {
			return nil, "", invalid("the manifest given (id %s) is not the one manifest id %s names", id, manifestID)
		}
		if err := m.CheckDisclose(); err != nil {
			return nil, "", invalid("manifest: %v", err)
		}
		declared, _ := m.Declared(check)
		s, err := disclosure.SplitInput(input, declared)
		if err != nil {
			return nil, "", fmt.Errorf("%w: selective input: %w", ErrInvalidRecord, err)
		}
		return &disclosed{split: s, manifest: &m}, s.Commitment, nil
	}
	return nil, inputCommitment, nil
}

// apply writes the disclosures into rec and checks them as the service
// and the verifier will.
func (d *disclosed) apply(rec *vpec.Record) error {
	if d == nil {
		return nil
	}
	rec.DisclosedInput, rec.DisclosedOutput = d.input, d.output
	if s := d.split; s != nil {
		rec.FieldDigests, rec.Disclosures, rec.Manifest = s.Digests, s.Disclosed, d.manifest
	}
	if err := rec.CheckDisclosures(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRecord, err)
	}
	return nil
}
