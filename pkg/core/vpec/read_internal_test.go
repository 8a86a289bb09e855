package vpec

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/canonical"
)

// readBoth reads doc in parts (as the verifier does) and as one tree.
func readBoth(doc []byte) (parts, whole Document, perrs, werrs []string, partsOK, wholeOK bool) {
	parts, whole = Document{raw: doc}, Document{raw: doc}
	partsOK = parts.read(doc, func(f string, a ...any) { perrs = append(perrs, f) })
	wholeOK = whole.readWhole(doc, func(f string, a ...any) { werrs = append(werrs, f) })
	return
}

// FuzzRead: reading a VPEC in parts gives exactly what reading it as one
// tree gives (signed bytes, chain input, decoded fields), and both refuse
// the same documents, whatever the input: nulls and empty values at every
// depth, escapes, odd numbers, broken syntax.
func FuzzRead(f *testing.F) {
	docs := vectorDocs(f)
	for _, b := range docs {
		f.Add(b)
	}
	base := docs["valid/witnessed.json"]
	for _, edit := range [][2]string{
		{`"sequence": 1,`, `"sequence": 1, "details": {"x": null},`},
		{`"sequence": 1,`, `"sequence": 1, "details": {"a": {"b": [null, {"c": null}], "d": null}, "e": [null, [null]]},`},
		{`"sequence": 1,`, `"sequence": 1, "details": {"": {}, "s": "", "n": [], "z": 0.0, "u": "\u0000\ud83d\ude00"},`},
		{`"sequence": 1,`, `"sequence": 1, "details": null,`},
		{`"sequence": 1,`, `"sequence": 1, "details": {},`},
		{`"sequence": 1,`, `"sequence": 1, "stage_type": "",`},
		{`"sequence": 1,`, `"sequence": null,`},
		{`"sequence": 1,`, `"sequence": 1.0,`},
		{`"gaps": [],`, `"gaps": null,`},
		{`"gaps": [],`, `"gaps": [null],`},
		{`"gaps": [],`, `"gaps": [{"gap_id": null, "check": null, "sequence": null}],`},
		{`"review": {`, `"review": null, "x": {`},
		{`"records": [`, `"records": [null, `},
		{`"records": [`, `"records": [], "records": [`},
		{`"chain_hash"`, `"chain_hash" "x",`},
		{`"run_id"`, `"run\u005fid"`},
	} {
		if base != nil {
			f.Add(bytes.Replace(base, []byte(edit[0]), []byte(edit[1]), 1))
		}
	}
	if base != nil {
		for _, d := range fuzzedge.Documents(base, 500) { // every integer at the documented maxima and int64 edges
			f.Add(d)
		}
	}
	// The same documents in canonical form, whose records the reader in
	// parts copies as written instead of encoding them (read.go), and
	// near-canonical ones it must not.
	var canon []byte
	for name, b := range docs {
		if c, err := canonical.Transform(b); err == nil {
			f.Add(c)
			if name == "valid/witnessed.json" {
				canon = c
			}
		}
	}
	if base != nil {
		for _, details := range []string{
			`{"s":"` + strings.Repeat("x", MaxDetailsBytes-8) + `"}`, // MaxDetailsBytes in canonical form
			`{"s":"` + strings.Repeat("x", MaxDetailsBytes-7) + `"}`, // one more
			`{"n":[1,1.5,1e+21,1e-7],"s":"\u0000\n\"","\r":{}}`,
		} {
			if c, err := canonical.Transform(bytes.Replace(base, []byte(`"sequence": 1,`), []byte(`"sequence": 1, "details": `+details+`,`), 1)); err == nil {
				f.Add(c)
			}
		}
	}
	if canon != nil {
		for _, edit := range [][2]string{
			{`"sequence":1,`, `"sequence":1.0,`},
			{`"sequence":1,`, `"sequence": 1,`},
			{`"sequence":1,`, `"sequence":1,"details":{"b":1,"a":2},`},
			{`"sequence":1,`, `"sequence":1,"details":{"a":"\u0041"},`},
			{`"chain_hash":`, `"chain_hash" :`},
			{`{"chain_hash":"`, `{"a":"`},
		} {
			f.Add(bytes.Replace(canon, []byte(edit[0]), []byte(edit[1]), 1))
		}
		for _, d := range fuzzedge.Documents(canon, 200) {
			f.Add(d)
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if checkShape(doc) != nil {
			return
		}
		parts, whole, perrs, werrs, partsOK, wholeOK := readBoth(doc)
		if partsOK != wholeOK {
			t.Fatalf("read in parts ok=%v (%v), as one tree ok=%v (%v)", partsOK, perrs, wholeOK, werrs)
		}
		if !partsOK {
			return
		}
		if !bytes.Equal(parts.Signed(), whole.Signed()) {
			t.Fatalf("signed bytes differ:\n%s\n%s", parts.Signed(), whole.Signed())
		}
		if !reflect.DeepEqual(joined(parts.Chain), joined(whole.Chain)) {
			t.Fatalf("chain input differs")
		}
		if !reflect.DeepEqual(parts.VPEC, whole.VPEC) {
			t.Fatalf("decoded VPEC differs:\n%+v\n%+v", parts.VPEC, whole.VPEC)
		}
	})
}

// TestReadMemory: reading a VPEC allocates at most 8 times its size in
// all (garbage included), for real records and for the densest details
// the rules allow. Before, the whole-document tree alone took about 120
// times the input.
func TestReadMemory(t *testing.T) {
	if raceOn {
		t.Skip("allocation bounds do not hold under the race detector")
	}
	witnessed, err := os.ReadFile("../../../testdata/vectors/vpec/valid/witnessed.json")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(witnessed, []byte(`"records": [`)) + len(`"records": [`)
	j := bytes.Index(witnessed[i:], []byte("\n    }")) + i + len("\n    }")
	rec := witnessed[i:j]
	for name, details := range map[string]string{
		"no details":         "",
		"details of zeros":   `{"z":[` + strings.Repeat("0,", 7999) + `0]}`,
		"details of strings": `{"s":[` + strings.Repeat(`"",`, 3999) + `""]}`,
		"many small members": `{` + membersOf(2000) + `}`,
		"nested details":     strings.Repeat(`{"a":[`, 30) + "null" + strings.Repeat("]}", 30),
	} {
		t.Run(name, func(t *testing.T) {
			r := rec
			if details != "" {
				r = bytes.Replace(rec, []byte(`"sequence": 1,`), []byte(`"sequence": 1, "details": `+details+`,`), 1)
			}
			var b bytes.Buffer
			b.Write(witnessed[:i])
			for k := 0; b.Len() < 1<<20; k++ {
				if k > 0 {
					b.WriteByte(',')
				}
				b.Write(r)
			}
			b.Write(witnessed[j:])
			doc := b.Bytes()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			p := Document{raw: doc}
			var errs []string
			p.read(doc, func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) })
			runtime.ReadMemStats(&after)
			if len(p.Chain) < 10 || len(p.Signed()) == 0 {
				t.Fatalf("not read: %v", errs)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 8*uint64(len(doc)) {
				t.Fatalf("reading %d bytes allocated %d (%.1fx), want at most 8x", len(doc), n, float64(n)/float64(len(doc)))
			} else {
				t.Logf("%.1fx", float64(n)/float64(len(doc)))
			}
		})
	}
}

func membersOf(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"%x":0`, i)
	}
	return strings.Join(parts, ",")
}
