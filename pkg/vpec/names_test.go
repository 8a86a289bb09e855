package vpec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/vpec"
)

// Record.Validate refuses control and bidi characters in the names a
// person reads (D9) and details above MaxDetailsBytes (D1); null inside
// details is a value (D3).
func TestRecordValidateNamesAndDetails(t *testing.T) {
	big := func(n int) map[string]any { return map[string]any{"s": strings.Repeat("a", n)} }
	for _, tc := range []struct {
		name string
		edit func(r *vpec.Record)
		ok   bool
	}{
		{"plain", func(r *vpec.Record) {}, true},
		{"ESC[2J in check", func(r *vpec.Record) { r.Check = "pii\x1b[2J" }, false},
		{"U+202E in check", func(r *vpec.Record) { r.Check = "txt\u202eexe" }, false},
		{"CR in check", func(r *vpec.Record) { r.Check = "a\rb" }, false},
		{"C1 in manifest_id", func(r *vpec.Record) { r.ManifestID = "m\u009b1" }, false},
		{"unicode check name", func(r *vpec.Record) { r.Check = "Prüfung/検査 ✓" }, true},
		{"null in details, every depth", func(r *vpec.Record) {
			r.Details = map[string]any{"x": nil, "a": []any{nil, map[string]any{"y": nil, "z": []any{[]any{nil}}}}}
		}, true},
		// {"s":"…"} is 8 bytes of JSON around the string.
		{"details at the limit", func(r *vpec.Record) { r.Details = big(vpec.MaxDetailsBytes - 8) }, true},
		{"details one byte over", func(r *vpec.Record) { r.Details = big(vpec.MaxDetailsBytes - 7) }, false},
		{"bound above the limit, size below", func(r *vpec.Record) { r.Details = big(vpec.MaxDetailsBytes / 5) }, true},
		{"details over by escapes", func(r *vpec.Record) {
			r.Details = map[string]any{"s": strings.Repeat("\x01", vpec.MaxDetailsBytes/6+1)}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := records(1, vpec.Execution)
			tc.edit(&recs[0])
			vpec.Chain(vpec.Genesis("run_x"), recs)
			err := recs[0].Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, vpec.ErrInvalidRecord) {
				t.Fatalf("error %v is not ErrInvalidRecord", err)
			}
		})
	}
}
