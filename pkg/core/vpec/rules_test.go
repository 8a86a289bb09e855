package vpec_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/vpec"
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
			issue.Chain(vpec.Genesis("run_x"), recs)
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

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"2026-11-24T20:27:04Z", true},
		{"2026-11-24T20:27:04.5Z", true},
		{"2026-11-24T20:27:04.123456789Z", true},
		{"2026-11-24T2:27:04.500Z", false}, // one-digit hour: time.Parse alone takes it
		{"2026-11-24T20:27:4Z", false},
		{"2026-11-24t20:27:04Z", false},
		{"2026-11-24T20:27:04z", false},
		{"2026-11-24T20:27:04+00:00", false},
		{"2026-11-24T20:27:04.Z", false},
		{"2026-11-24T20:27:04.1234567890Z", true}, // any fraction (FORMATS.md)
		{"2026-02-30T20:27:04Z", false},
		{"2026-11-24T23:59:60Z", false},
		{"2026-11-24 20:27:04Z", false},
		{"", false}, {"Z", false}, {"2026-11-24T20:27:04", false},
	} {
		_, err := vpec.ParseTime(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("vpec.ParseTime(%q) = %v, want ok %v", tc.in, err, tc.ok)
		}
		if err != nil && !errors.Is(err, vpec.ErrTimeFormat) {
			t.Errorf("vpec.ParseTime(%q): %v is not ErrTimeFormat", tc.in, err)
		}
	}
}

// timeLayout is ParseTime's one accepted spelling.
var timeLayout = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$`)

// FuzzParseTime: ParseTime accepts exactly the strings of its layout that
// time.Parse takes, and gives time.Parse's time (its own reading of the
// service's layouts included).
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{
		"2026-11-24T20:27:04.5Z", "2026-11-24T2:27:04Z", "2026-11-24T20:27:04.123Z", "2026-11-24T20:27:04Z",
		"2024-02-29T00:00:00.000Z", "2100-02-29T00:00:00.000Z", "2000-02-29T23:59:59.999Z", "0000-01-01T00:00:00Z",
		"2026-04-31T00:00:00.000Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z",
		"2026-01-01T24:00:00.000Z", "2026-01-01T23:60:00Z", "2026-01-01T23:59:60.000Z", "9999-12-31T23:59:59.999Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := vpec.ParseTime(s)
		want, werr := time.Parse(time.RFC3339Nano, s)
		if !timeLayout.MatchString(s) {
			werr = errors.New("not the layout")
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("ParseTime(%q) = %v; time.Parse on the layout: %v", s, err, werr)
		}
		if vpec.ValidTime(s) != (err == nil) {
			t.Fatalf("validTime(%q) = %v; ParseTime: %v", s, vpec.ValidTime(s), err)
		}
		if err == nil && (tm != want || tm.Location() != time.UTC) {
			t.Fatalf("ParseTime(%q) = %v; time.Parse gives %v", s, tm, want)
		}
	})
}
