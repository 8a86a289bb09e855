package vpec

import (
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
)

// CheckDisclosure is the check of what transparent and selective records
// disclose (docs/FORMATS.md, "Disclosures"): every disclosed value matches
// its commitment, every disclosed field is declared by the manifest the
// record names, nothing is disclosed where the visibility forbids it, and
// no salt is used twice in the VPEC.
const CheckDisclosure CheckName = "disclosures"

// Manifest is a check manifest as a selective record carries it: the
// document whose RFC 8785 form's "sha256:" commitment is the record's
// manifest_id (the id svc manifest register prints).
type Manifest struct {
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Stages  []ManifestStage `json:"stages" maxitems:"256"`
}

// ManifestStage is one stage of a manifest. Disclose names the top-level
// fields of a structured input that a selective record of this stage may
// disclose; the stage of a record is the one whose stage_name is the
// record's check.
type ManifestStage struct {
	StageName            string   `json:"stage_name"`
	ProofCeiling         string   `json:"proof_ceiling"`
	RegulatoryReferences []string `json:"regulatory_references" maxitems:"32"`
	Disclose             []string `json:"disclose,omitempty" maxitems:"64"`
	// ONNXModelHash optionally names the model the stage runs
	// (sha256:<hex> of the ONNX file), so the dashboard's registry lists
	// the model before any record of it (docs/API.md, "Manifests").
	ONNXModelHash string `json:"onnx_model_hash,omitempty"`
}

// ID returns the manifest's content-addressed id: "sha256:" of its RFC
// 8785 form.
func (m *Manifest) ID() (string, error) {
	b, err := canonical.Marshal(m)
	if err != nil {
		return "", err
	}
	return commitment.String(b), nil
}

// Declared returns the fields the stage named check declares (its
// disclose list), and whether the manifest has such a stage.
func (m *Manifest) Declared(check string) ([]string, bool) {
	for _, st := range m.Stages {
		if st.StageName == check {
			return st.Disclose, true
		}
	}
	return nil, false
}

// CheckDisclose checks the disclose lists of a manifest's stages: stage
// names distinct; each list at most disclosure.MaxDisclosures distinct
// names of 1 to disclosure.MaxFieldBytes bytes (ValidName). The error
// names the member ("stages[1].disclose[0]").
func (m *Manifest) CheckDisclose() error {
	names := map[string]bool{}
	for i, st := range m.Stages {
		if names[st.StageName] {
			return fmt.Errorf("stages[%d].stage_name: %q is listed twice", i, st.StageName)
		}
		names[st.StageName] = true
		if len(st.Disclose) > disclosure.MaxDisclosures {
			return fmt.Errorf("stages[%d].disclose: %d fields, at most %d", i, len(st.Disclose), disclosure.MaxDisclosures)
		}
		seen := map[string]bool{}
		for j, f := range st.Disclose {
			at := fmt.Sprintf("stages[%d].disclose[%d]", i, j)
			if len(f) == 0 || len(f) > disclosure.MaxFieldBytes {
				return fmt.Errorf("%s: a field name is 1 to %d bytes, this one %d", at, disclosure.MaxFieldBytes, len(f))
			}
			if err := ValidName(f); err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			if seen[f] {
				return fmt.Errorf("%s: %q is listed twice", at, f)
			}
			seen[f] = true
		}
	}
	return nil
}

// CheckDisclosures checks one record's disclosure members against its
// visibility, its commitments and, for a selective record, the manifest
// it carries (docs/FORMATS.md, "Disclosures"). The error is a
// *disclosure.Error naming the member and matching disclosure.ErrNotAllowed,
// ErrMalformed, ErrMismatch, ErrUndeclared or ErrSaltReused. Salts reused
// across records are checked by Verify.
func (r *Record) CheckDisclosures() error { return r.checkDisclosures(nil) }

