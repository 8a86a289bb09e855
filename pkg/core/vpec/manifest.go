package vpec

import (
	"fmt"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/names"
)

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
// names of 1 to disclosure.MaxFieldBytes bytes (names.ValidName). The
// error names the member ("stages[1].disclose[0]").
func (m *Manifest) CheckDisclose() error {
	seenStage := map[string]bool{}
	for i, st := range m.Stages {
		if seenStage[st.StageName] {
			return fmt.Errorf("stages[%d].stage_name: %q is listed twice", i, st.StageName)
		}
		seenStage[st.StageName] = true
		if len(st.Disclose) > disclosure.MaxDisclosures {
			return fmt.Errorf("stages[%d].disclose: %d fields, at most %d", i, len(st.Disclose), disclosure.MaxDisclosures)
		}
		seen := map[string]bool{}
		for j, f := range st.Disclose {
			at := fmt.Sprintf("stages[%d].disclose[%d]", i, j)
			if len(f) == 0 || len(f) > disclosure.MaxFieldBytes {
				return fmt.Errorf("%s: a field name is 1 to %d bytes, this one %d", at, disclosure.MaxFieldBytes, len(f))
			}
			if err := names.ValidName(f); err != nil {
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
