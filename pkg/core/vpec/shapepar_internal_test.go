package vpec

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/document"
)

// scanWith is read's scan of doc, the second half of a records array
// scanned beside from minimum bytes on (-1: never).
func scanWith(doc []byte, minimum int) (*shapeScanner, error) {
	s := &shapeScanner{d: doc, collect: true, arrays: [2]arrayPart{{name: "records", start: -1}, {name: "gaps", start: -1}}, aheadMin: minimum}
	return s, s.scan()
}

// sameScan fails t unless the scan with a scan ahead on every records
// array gives what the scan alone gives: the same refusal (text and
// offset), the same text it could not follow, where it stopped, and every
// element of both arrays. It returns whether the scan ahead was taken.
func sameScan(t testing.TB, doc []byte) bool {
	t.Helper()
	want, werr := scanWith(doc, -1)
	got, gerr := scanWith(doc, 1)
	switch {
	case fmt.Sprint(gerr) != fmt.Sprint(werr):
		t.Fatalf("with a scan ahead: %v; alone: %v", gerr, werr)
	case werr != nil && gerr.(*shapeError).offset != werr.(*shapeError).offset:
		t.Fatalf("with a scan ahead: offset %d; alone: %d", gerr.(*shapeError).offset, werr.(*shapeError).offset)
	case got.bad != want.bad || got.pos != want.pos || got.depth != want.depth:
		t.Fatalf("with a scan ahead: bad %v pos %d depth %d; alone: bad %v pos %d depth %d", got.bad, got.pos, got.depth, want.bad, want.pos, want.depth)
	}
	for i := range want.arrays {
		w, g := want.arrays[i], got.arrays[i]
		if w.start != g.start || w.end != g.end || !reflect.DeepEqual(append([]uint32{}, w.elems...), append([]uint32{}, g.elems...)) {
			t.Fatalf("%s: with a scan ahead [%d, %d) %d elements; alone [%d, %d) %d elements", w.name, g.start, g.end, len(g.elems)/2, w.start, w.end, len(w.elems)/2)
		}
	}
	return got.joined
}

// TestShapeAhead: scanning the second half of the records array beside
// the first (from a guess of where an element starts) changes nothing the
// scan finds, whatever the guess hits: an element start (the result is
// taken), a '},{' inside a string, a problem in either half, text the
// scan cannot follow, an array that ends before the guess, objects of
// another array after it, deep nesting.
func TestShapeAhead(t *testing.T) {
	for name, b := range vectorDocs(t) {
		t.Run(name, func(t *testing.T) { sameScan(t, b) })
	}
	withDetails := func(s string) func(int, []byte) []byte {
		return func(k int, _ []byte) []byte {
			m := numbered(k)
			m["details"] = map[string]any{"s": s}
			return canonicalOf(t, m)
		}
	}
	deep := strings.Repeat(`{"a":`, document.MaxDepth-4) + "1" + strings.Repeat("}", document.MaxDepth-4)
	tooDeep := strings.Repeat(`{"a":`, document.MaxDepth) + "1" + strings.Repeat("}", document.MaxDepth)
	compact := flatDoc(t, 300, true, flat(nil))
	for name, tc := range map[string]struct {
		doc  []byte
		take int // the scan ahead's result is taken: 1 yes, 0 no, -1 either
	}{
		"compact":                      {compact, 1},
		"one per line":                 {flatDoc(t, 300, false, func(k int, _ []byte) []byte { return append([]byte("\n    "), flat(nil)(k, nil)...) }), 1},
		"pretty":                       {manyRecords(t, 300, func(_ int, r []byte) []byte { return r }), 1},
		"},{ in every record's string": {flatDoc(t, 300, true, withDetails("},{")), -1},
		"}, { in strings":              {flatDoc(t, 300, true, withDetails("} ,\n {\"a\":1}")), -1},
		"the guess inside a string": {flatDoc(t, 300, true, func(k int, r []byte) []byte {
			if k == 150 {
				return withDetails(strings.Repeat("},{", 30000))(k, r)
			}
			return flat(nil)(k, r)
		}), 0},
		"a problem in the second half": {flatDoc(t, 300, true, flat(map[int]string{250: `"sequence":1,"zzz":1,`})), 0},
		"a problem in the first half":  {flatDoc(t, 300, true, flat(map[int]string{10: `"sequence":1,"zzz":1,`})), 0},
		"problems in both halves":      {flatDoc(t, 300, true, flat(map[int]string{10: `"sequence":1,"zzz":1,`, 250: `"sequence":1,"yyy":1,`})), 0},
		"a record not an object":       {bytes.Replace(compact, []byte(`},{"chain_hash"`), []byte(`},7,{"chain_hash"`), 1), 0},
		"cut in the second half":       {compact[:len(compact)*3/4], 0},
		"cut in the first half":        {compact[:len(compact)/4], 0},
		"deep details in the second half": {flatDoc(t, 300, true, func(k int, r []byte) []byte {
			if k == 280 {
				return bytes.Replace(flat(nil)(k, r), []byte(`"threshold":0.8`), []byte(`"threshold":`+deep), 1)
			}
			return flat(nil)(k, r)
		}), 1},
		"too deep in the second half": {flatDoc(t, 300, true, func(k int, r []byte) []byte {
			if k == 280 {
				return bytes.Replace(flat(nil)(k, r), []byte(`"threshold":0.8`), []byte(`"threshold":`+tooDeep), 1)
			}
			return flat(nil)(k, r)
		}), 0},
		// The guess between two objects that look like records, inside
		// a record's details: the scan ahead reaches a ']' (the list's)
		// with nothing to report, but the scan never lands on its start.
		"record-like objects in details": {func() []byte {
			inner := make([]any, 20)
			for i := range inner {
				inner[i] = baseRecord(nil)
			}
			return flatDoc(t, 3, true, func(k int, r []byte) []byte {
				if k != 1 {
					return flat(nil)(k, r)
				}
				m := numbered(k)
				m["details"] = map[string]any{"list": inner}
				return canonicalOf(t, m)
			})
		}(), 0},
		"small records, then a large member":  {[]byte(`{"records":[{"a":1},{"b":2}],"environment":"` + strings.Repeat(`},{`, 1000) + `"}`), 0},
		"small records, then objects of gaps": {[]byte(`{"records":[{"a":1}],"gaps":[` + strings.Repeat(`{"gap_type":"x"},`, 500) + `{"gap_type":"x"}]}`), 0},
	} {
		t.Run(name, func(t *testing.T) {
			if taken := sameScan(t, tc.doc); tc.take >= 0 && taken != (tc.take == 1) {
				t.Fatalf("scan ahead taken: %v, want %v", taken, tc.take == 1)
			}
		})
	}
}

// FuzzShapeAhead: on any document, the scan with a scan ahead on every
// records array finds what the scan alone finds.
func FuzzShapeAhead(f *testing.F) {
	f.Add([]byte(`{"records":[{"a":1},{"b":"},{"},{"c":[{}]}],"gaps":[{"d":1},{"e":2}]}`))
	f.Add([]byte(`{"records":[{"check":"x"} , {"check":"y"},{"check":"},{\"z\":1}"}]}`))
	f.Add([]byte(`{"records":[{"a":{"b":{"c":1}}},{"a":1},{"a":2}]`))
	f.Add([]byte(`{"records":[{"check":"a"},{"details":{"l":[{"check":"b"},{"check":"c"}]}},{"check":"d"}]}`))
	if b, err := os.ReadFile("../../../testdata/vectors/vpec/valid/witnessed.json"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) { sameScan(t, doc) })
}
