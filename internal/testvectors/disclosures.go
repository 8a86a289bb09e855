package testvectors

import (
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// The disclosure vectors (docs/FORMATS.md "Disclosures"). Salts are fixed
// so that the vectors are reproducible byte for byte: member k of the
// selective input gets the 16 bytes 16k … 16k+15, as in FORMATS.md's worked
// example (whose input, manifest declaration and commitment_hash this
// record repeats). A real client draws them from crypto/rand.

// member is one top-level member of the selective input, in input order.
type member struct {
	name  string
	value any
}

// kycInput is the worked example's input: {"document_type": "passport",
// "jurisdiction": "FR", "holder": {"name": "Alice Example", "born": 1990},
// "score": 0.50}.
var kycInput = []member{
	{"document_type", "passport"},
	{"jurisdiction", "FR"},
	{"holder", map[string]any{"name": "Alice Example", "born": 1990}},
	{"score", 0.5},
}

// kycDeclared is what the kyc_check stage declares.
var kycDeclared = []string{"document_type", "jurisdiction"}

// fixedSalt returns the salt of member k: the bytes 16k … 16k+15,
// base64url without padding.
func fixedSalt(k int) string {
	b := make([]byte, disclosure.SaltBytes)
	for i := range b {
		b[i] = byte(16*k + i)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// kycManifest is the manifest a selective kyc_check record carries.
func kycManifest() *vpec.Manifest {
	return &vpec.Manifest{Name: "kyc", Version: "1", Stages: []vpec.ManifestStage{{
		StageName: "kyc_check", ProofCeiling: string(vpec.Execution), RegulatoryReferences: []string{}, Disclose: kycDeclared,
	}}}
}

// selective makes record seq a selective kyc_check record over members
// with the given salts, disclosing the members named in disclose.
func (g *gen) selective(seq int64, members []member, salts []string, disclose []string) (vpec.Record, error) {
	r := g.record(seq, "kyc_check", "", vpec.ResultPass, vpec.Execution)
	all := map[string]disclosure.Disclosure{}
	var digests []string
	for i, m := range members {
		d := disclosure.Disclosure{Salt: salts[i], Field: m.name, Value: m.value}
		dg, err := d.Digest()
		if err != nil {
			return r, fmt.Errorf("disclosure vector %s: %w", m.name, err)
		}
		all[m.name] = d
		digests = append(digests, dg)
	}
	man := kycManifest()
	id, err := man.ID()
	if err != nil {
		return r, err
	}
	r.Visibility = vpec.Selective
	r.ManifestID = id
	r.Manifest = man
	r.CommitmentHash = disclosure.Commitment(digests)
	slices.Sort(digests)
	r.FieldDigests = digests
	for _, name := range disclose {
		r.Disclosures = append(r.Disclosures, all[name])
	}
	return r, nil
}

// transparent makes record seq a transparent record disclosing input and
// output.
func (g *gen) transparent(seq int64, check string, input, output []byte) vpec.Record {
	r := g.record(seq, check, string(input), vpec.ResultPass, vpec.Execution)
	r.Visibility = vpec.Transparent
	r.DisclosedInput = disclosure.EncodeBytes(input)
	r.OutputCommitment = commitment.String(output)
	r.DisclosedOutput = disclosure.EncodeBytes(output)
	return r
}

// binaryInput is a transparent record's binary input: a PNG signature, NUL
// bytes, an invalid UTF-8 byte and every byte value 0xf0 … 0xff.
func binaryInput() []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xc3(")
	for c := 0xf0; c <= 0xff; c++ {
		b = append(b, byte(c))
	}
	return b
}

// disclosureRecords are the records of the valid disclosures vector:
// opaque, transparent text, transparent binary, selective.
func (g *gen) disclosureRecords() ([]vpec.Record, error) {
	salts := []string{fixedSalt(0), fixedSalt(1), fixedSalt(2), fixedSalt(3)}
	sel, err := g.selective(4, kycInput, salts, kycDeclared)
	if err != nil {
		return nil, err
	}
	return []vpec.Record{
		g.record(1, "pii_detection", "Patient John Doe, DOB 1970-01-01, claim #4411", vpec.ResultPass, vpec.Execution),
		g.transparent(2, "toxicity", []byte("Please review claim #4411 — the café's receipt is attached."), []byte(`{"label":"non_toxic","score":0.02}`)),
		g.transparent(3, "image_scan", binaryInput(), []byte{0x00, 0x01, 0xfe, 0xff}),
		sel,
	}, nil
}

const disclosuresRun = "run_00000000-0000-4000-8000-0000000d15c1"

func (g *gen) validDisclosures() error {
	recs, err := g.disclosureRecords()
	if err != nil {
		return err
	}
	v, err := g.newVPEC(disclosuresRun, recs, nil)
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/disclosures.json", v); err != nil {
		return err
	}
	g.add(Vector{Name: "disclosures", Kind: "vpec", Valid: true, Exit: 0, File: "vpec/valid/disclosures.json",
		Description: "an opaque record, a transparent record with text input and output, a transparent record with binary input and output, and a selective record disclosing the two fields its manifest stage declares (FORMATS.md's worked example: fixed salts, commitment_hash " + recs[3].CommitmentHash[:19] + "…)"})
	return nil
}

// invalidDisclosures writes one vector per disclosure rule, each a VPEC
// re-chained and sealed by the genuine key, so that only the disclosures
// check fails.
func (g *gen) invalidDisclosures() error {
	cases := []struct {
		name, desc, code string
		mutate           func(recs []vpec.Record) error
	}{
		{"disclosure-tampered-value", "the selective record's disclosed jurisdiction changed from FR to US (its digest is not in field_digests), re-chained and re-signed", "DISCLOSURE MISMATCH",
			func(recs []vpec.Record) error { recs[3].Disclosures[1].Value = "US"; return nil }},
		{"disclosure-tampered-bytes", "the transparent text record's disclosed_input changed (claim #4412), re-chained and re-signed: the bytes do not hash to commitment_hash", "DISCLOSURE MISMATCH",
			func(recs []vpec.Record) error {
				recs[1].DisclosedInput = disclosure.EncodeBytes([]byte("Please review claim #4412 — the café's receipt is attached."))
				return nil
			}},
		{"disclosure-undeclared-field", "the selective record also discloses holder (its genuine salt and value, so the digest matches), which the kyc_check stage does not declare", "UNDECLARED FIELD",
			func(recs []vpec.Record) error {
				recs[3].Disclosures = append(recs[3].Disclosures, disclosure.Disclosure{Salt: fixedSalt(2), Field: "holder", Value: kycInput[2].value})
				return nil
			}},
		{"disclosure-on-opaque", "the opaque record carries disclosed_input (the genuine bytes of its input)", "DISCLOSURE NOT ALLOWED",
			func(recs []vpec.Record) error {
				recs[0].DisclosedInput = disclosure.EncodeBytes([]byte("Patient John Doe, DOB 1970-01-01, claim #4411"))
				return nil
			}},
		{"disclosure-salt-reused", "the selective record's jurisdiction digest made with document_type's salt (digests and commitment_hash recomputed, so everything matches but the salt appears twice)", "SALT REUSED",
			func(recs []vpec.Record) error {
				r, err := g.selective(4, kycInput, []string{fixedSalt(0), fixedSalt(0), fixedSalt(2), fixedSalt(3)}, kycDeclared)
				if err != nil {
					return err
				}
				r.RecordedAt = recs[3].RecordedAt
				recs[3] = r
				return nil
			}},
		// One record lists each field's disclosure and digest once: a
		// repeat is malformed, whatever the salts (svc-verify once said
		// SALT REUSED here, the recipe DISCLOSURE MALFORMED).
		{"disclosure-field-twice", "the selective record's jurisdiction disclosure listed twice (the same salt, field and value)", "DISCLOSURE MALFORMED",
			func(recs []vpec.Record) error {
				recs[3].Disclosures = append(recs[3].Disclosures, recs[3].Disclosures[1])
				return nil
			}},
		{"disclosure-digest-twice", "the selective record's field_digests list one digest twice (commitment_hash recomputed over the list)", "DISCLOSURE MALFORMED",
			func(recs []vpec.Record) error {
				fd := recs[3].FieldDigests
				recs[3].FieldDigests = append(append(append([]string{}, fd[:2]...), fd[1]), fd[2:]...)
				recs[3].CommitmentHash = disclosure.Commitment(recs[3].FieldDigests)
				return nil
			}},
		{"disclosure-without-manifest", "the selective record carries no manifest (a disclosures check rule, not a schema error)", "DISCLOSURE MALFORMED",
			func(recs []vpec.Record) error { recs[3].Manifest = nil; return nil }},
	}
	for i, c := range cases {
		recs, err := g.disclosureRecords()
		if err != nil {
			return err
		}
		if err := c.mutate(recs); err != nil {
			return err
		}
		v, err := g.newVPEC(fmt.Sprintf("run_00000000-0000-4000-8000-0000000d15%02d", 0xe0+i), recs, nil)
		if err != nil {
			return err
		}
		if err := g.badVPEC(c.name, c.desc, []string{"disclosures"}, "INVALID — "+c.code, v); err != nil {
			return err
		}
	}
	return nil
}
