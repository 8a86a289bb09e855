package verify

import (
	"encoding/base64"
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestCheckDisclosures covers transparent records and the rules of the
// check itself; disclose_test.go covers selective records end to end.
func TestCheckDisclosures(t *testing.T) {
	transparent := func(r *vpec.Record, input string) {
		r.Visibility, r.CommitmentHash = vpec.Transparent, commitment.String([]byte(input))
		r.DisclosedInput = base64.StdEncoding.EncodeToString([]byte(input))
	}
	cases := []struct {
		name      string
		edit      func(v *vpec.VPEC)
		want      want
		disclosed int
	}{
		{"every record opaque", nil, want{NotApplicable, "", false, "every record is opaque"}, 0},
		{"a transparent input", func(v *vpec.VPEC) { transparent(&v.Records[0], "hello") },
			want{Pass, "", false, "1 disclosed inputs match their commitments (transparent: 1 inputs, 0 outputs"}, 1},
		{"disclosed bytes changed", func(v *vpec.VPEC) {
			transparent(&v.Records[0], "hello")
			v.Records[0].DisclosedInput = base64.StdEncoding.EncodeToString([]byte("hellO"))
		}, want{Fail, "DISCLOSURE MISMATCH", false, "record 1 ("}, 0},
		{"disclosed on an opaque record", func(v *vpec.VPEC) { v.Records[1].DisclosedInput = "aGk=" },
			want{Fail, "DISCLOSURE NOT ALLOWED", false, "a record of visibility opaque carries no disclosed_input"}, 0},
		{"a selective record without its manifest", func(v *vpec.VPEC) { v.Records[1].Visibility = vpec.Selective },
			want{Fail, "DISCLOSURE MALFORMED", false, "a selective record carries the manifest its manifest_id names"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := built(t, 3)
			if c.edit != nil {
				c.edit(v)
			}
			got, disclosed := checkDisclosures(v)
			c.want.check(t, CheckDisclosure, got)
			if len(disclosed) != c.disclosed {
				t.Errorf("disclosed %d records, want %d", len(disclosed), c.disclosed)
			}
		})
	}
}
