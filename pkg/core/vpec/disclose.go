package vpec

import (
	"fmt"
	"reflect"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
)

// CheckDisclosures checks one record's disclosure members against its
// visibility, its commitments and, for a selective record, the manifest
// it carries (docs/FORMATS.md, "Disclosures"). The error is a
// *disclosure.Error naming the member and matching disclosure.ErrNotAllowed,
// ErrMalformed, ErrMismatch, ErrUndeclared or ErrSaltReused. Salts reused
// across records are the verifier's disclosures check.
func (r *Record) CheckDisclosures() error { return r.CheckDisclosuresOf(nil) }

// CheckDisclosuresOf is CheckDisclosures for one record of a VPEC whose
// records are checked in turn: checked maps manifest ids to the manifests
// already checked in that VPEC (nil: none), so that a manifest carried by
// many records is hashed once; a manifest this call checks is added.
func (r *Record) CheckDisclosuresOf(checked map[string]*Manifest) error {
	notAllowed := func(member string) error {
		return &disclosure.Error{Field: member, Msg: fmt.Sprintf("a record of visibility %s carries no %s", r.Visibility, member), Err: disclosure.ErrNotAllowed}
	}
	malformed := func(member, format string, a ...any) error {
		return &disclosure.Error{Field: member, Msg: fmt.Sprintf(format, a...), Err: disclosure.ErrMalformed}
	}
	transparentMembers := func() error {
		switch {
		case r.DisclosedInput != "":
			return notAllowed("disclosed_input")
		case r.DisclosedOutput != "":
			return notAllowed("disclosed_output")
		}
		return nil
	}
	selectiveMembers := func() error {
		switch {
		case r.FieldDigests != nil:
			return notAllowed("field_digests")
		case r.Disclosures != nil:
			return notAllowed("disclosures")
		case r.Manifest != nil:
			return notAllowed("manifest")
		}
		return nil
	}
	switch r.Visibility {
	case Transparent:
		if err := selectiveMembers(); err != nil {
			return err
		}
		if r.CommitmentAlgorithm != string(commitment.SHA256) {
			return malformed("commitment_algorithm", "a transparent record's commitment is sha256 of the disclosed bytes, not %s", r.CommitmentAlgorithm)
		}
		if err := disclosure.CheckBytes("disclosed_input", r.DisclosedInput, r.CommitmentHash); err != nil {
			return err
		}
		if r.OutputCommitment == "" {
			if r.DisclosedOutput != "" {
				return malformed("disclosed_output", "is present without an output_commitment")
			}
			return nil
		}
		return disclosure.CheckBytes("disclosed_output", r.DisclosedOutput, r.OutputCommitment)
	case Selective:
		if err := transparentMembers(); err != nil {
			return err
		}
		if r.CommitmentAlgorithm != string(commitment.SHA256) {
			return malformed("commitment_algorithm", "a selective record's commitment is sha256 of its field digests, not %s", r.CommitmentAlgorithm)
		}
		if r.Manifest == nil {
			return malformed("manifest", "a selective record carries the manifest its manifest_id names (its disclose lists say what may be disclosed)")
		}
		if m, ok := checked[r.ManifestID]; !ok || !reflect.DeepEqual(m, r.Manifest) {
			id, err := r.Manifest.ID()
			if err != nil {
				return malformed("manifest", "%v", err)
			}
			if id != r.ManifestID {
				return &disclosure.Error{Field: "manifest", Msg: fmt.Sprintf("the carried manifest's id is %s, not the record's manifest_id %.80q", commitment.Short(id), r.ManifestID), Err: disclosure.ErrMismatch}
			}
			if err := r.Manifest.CheckDisclose(); err != nil {
				return malformed("manifest", "%v", err)
			}
			if checked != nil && !ok {
				checked[r.ManifestID] = r.Manifest
			}
		}
		declared, _ := r.Manifest.Declared(r.Check)
		return disclosure.CheckSelective(r.CommitmentHash, r.FieldDigests, r.Disclosures, declared)
	default:
		if err := transparentMembers(); err != nil {
			return err
		}
		return selectiveMembers()
	}
}
