package api_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		s        string
		min, max int
		ok       bool
		name     bool // the failure is a name (control character) failure
	}{
		{"pii", 1, 8, true, false},
		{"", 0, 8, true, false},
		{"", 1, 8, false, false},
		{"123456789", 1, 8, false, false},
		{"検査", 1, 8, true, false},
		{"a\u202Eb", 1, 8, false, true},
		{"a\x1b", 1, 8, false, true},
		{"a\u0085", 1, 8, false, true},
		{"\xff", 1, 8, false, true},
	} {
		err := api.CheckName("f", tc.s, tc.min, tc.max)
		var fe *api.FieldError
		switch {
		case tc.ok && err != nil, !tc.ok && err == nil:
			t.Errorf("CheckName(%q, %d, %d) = %v, want ok %v", tc.s, tc.min, tc.max, err, tc.ok)
		case err != nil && (!errors.As(err, &fe) || fe.Field != "f" || !errors.Is(err, api.ErrLimit) || errors.Is(err, names.ErrInvalidName) != tc.name):
			t.Errorf("CheckName(%q): %v: want a FieldError for f (name error %v)", tc.s, err, tc.name)
		}
	}
	if err := api.CheckText("d", "line\n\tline", 64); err != nil {
		t.Errorf("text with tab and newline: %v", err)
	}
	if err := api.CheckText("d", "a\u2067", 64); !errors.Is(err, names.ErrInvalidName) {
		t.Errorf("text with a bidi control: %v", err)
	}
}

// docs/openapi.json states the same limits as pkg/core/api.
func TestOpenAPILimits(t *testing.T) {
	data, err := os.ReadFile("../../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	get := func(path string) float64 {
		var v any = doc["components"].(map[string]any)["schemas"]
		for _, k := range strings.Split(path, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%s: %s is not an object", path, k)
			}
			v = m[k]
		}
		f, ok := v.(float64)
		if !ok {
			t.Fatalf("docs/openapi.json has no number at %s", path)
		}
		return f
	}
	for path, want := range map[string]int{
		"OpenRunRequest.properties.workflow_id.maxLength":                                   api.MaxWorkflowIDBytes,
		"OpenRunRequest.properties.surface_id.maxLength":                                    api.MaxSurfaceIDBytes,
		"OpenRunRequest.properties.policy_pack_id.maxLength":                                api.MaxPolicyPackIDBytes,
		"OpenRunRequest.properties.policy.maxItems":                                         api.MaxPolicies,
		"OpenRunRequest.properties.policy.items.maxLength":                                  api.MaxPolicyBytes,
		"Manifest.properties.name.maxLength":                                                api.MaxManifestNameBytes,
		"Manifest.properties.version.maxLength":                                             api.MaxManifestVersionBytes,
		"Manifest.properties.stages.maxItems":                                               api.MaxStages,
		"Manifest.properties.stages.items.properties.stage_name.maxLength":                  api.MaxStageNameBytes,
		"Manifest.properties.stages.items.properties.regulatory_references.maxItems":        api.MaxReferences,
		"Manifest.properties.stages.items.properties.regulatory_references.items.maxLength": api.MaxReferenceBytes,
		"Manifest.properties.stages.items.properties.disclose.maxItems":                     api.MaxDiscloseFields,
		"Manifest.properties.stages.items.properties.disclose.items.maxLength":              api.MaxDiscloseFieldBytes,
		"ReviewerKeyRequest.properties.public_key.maxLength":                                api.MaxPublicKeyBytes,
		"ReviewerKeyRequest.properties.name.maxLength":                                      api.MaxReviewerNameBytes,
		"SessionRequest.properties.check.maxLength":                                         api.MaxCheckBytes,
		"SessionRequest.properties.manifest_id.maxLength":                                   api.MaxManifestIDBytes,
		"SessionRequest.properties.reviewer_key_id.maxLength":                               api.MaxReviewerKeyIDBytes,
		"CalibrationRequestInput.properties.model_description.maxLength":                    api.MaxDescriptionBytes,
		"CalibrationRequestInput.properties.hub_model_id.maxLength":                         api.MaxHubModelIDBytes,
		"CalibrationRequestInput.properties.notify_email.maxLength":                         api.MaxEmailBytes,
		"CalibrationRequestInput.properties.desired_gpu_classes.maxItems":                   len(profile.GPUClasses()),
		"ResumeRequest.properties.lineage_token.maxLength":                                  api.MaxLineageTokenBytes,
		"RecordBatch.properties.records.maxItems":                                           api.MaxBatchRecords,
	} {
		if got := get(path); int(got) != want {
			t.Errorf("docs/openapi.json %s = %v, pkg/core/api says %d", path, got, want)
		}
	}
}
