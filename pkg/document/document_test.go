package document_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/canonical"
	"github.com/svc-gov/svc/pkg/document"
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
		{"invalid json", `{"id":`, []string{"canonical:"}},
		{"duplicate key", `{"id":"a","id":"b"}`, []string{`duplicate key "id"`}},
		{"unknown field", strings.Replace(good, `"id":"a"`, `"id":"a","extra":1`, 1), []string{"extra: unknown field"}},
		{"unknown nested field", strings.Replace(good, `{"name":"x"}`, `{"name":"x","y":1}`, 1), []string{"items[0].y: unknown field"}},
		{"missing", `{"id":"a"}`, []string{"count: missing required field", "items: missing required field", "ptr: missing required field"}},
		{"missing nested", strings.Replace(good, `{"name":"x"}`, `{}`, 1), []string{"items[0].name: missing required field"}},
		{"wrong type", strings.Replace(good, `"ok":true`, `"ok":"yes"`, 1), []string{`ok: is the string "yes", want true or false`}},
		{"fraction for int", strings.Replace(good, `"count":3`, `"count":3.5`, 1), []string{"count: 3.5 is not an integer"}},
		{"huge int", strings.Replace(good, `"count":3`, `"count":9007199254740993`, 1), []string{"count: 9007199254740992 is not an integer between"}},
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
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		tree, err := document.Parse(data, &d)
		if err == nil {
			// Whatever decodes must canonicalise to a fixed point.
			c := tree.Canonical()
			if again, err := canonical.Transform(c); err != nil || string(again) != string(c) {
				t.Fatalf("canonical form is not a fixed point: %v", err)
			}
		}
	})
}
