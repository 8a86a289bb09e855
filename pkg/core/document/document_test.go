package document_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
)

type inner struct {
	Name string `json:"name"`
	Opt  string `json:"opt,omitempty"`
}

type doc struct {
	ID      string           `json:"id"`
	Count   int64            `json:"count"`
	Share   float64          `json:"share"`
	OK      bool             `json:"ok"`
	Items   []inner          `json:"items"`
	Counts  map[string]int64 `json:"counts"`
	Ptr     *int64           `json:"ptr"`
	Nested  *inner           `json:"nested,omitempty"`
	Details map[string]any   `json:"details,omitempty"`
}

const good = `{"id":"a","count":3,"share":0.5,"ok":true,"items":[{"name":"x"}],"counts":{"pass":2},"ptr":null,"details":{"k":[1,"two",null,{"z":false}]}}`

func TestParseGood(t *testing.T) {
	var d doc
	tree, err := document.Parse([]byte(good), &d)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "a" || d.Count != 3 || d.Share != 0.5 || !d.OK || len(d.Items) != 1 || d.Counts["pass"] != 2 || d.Ptr != nil {
		t.Fatalf("decoded %+v", d)
	}
	if got := d.Details["k"].([]any); len(got) != 4 || got[0] != float64(1) || got[1] != "two" || got[2] != nil {
		t.Fatalf("details %#v", d.Details)
	}
	if got := string(tree.Canonical("details", "ptr")); got != `{"count":3,"counts":{"pass":2},"id":"a","items":[{"name":"x"}],"ok":true,"share":0.5}` {
		t.Fatalf("canonical without fields: %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"invalid json", `{"id":`, []string{"not valid JSON (line 1, column 7)"}},
		{"duplicate key", `{"id":"a","id":"b"}`, []string{`duplicate key "id"`}},
		{"unknown field", strings.Replace(good, `"id":"a"`, `"id":"a","extra":1`, 1), []string{"extra: unknown field"}},
		{"unknown nested field", strings.Replace(good, `{"name":"x"}`, `{"name":"x","y":1}`, 1), []string{"items[0].y: unknown field"}},
		{"missing", `{"id":"a"}`, []string{"count: missing required field", "items: missing required field", "ptr: missing required field"}},
		{"missing nested", strings.Replace(good, `{"name":"x"}`, `{}`, 1), []string{"items[0].name: missing required field"}},
		{"wrong type", strings.Replace(good, `"ok":true`, `"ok":"yes"`, 1), []string{`ok: is the string "yes", want true or false`}},
		{"fraction for int", strings.Replace(good, `"count":3`, `"count":3.5`, 1), []string{"count: 3.5 is not an integer"}},
		{"huge int", strings.Replace(good, `"count":3`, `"count":9007199254740993`, 1), []string{"count: 9007199254740993 is not an integer between"}},
		{"huge number", strings.Replace(good, `"count":3`, `"count":1e400`, 1), []string{"not a finite IEEE-754 double"}},
		{"null for string", strings.Replace(good, `"id":"a"`, `"id":null`, 1), []string{"id: is null, want a string"}},
		{"map value type", strings.Replace(good, `"pass":2`, `"pass":"2"`, 1), []string{"counts.pass: is the string"}},
		{"not an object", `[1]`, []string{"(document): is a JSON array, want an object"}},
		{"trailing", good + `{}`, []string{"after top-level value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			_, err := document.Parse([]byte(c.doc), &d)
			if !errors.Is(err, document.ErrSchema) {
				t.Fatalf("err = %v, want ErrSchema", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestErrorCap(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"id":"a","count":1,"share":0,"ok":true,"counts":{},"ptr":null,"items":[`)
	for i := 0; i < 50; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"bad":1}`)
	}
	b.WriteString("]}")
	var d doc
	_, err := document.Parse([]byte(b.String()), &d)
	if err == nil || !strings.Contains(err.Error(), "and 80 more problems") {
		t.Fatalf("error cap: %v", err)
	}
}

// TestFieldErrors: every decode problem is a *FieldError whose Path names
// the member, found with errors.As and listed by FieldErrors in order, so
// a caller (the server's 400, the VPEC reader) never parses error text;
// input that is not JSON has none. Before, the path lived only in the
// message ("schema: items[0].y: unknown field").
func TestFieldErrors(t *testing.T) {
	cases := []struct {
		name, doc string
		paths     []string
	}{
		{"unknown nested field", strings.Replace(good, `{"name":"x"}`, `{"name":"x","y":1}`, 1), []string{"items[0].y"}},
		{"missing", `{"id":"a"}`, []string{"count", "share", "ok", "items", "counts", "ptr"}},
		{"map value type", strings.Replace(good, `"pass":2`, `"pass":"2"`, 1), []string{"counts.pass"}},
		{"member name with a space", strings.Replace(good, `"id":"a"`, `"id":"a","a b":1`, 1), []string{"a b"}},
		{"not an object", `[1]`, []string{"(document)"}},
		{"invalid json", `{"id":`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			_, err := document.Parse([]byte(c.doc), &d)
			fes := document.FieldErrors(err)
			var paths []string
			for _, fe := range fes {
				paths = append(paths, fe.Path)
				if !errors.Is(fe, document.ErrSchema) || fe.Error() != "schema: "+fe.Detail() || fe.Detail() != fe.Path+": "+fe.Msg {
					t.Errorf("%#v: Error %q, Detail %q", fe, fe.Error(), fe.Detail())
				}
			}
			if !reflect.DeepEqual(paths, c.paths) {
				t.Fatalf("paths %q, want %q (error %v)", paths, c.paths, err)
			}
			var fe *document.FieldError
			if errors.As(err, &fe) != (len(c.paths) > 0) || (fe != nil && fe.Path != c.paths[0]) {
				t.Fatalf("errors.As: %v", fe)
			}
		})
	}
	// The note that closes a list cut short has no path.
	var b strings.Builder
	b.WriteString(`{"id":"a","count":1,"share":0,"ok":true,"counts":{},"ptr":null,"items":[`)
	for i := range 30 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"bad":1}`)
	}
	b.WriteString("]}")
	var d doc
	_, err := document.Parse([]byte(b.String()), &d)
	fes := document.FieldErrors(err)
	if len(fes) != 21 || fes[20].Path != "" || fes[20].Detail() != "… and 40 more problems" {
		t.Fatalf("%d problems, last %#v", len(fes), fes[len(fes)-1])
	}
	se := &document.SchemaError{Problems: []string{"a: x", "b: y"}}
	if !errors.Is(se, document.ErrSchema) || se.Error() != "schema: a: x\nschema: b: y" {
		t.Fatalf("SchemaError %q", se)
	}
}

func TestSignedBytes(t *testing.T) {
	got, err := document.SignedBytes([]byte(`{"b":1, "a":"x", "signature":"s"}`), "signature")
	if err != nil || string(got) != `{"a":"x","b":1}` {
		t.Fatalf("SignedBytes = %s, %v", got, err)
	}
	if _, err := document.SignedBytes([]byte(`[]`)); !errors.Is(err, document.ErrSchema) {
		t.Fatalf("array: %v", err)
	}
	m, err := document.MarshalSignedBytes(map[string]any{"z": "<&>", "a": 1.5e-7, "s": "x"}, "s")
	if err != nil || string(m) != `{"a":1.5e-7,"z":"<&>"}` {
		t.Fatalf("MarshalSignedBytes = %s, %v", m, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"items":[{"name":1}]}`))
	// Nulls, empty values and number spellings at every depth.
	for _, s := range []string{
		`{"id":null}`, `{"items":null}`, `{"items":[null]}`, `{"items":[{"name":null,"opt":null}]}`,
		`{"counts":null}`, `{"counts":{"a":null}}`, `{"nested":null}`, `{"nested":{"name":"x","opt":""}}`,
		`{"details":null}`, `{"details":{}}`, `{"details":{"x":null}}`, `{"details":{"x":[null,{"y":null,"z":[[null]]}]}}`,
		`{"count":3e0}`, `{"count":-0}`, `{"count":3.0}`, `{"share":1.0}`, `{"share":-0.0}`, "\ufeff{}", "", "\x00",
	} {
		if strings.HasPrefix(s, "{") {
			f.Add([]byte(strings.Replace(good, "{", s[:len(s)-1]+",", 1)))
		}
		f.Add([]byte(s))
	}
	for _, d := range fuzzedge.Documents([]byte(good), 400) { // int fields at the maxima and int64 edges
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		tree, err := document.Parse(data, &d)
		if err != nil && !errors.Is(err, document.ErrSchema) {
			t.Fatalf("error %v does not match ErrSchema", err)
		}
		if err == nil {
			// Whatever decodes must canonicalise to a fixed point.
			c := tree.Canonical()
			if again, err := canonical.Transform(c); err != nil || string(again) != string(c) {
				t.Fatalf("canonical form is not a fixed point: %v", err)
			}
		}
	})
}

// TestOneNumberForm: where a struct field takes a number, only its one
// canonical spelling is accepted; any other spelling of the same value
// would give a byte-different document with the same signed bytes.
func TestOneNumberForm(t *testing.T) {
	cases := []struct {
		field, text string
		ok          bool
	}{
		{"count", "3", true},
		{"count", "0", true},
		{"count", "-3", true},
		{"count", "9007199254740991", true},
		{"count", "3e0", false},
		{"count", "3E0", false},
		{"count", "3.0", false},
		{"count", "30e-1", false},
		{"count", "-0", false},
		{"count", "1.0000000000000000000001", false},
		{"count", "0.3e1", false},
		{"share", "0.5", true},
		{"share", "0", true},
		{"share", "1", true},
		{"share", "0.3333", true},
		{"share", "1e-7", true},
		{"share", "1.0", false},
		{"share", "0.50", false},
		{"share", "5e-1", false},
		{"share", "-0", false},
		{"share", "0.0", false},
		{"share", "1e0", false},
		{"share", "1E-7", false},
		{"share", "1e-07", false},
		{"share", "0.0000001", false},
		{"share", "1.0000000000000000000001", false},
	}
	for _, c := range cases {
		t.Run(c.field+"="+c.text, func(t *testing.T) {
			old := map[string]string{"count": `"count":3`, "share": `"share":0.5`}[c.field]
			var d doc
			in := []byte(strings.Replace(good, old, `"`+c.field+`":`+c.text, 1))
			_, err := document.ParseWith(in, &d, document.Options{CanonicalNumbers: true})
			if c.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !c.ok && (!errors.Is(err, document.ErrSchema) || !strings.Contains(err.Error(), c.field+": ")) {
				t.Fatalf("err = %v, want a schema error naming %s", err, c.field)
			}
			// Without CanonicalNumbers (request bodies, trace files: the
			// canonical form is what is signed) any spelling of an exact
			// value is read.
			var loose doc
			_, err = document.Parse(in, &loose)
			if exact := c.field == "share" || !strings.Contains(c.text, "0000000000000000000001"); exact && err != nil {
				t.Fatalf("Parse refused %s: %v", c.text, err)
			}
		})
	}
	// Inside details (free JSON metadata) any I-JSON number is accepted:
	// it is signed in its canonical form.
	var d doc
	if _, err := document.Parse([]byte(strings.Replace(good, `[1,"two"`, `[1.0e0,"two"`, 1)), &d); err != nil {
		t.Fatalf("details number: %v", err)
	}
}

// TestEmptyAndNull: decisions D2 and D3. An optional member present with
// the value omitempty would leave out is refused, naming the field; null
// is a value inside details (kept byte for byte in the signed form) and an
// error elsewhere unless the field is a required pointer.
func TestEmptyAndNull(t *testing.T) {
	cases := []struct {
		name, from, to string
		want           string // "" = accepted
	}{
		{"empty optional string", `"name":"x"}`, `"name":"x","opt":""}`, `items[0].opt: empty; omit the member instead`},
		{"empty details", `"details":{"k":[1,"two",null,{"z":false}]}`, `"details":{}`, `details: an empty object; omit the member instead`},
		{"null details", `"details":{"k":[1,"two",null,{"z":false}]}`, `"details":null`, `details: is null; omit the member instead`},
		{"null optional pointer", `"ptr":null`, `"ptr":null,"nested":null`, `nested: is null; omit the member instead`},
		{"null array", `"items":[{"name":"x"}]`, `"items":null`, `items: is null, want an array`},
		{"null map", `"counts":{"pass":2}`, `"counts":null`, `counts: is null, want an object`},
		{"null map value", `"counts":{"pass":2}`, `"counts":{"pass":null}`, `counts.pass: is null, want an integer`},
		{"null string", `"id":"a"`, `"id":null`, `id: is null, want a string`},
		{"null in details", `"details":{"k":[1,"two",null,{"z":false}]}`, `"details":{"x":null}`, ""},
		{"null deep in details", `"details":{"k":[1,"two",null,{"z":false}]}`, `"details":{"a":{"b":[{"c":null}],"d":null},"e":[null,[null]]}`, ""},
		{"empty inside details", `"details":{"k":[1,"two",null,{"z":false}]}`, `"details":{"a":"","b":{},"c":[]}`, ""},
		{"null required pointer", `"ptr":null`, `"ptr":null`, ""},
		{"zero required int", `"count":3`, `"count":0`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(good, c.from, c.to, 1)
			if in == good && c.from != c.to {
				t.Fatal("replacement did not apply")
			}
			var d doc
			tree, err := document.Parse([]byte(in), &d)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				// null kept byte for byte in the signed form.
				if got, want := string(tree.Canonical()), mustTransform(t, in); got != want {
					t.Fatalf("canonical %s, want %s", got, want)
				}
				return
			}
			if !errors.Is(err, document.ErrSchema) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	var d doc
	if _, err := document.Parse([]byte(strings.Replace(good, `"details":{"k":[1,"two",null,{"z":false}]}`, `"details":{"x":null}`, 1)), &d); err != nil {
		t.Fatal(err)
	}
	if v, ok := d.Details["x"]; !ok || v != nil {
		t.Fatalf("details.x = %#v, %v; want a nil member", v, ok)
	}
}

func mustTransform(t *testing.T, s string) string {
	t.Helper()
	out, err := canonical.Transform([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestInputErrors: input that is not a JSON text is refused before
// parsing, with a typed error a person can read (no package prefix).
func TestInputErrors(t *testing.T) {
	cases := []struct {
		name, in string
		want     error
		msg      string
	}{
		{"empty", "", document.ErrNotJSON, "the document is empty"},
		{"blank", " \n\t", document.ErrNotJSON, "the document is empty"},
		{"binary", "{\"id\":\x00\x01}", document.ErrNotJSON, "not JSON: binary data (byte 0x00) at byte 6"},
		{"gzip", "\x1f\x8b\x08\x00", document.ErrNotJSON, "not JSON: binary data (byte 0x1f) at byte 0"},
		{"latin1", "{\"id\":\"caf\xe9\"}", document.ErrNotJSON, "not UTF-8: invalid byte 0xe9 at byte 10"},
		{"bom", "\ufeff" + good, document.ErrNotJSON, "byte order mark"},
		{"cut off", good[:40], document.ErrSyntax, "not valid JSON (line 1, column 38)"},
		{"trailing", good + "x", document.ErrSyntax, "after top-level value"},
		{"second line", "{\n\"id\" 1}", document.ErrSyntax, "line 2, column 6"},
		{"duplicate", `{"id":"a","id":"b"}`, canonical.ErrDuplicateKey, `duplicate key "id" at byte 10`},
		{"deep", strings.Repeat("[", document.MaxDepth+1) + strings.Repeat("]", document.MaxDepth+1), canonical.ErrDepth, "nested deeper than 64 levels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			_, err := document.Parse([]byte(c.in), &d)
			var se *document.SyntaxError
			if !errors.Is(err, c.want) || !errors.Is(err, document.ErrSchema) || !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SyntaxError matching %v and ErrSchema", err, c.want)
			}
			if !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "canonical") {
				t.Fatalf("message %q, want %q without a package prefix", err, c.msg)
			}
		})
	}
	ok := strings.Repeat("[", document.MaxDepth) + strings.Repeat("]", document.MaxDepth)
	if _, err := document.SignedBytes([]byte(`{"a":` + ok[1:len(ok)-1] + `}`)); err != nil {
		t.Fatalf("depth %d refused: %v", document.MaxDepth, err)
	}
	big := make([]byte, document.MaxSize+1)
	if err := document.CheckInput(big); !errors.Is(err, document.ErrTooLarge) {
		t.Fatalf("oversized: %v", err)
	}
}

var _ = reflect.TypeOf

func TestDecodeWith(t *testing.T) {
	var d doc
	tree, err := document.ParseTree([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if err := document.DecodeWith(tree, &d, document.Options{SkipFreeMaps: true}); err != nil || d.Details != nil || d.ID != "a" {
		t.Fatalf("SkipFreeMaps: %v, details %v", err, d.Details)
	}
	for in, want := range map[string]string{
		strings.Replace(good, `"details":{"k":[1,"two",null,{"z":false}]}`, `"details":{}`, 1):  "records[7].details: an empty object; omit the member instead",
		strings.Replace(good, `"details":{"k":[1,"two",null,{"z":false}]}`, `"details":[1]`, 1): "records[7].details: is a JSON array, want an object",
		strings.Replace(good, `"id":"a"`, `"id":1`, 1):                                          "records[7].id: is the number 1, want a string",
	} {
		tree, err := document.ParseTree([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var d doc
		err = document.DecodeWith(tree, &d, document.Options{Path: "records[7]", SkipFreeMaps: true})
		if !errors.Is(err, document.ErrSchema) || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

func TestSetExplicitAndLimits(t *testing.T) {
	errAmb := errors.New("ambiguous")
	s := document.NewSet("thing", func(b []byte) (string, error) {
		if len(b) == 0 || b[0] != '{' {
			return "", errors.New("not a thing")
		}
		return string(b[1:2]), nil
	}, 8, errAmb)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := s.AddExplicit(write("a.json", "{a1")); err != nil {
		t.Fatal(err)
	}
	if err := s.AddExplicit(write("a2.json", "{a1")); err != nil {
		t.Fatalf("byte-identical duplicate: %v", err)
	}
	if err := s.AddExplicit(write("a3.json", "{a2")); !errors.Is(err, errAmb) {
		t.Fatalf("same id, other bytes: %v, want the ambiguous error", err)
	}
	if err := s.AddExplicit(write("bad.json", "nope")); err != nil {
		t.Fatalf("an invalid document is kept, not refused: %v", err)
	}
	if ex := s.Explicit(); len(ex) != 3 || ex[2].Err == nil || ex[2].Doc != nil {
		t.Fatalf("Explicit: %+v", ex)
	}
	if _, err := s.AddFile(write("big.json", "{b23456789")); !errors.Is(err, document.ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if err := s.AddExplicitDoc("mem", []byte("{c23456789")); !errors.Is(err, document.ErrTooLarge) {
		t.Fatalf("in memory, over the limit: %v", err)
	}
	errs := s.AddDir(dir) // a.json, a2.json, a3.json (id a), bad.json, big.json
	if len(errs) != 2 {
		t.Fatalf("AddDir errors: %v (want bad.json and big.json)", errs)
	}
	if doc, ok := s.Get("a"); !ok || len(doc) != 3 || s.Len() != 1 || len(s.IDs()) != 1 {
		t.Fatalf("Get/Len/IDs: %q %v %d %v", doc, ok, s.Len(), s.IDs())
	}
}
