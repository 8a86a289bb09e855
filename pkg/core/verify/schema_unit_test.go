package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestSchema(t *testing.T) {
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(vectors, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name       string
		doc        []byte
		want       want
		notChecked string // the message of every other check; "" when they run
	}{
		{"a v1 VPEC", read("vpec/valid/clean.json"), want{Pass, "", false, "schema valid (svc.vpec/v1, 4 records)"}, ""},
		{"empty", nil, want{Fail, "NOT JSON", false, "unreadable input: the document is empty"}, NotCheckedUnreadable},
		{"binary", []byte("\x89PNG\r\n\x1a\n"), want{Fail, "NOT JSON", false, "unreadable input: not JSON: binary data"}, NotCheckedUnreadable},
		{"not an object", []byte(`[1]`), want{Fail, "SCHEMA ERROR", false, "schema invalid: not a VPEC: (document) is a JSON array"}, NotCheckedSchema},
		{"an enum out of range", read("vpec/invalid/bad-enum.json"), want{Fail, "SCHEMA ERROR", false, "schema invalid: records[0].check_result \"passed\" is not one of"}, NotCheckedSchema},
		{"a required member missing", read("vpec/invalid/missing-field.json"), want{Fail, "SCHEMA ERROR", false, "missing required field"}, NotCheckedSchema},
		{"an unsigned offline VPEC", read("vpec/invalid/unsigned-offline.json"), want{Fail, CodeUnsignedOffline, false, "fetch the signed one with svc vpec get run_"}, NotCheckedSchema},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, d := schema(c.doc, vpec.Parse)
			c.want.check(t, CheckSchema, r.Checks[0])
			if (d != nil) != (c.notChecked == "") {
				t.Fatalf("parsed document %v, want one: %v", d != nil, c.notChecked == "")
			}
			if c.notChecked == "" {
				return
			}
			if len(r.Checks) != len(checks)+1 || r.Valid || r.Unreadable != (c.notChecked == NotCheckedUnreadable) {
				t.Fatalf("%d checks, valid %v, unreadable %v", len(r.Checks), r.Valid, r.Unreadable)
			}
			for _, o := range r.Checks[1:] {
				if o.Status != NotApplicable || o.Message != c.notChecked {
					t.Errorf("%s: %s %q", o.Name, o.Status, o.Message)
				}
			}
		})
	}
	if r := unreadableReport(document.TooLarge(-1)); r.Checks[0].Code != "TOO LARGE" || !r.Unreadable {
		t.Errorf("too large: %+v", r.Checks[0])
	}
}