// checkDisclosures is CheckDisclosures; known maps manifest ids to
// manifests already checked in this VPEC (nil: none), so that a manifest
// carried by many records is hashed once.
func (r *Record) checkDisclosures(known map[string]*Manifest) error {
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
		if m, ok := known[r.ManifestID]; !ok || !reflect.DeepEqual(m, r.Manifest) {
			id, err := r.Manifest.ID()
			if err != nil {
				return malformed("manifest", "%v", err)
			}
			if id != r.ManifestID {
				return &disclosure.Error{Field: "manifest", Msg: fmt.Sprintf("the carried manifest's id is %s, not the record's manifest_id %.80q", shortHash(id), r.ManifestID), Err: disclosure.ErrMismatch}
			}
			if err := r.Manifest.CheckDisclose(); err != nil {
				return malformed("manifest", "%v", err)
			}
			if known != nil && !ok {
				known[r.ManifestID] = r.Manifest
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

// Disclosed is what one record of a VPEC discloses, as the verifier
// reports it once the disclosures check passed.
type Disclosed struct {
	Sequence   int64      `json:"sequence"`
	RecordID   string     `json:"record_id"`
	Check      string     `json:"check"`
	Visibility Visibility `json:"visibility"`
	// Input and Output are a transparent record's raw bytes, standard
	// base64 (as in the VPEC); InputText and OutputText the same bytes
	// when they are UTF-8 text.
	Input      *string `json:"input,omitempty"`
	InputText  *string `json:"input_text,omitempty"`
	Output     *string `json:"output,omitempty"`
	OutputText *string `json:"output_text,omitempty"`
	// Fields are a selective record's disclosed fields and their values;
	// Undisclosed counts the fields committed but not disclosed.
	Fields      map[string]any `json:"fields,omitempty"`
	Undisclosed int            `json:"undisclosed_fields,omitempty"`
}

// disclosureCode maps a disclosure error to its failure code.
func disclosureCode(err error) string {
	switch {
	case errors.Is(err, disclosure.ErrMismatch):
		return "DISCLOSURE MISMATCH"
	case errors.Is(err, disclosure.ErrUndeclared):
		return "UNDECLARED FIELD"
	case errors.Is(err, disclosure.ErrNotAllowed):
		return "DISCLOSURE NOT ALLOWED"
	case errors.Is(err, disclosure.ErrSaltReused):
		return "SALT REUSED"
	}
	return "DISCLOSURE MALFORMED"
}

// checkDisclosures is the disclosures check; on a pass it fills
// r.Disclosed.
func checkDisclosures(p parsed, rep *Report) Check {
	c := Check{Name: CheckDisclosure}
	var firstErr error
	var first string
	problem := func(rec *Record, err error) {
		msg := fmt.Sprintf("record %d (%s, check %s): %v", rec.Sequence, rec.RecordID, rec.Check, err)
		if firstErr == nil {
			firstErr, first = err, msg
		}
		if len(c.Details) < MaxReportDetails {
			c.Details = append(c.Details, msg)
		}
	}
	salts := map[string]int64{}
	digests := map[string]int64{}
	var inputs, outputs, selective, fields int
	var out []Disclosed
	known := map[string]*Manifest{}
	for i := range p.v.Records {
		rec := &p.v.Records[i]
		if err := rec.checkDisclosures(known); err != nil {
			problem(rec, err)
			continue
		}
		switch rec.Visibility {
		case Transparent:
			inputs++
			d := Disclosed{Sequence: rec.Sequence, RecordID: rec.RecordID, Check: rec.Check, Visibility: rec.Visibility}
			d.Input, d.InputText = bytesView(rec.DisclosedInput)
			if rec.OutputCommitment != "" {
				outputs++
				d.Output, d.OutputText = bytesView(rec.DisclosedOutput)
			}
			out = append(out, d)
		case Selective:
			selective++
			inputs++
			d := Disclosed{Sequence: rec.Sequence, RecordID: rec.RecordID, Check: rec.Check, Visibility: rec.Visibility,
				Undisclosed: len(rec.FieldDigests) - len(rec.Disclosures)}
			for _, dg := range rec.FieldDigests {
				if s, ok := digests[dg]; ok {
					problem(rec, &disclosure.Error{Field: "field_digests", Msg: fmt.Sprintf("digest %s is also in record %d (the same salt, field and value)", shortHash(dg), s), Err: disclosure.ErrSaltReused})
				}
				digests[dg] = rec.Sequence
			}
			for j, ds := range rec.Disclosures {
				if s, ok := salts[ds.Salt]; ok {
					problem(rec, &disclosure.Error{Field: fmt.Sprintf("disclosures[%d].salt", j), Msg: fmt.Sprintf("the salt is also used in record %d: every disclosure has a fresh salt", s), Err: disclosure.ErrSaltReused})
				}
				salts[ds.Salt] = rec.Sequence
				if d.Fields == nil {
					d.Fields = map[string]any{}
				}
				d.Fields[ds.Field] = ds.Value
				fields++
			}
			out = append(out, d)
		}
	}
	if firstErr != nil {
		return fail(c, disclosureCode(firstErr), "disclosure check failed: "+first, false)
	}
	if inputs == 0 {
		c.Status, c.Message = NotApplicable, "disclosures: none (every record is opaque)"
		return c
	}
	rep.Disclosed = out
	c.Status = Pass
	c.Message = fmt.Sprintf("%d disclosed inputs match their commitments (transparent: %d inputs, %d outputs; selective: %d records, %d fields disclosed)",
		inputs, inputs-selective, outputs, selective, fields)
	return c
}

// bytesView returns a disclosed byte string as base64 and, when it is
// UTF-8 text, as text.
func bytesView(b64 string) (*string, *string) {
	enc := b64
	b, err := disclosure.DecodeBytes(b64)
	if err != nil || !utf8.Valid(b) {
		return &enc, nil
	}
	text := string(b)
	return &enc, &text
}

// checkDisclosureNumbers reports a record whose disclosed values hold a
// number not in its RFC 8785 form (one form per document, as for details).
func checkDisclosureNumbers(rec *canonical.Value, i int, errs *[]string) {
	d := rec.Get("disclosures")
	if d == nil {
		return
	}
	if n := d.NonCanonicalNumber(); n != nil && len(*errs) < maxReported {
		text, _ := n.Number()
		*errs = append(*errs, fmt.Sprintf("records[%d].disclosures: the number %.40s is not in its canonical form %s (RFC 8785)", i, n.Raw(), text))
	}
}
