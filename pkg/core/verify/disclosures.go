package verify

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckDisclosure is the check of what transparent and selective records
// disclose (docs/FORMATS.md, "Disclosures"): every disclosed value matches
// its commitment, every disclosed field is declared by the manifest the
// record names, nothing is disclosed where the visibility forbids it, and
// no salt is used twice in the VPEC.
const CheckDisclosure CheckName = "disclosures"

// Disclosed is what one record of a VPEC discloses, as the verifier
// reports it once the disclosures check passed.
type Disclosed struct {
	Sequence   int64           `json:"sequence"`
	RecordID   string          `json:"record_id"`
	Check      string          `json:"check"`
	Visibility vpec.Visibility `json:"visibility"`
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

// disclosures runs the check; on a pass the report lists what is
// disclosed.
func (s *state) disclosures() Check {
	c, disclosed := checkDisclosures(&s.doc.VPEC)
	s.report.Disclosed = disclosed
	return c
}

// checkDisclosures checks every record's disclosures (vpec.Record.
// CheckDisclosuresOf) and that no salt or field digest is used twice in
// v; on a pass it returns what the records disclose.
func checkDisclosures(v *vpec.VPEC) (Check, []Disclosed) {
	c := Check{Name: CheckDisclosure}
	var firstErr error
	var first string
	problem := func(rec *vpec.Record, err error) {
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
	known := map[string]*vpec.Manifest{}
	for i := range v.Records {
		rec := &v.Records[i]
		if err := rec.CheckDisclosuresOf(known); err != nil {
			problem(rec, err)
			continue
		}
		switch rec.Visibility {
		case vpec.Transparent:
			inputs++
			d := Disclosed{Sequence: rec.Sequence, RecordID: rec.RecordID, Check: rec.Check, Visibility: rec.Visibility}
			d.Input, d.InputText = bytesView(rec.DisclosedInput)
			if rec.OutputCommitment != "" {
				outputs++
				d.Output, d.OutputText = bytesView(rec.DisclosedOutput)
			}
			out = append(out, d)
		case vpec.Selective:
			selective++
			inputs++
			d := Disclosed{Sequence: rec.Sequence, RecordID: rec.RecordID, Check: rec.Check, Visibility: rec.Visibility,
				Undisclosed: len(rec.FieldDigests) - len(rec.Disclosures)}
			for _, dg := range rec.FieldDigests {
				if s, ok := digests[dg]; ok {
					problem(rec, &disclosure.Error{Field: "field_digests", Msg: fmt.Sprintf("digest %s is also in record %d (the same salt, field and value)", commitment.Short(dg), s), Err: disclosure.ErrSaltReused})
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
		return fail(c, disclosureCode(firstErr), "disclosure check failed: "+first, false), nil
	}
	if inputs == 0 {
		c.Status, c.Message = NotApplicable, "disclosures: none (every record is opaque)"
		return c, nil
	}
	c.Status = Pass
	c.Message = fmt.Sprintf("%d disclosed inputs match their commitments (transparent: %d inputs, %d outputs; selective: %d records, %d fields disclosed)",
		inputs, inputs-selective, outputs, selective, fields)
	return c, out
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
