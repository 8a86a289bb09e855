package vpec

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

// FuzzLinkDetails: the link members of a proved record's details
// (linkDetails) are read the same way in parts and as one tree, and
// conditionLink never panics on what either gives.
func FuzzLinkDetails(f *testing.F) {
	base, err := os.ReadFile("../../../testdata/vectors/vpec/valid/proofs.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base)
	for _, ins := range []string{
		`"details": {"input_commitment": "sha256:00", "threshold": 0.5, "max_tokens": 512},`,
		`"details": {"input_commitment": 5, "threshold": "x", "max_tokens": null},`,
		`"details": {"input_commitment": "", "threshold": 1e400},`,
		`"details": {"threshold": -0.0, "max_tokens": 1.5, "label": [1]},`,
		`"details": {"input_commitment": "\u0000"},`,
		`"stage_type": "open_source_ml", "details": {"input_commitment": "sha256:00"},`,
	} {
		f.Add(bytes.Replace(base, []byte(`"sequence": 3,`), []byte(`"sequence": 3, `+ins), 1))
	}
	for _, ins := range []string{
		`"stage_part": "inference", "details": {"gpu_class": "cpu", "condition_commitments": {"truncation_check": "poseidon2:00", "x": 1}},`,
		`"stage_part": "inference", "details": {"condition_commitments": []},`,
		`"stage_part": "inference", "details": {"condition_commitments": {"": "", "threshold_check": null}},`,
	} {
		f.Add(bytes.Replace(base, []byte(`"sequence": 1,`), []byte(`"sequence": 1, `+ins), 1))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if checkShape(doc) != nil {
			return
		}
		parts, whole, _, _, partsOK, wholeOK := readBoth(doc)
		if partsOK != wholeOK || !partsOK {
			return
		}
		for i := range parts.VPEC.Records {
			if !reflect.DeepEqual(parts.VPEC.Records[i].Details, whole.VPEC.Records[i].Details) {
				t.Fatalf("record %d: details %v in parts, %v as one tree", i, parts.VPEC.Records[i].Details, whole.VPEC.Records[i].Details)
			}
			conditionLink(&parts.VPEC, &parts.VPEC.Records[i])
		}
		listedConditions(&parts.VPEC)
	})
}
