package canonical

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
)

// checkWritten compares WrittenCanonically of v and of every value in it
// with the encoder: it reports true exactly when the input holds v's
// canonical bytes at v's offset, and then the end of them.
func checkWritten(t *testing.T, data []byte, v *Value) {
	t.Helper()
	want := v.Canonical()
	off := v.Offset()
	// A scalar is its raw text; an array or object ends at its closing
	// bracket, so input that starts with its canonical form holds it.
	asWritten := off+len(want) <= len(data) && bytes.Equal(data[off:off+len(want)], want)
	if raw := v.Raw(); raw != nil {
		asWritten = bytes.Equal(raw, want)
	}
	end, ok := v.WrittenCanonically()
	if ok != asWritten || ok && end != off+len(want) {
		t.Fatalf("WrittenCanonically of %q at %d = (%d, %v); canonical form %q", data, off, end, ok, want)
	}
	switch v.Kind() {
	case KindArray:
		for _, e := range v.Elements() {
			c := *e
			checkWritten(t, data, &c)
		}
	case KindObject:
		for _, m := range v.Members() {
			c := *m
			checkWritten(t, data, &c)
		}
	}
}

func TestWrittenCanonically(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want bool
	}{
		{`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, true},
		{`{"b":1,"a":2}`, false},  // member order
		{`{"a":1, "b":2}`, false}, // whitespace
		{` {"a":1}`, true},        // whitespace around the value is not part of it
		{`{"a": 1}`, false},
		{`[1.0]`, false},                          // number form
		{`[1.5,1e+21,1e-7,-3,0.000001]`, true},    // canonical non-integers
		{`[-0]`, false},                           // negative zero
		{`["\n\"\\\u001f\u0000"]`, true},          // canonical escapes
		{`["\u000a"]`, false},                     // short form exists
		{`["\u001F"]`, false},                     // uppercase hex
		{`["\/"]`, false},                         // needless escape
		{`["\u0041"]`, false},                     // needless escape
		{`{"\u20ac":1,"\r":2}`, false},            // escaped name, order
		{`{"\r":2,"1":1,"€":3}`, true},            // UTF-16 order, short escape in a name
		{"{\"\U0001F600\":1,\"\uFB33\":2}", true}, // a supplementary character sorts before U+FB33 in UTF-16
		{"{\"\uFB33\":2,\"\U0001F600\":1}", false},
		{`{}`, true},
		{`[]`, true},
		{`[[],{},""]`, true},
		{`[ ]`, false},
		{`{"a":{"b":{"c":[1,2,{"d":null}]}}}`, true},
	} {
		v, err := Parse([]byte(tt.doc))
		if err != nil {
			t.Fatalf("%s: %v", tt.doc, err)
		}
		if _, ok := v.WrittenCanonically(); ok != tt.want {
			t.Errorf("%s: WrittenCanonically %v, want %v", tt.doc, ok, tt.want)
		}
		checkWritten(t, []byte(tt.doc), v)
	}
}

func TestWrittenCanonicallyAllocatesNothing(t *testing.T) {
	doc := []byte(`{"a":[1,1.5,"x\n"],"b":{"\r":null,"c":"d"}}`)
	v, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() { v.WrittenCanonically() }); allocs > 0 {
		t.Fatalf("WrittenCanonically allocated %v times", allocs)
	}
}

// FuzzWrittenCanonically: WrittenCanonically agrees with the encoder on
// every value of every accepted text.
func FuzzWrittenCanonically(f *testing.F) {
	for _, dir := range []string{"input", "output"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	for _, s := range fuzzedge.Ints() {
		f.Add([]byte(`{"a":[` + s + `,"\u0000"],"b":` + s + `}`))
	}
	for _, s := range []string{`{"a":1,"a":2}`, `[1.0,-0,1e21,1e+21,"\u001f","\u001F","\/"]`, `{"b":1,"a":{}}`, `"\ud83d\ude00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			return
		}
		checkWritten(t, data, v)
		var ps Parser
		if pv, err := ps.Parse(data); err == nil {
			checkWritten(t, data, pv)
		}
	})
}
