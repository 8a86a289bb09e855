package vpec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
)

// readWith reads doc with the records read as par says, returning the
// document, whether it read and its problems as reported.
// When it reads, the v1 rules' problems follow (checkRules, as Parse
// runs them).
func readWith(doc []byte, par readPar) (Document, bool, []string) {
	p, ok, errs, _ := readSigned(doc, par)
	return p, ok, errs
}

// readSigned is readWith with a SignedTo that gives a buffer: what it was
// given (nil when SignedTo was not called).
func readSigned(doc []byte, par readPar) (Document, bool, []string, *bytes.Buffer) {
	var w *bytes.Buffer
	p := Document{raw: doc, par: par, signedTo: func(*VPEC) io.Writer { w = new(bytes.Buffer); return w }}
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	ok := p.read(doc, bad)
	if ok {
		p.checkRules(bad)
	}
	return p, ok, errs, w
}

// sameRead fails t unless reading doc on several goroutines, in chunks of
// several sizes, gives exactly what the one-goroutine loop gives: the same
// verdict, the same problems in the same order, the same signed bytes,
// chain inputs and decoded VPEC.
func sameRead(t *testing.T, doc []byte) {
	t.Helper()
	want, wantOK, wantErrs := readWith(doc, readPar{workers: 1})
	for _, par := range []readPar{{2, 1}, {3, 2}, {4, 7}, {2, 128}} {
		got, ok, errs, w := readSigned(doc, par)
		switch {
		case got.SignedWritten() && !bytes.Equal(w.Bytes(), got.Signed()):
			t.Fatalf("%+v: SignedWritten, but the writer was given other bytes than the signed bytes", par)
		case ok != wantOK || !reflect.DeepEqual(errs, wantErrs):
			t.Fatalf("%+v: ok=%v %q; one goroutine: ok=%v %q", par, ok, errs, wantOK, wantErrs)
		case !bytes.Equal(got.Signed(), want.Signed()):
			t.Fatalf("%+v: signed bytes differ", par)
		case !reflect.DeepEqual(joined(got.Chain), joined(want.Chain)):
			t.Fatalf("%+v: chain inputs differ", par)
		case !reflect.DeepEqual(got.VPEC, want.VPEC):
			t.Fatalf("%+v: decoded VPEC differs:\n%+v\n%+v", par, got.VPEC, want.VPEC)
		case ok && got.MerkleRoot() != MerkleRoot(got.VPEC.Records):
			t.Fatalf("%+v: Merkle root from the leaves read %s, from the records %s", par, got.MerkleRoot(), MerkleRoot(got.VPEC.Records))
		case ok && par.workers > 1 && len(got.leaves) != len(got.VPEC.Records):
			t.Fatalf("%+v: %d leaves computed for %d records", par, len(got.leaves), len(got.VPEC.Records))
		case ok && par.workers > 1 && len(got.idHashes) != len(got.VPEC.Records):
			t.Fatalf("%+v: %d id hashes computed for %d records", par, len(got.idHashes), len(got.VPEC.Records))
		case ok && par.workers > 1 && len(got.links) != len(got.VPEC.Records):
			t.Fatalf("%+v: %d chain links computed for %d records", par, len(got.links), len(got.VPEC.Records))
		case ok && !reflect.DeepEqual(got.ChainBreaks(), VerifyChainInputs(got.VPEC.RunID, got.VPEC.Records, got.Chain)):
			t.Fatalf("%+v: chain breaks from the links read %v, recomputed %v", par, got.ChainBreaks(), VerifyChainInputs(got.VPEC.RunID, got.VPEC.Records, got.Chain))
		}
	}
}

// manyRecords returns the witnessed vector with its first record repeated
// n times, record k edited by edit(k, record) (in its pretty-printed form).
func manyRecords(t testing.TB, n int, edit func(k int, rec []byte) []byte) []byte {
	witnessed, err := os.ReadFile("../../../testdata/vectors/vpec/valid/witnessed.json")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(witnessed, []byte(`"records": [`)) + len(`"records": [`)
	j := bytes.Index(witnessed[i:], []byte("\n    }")) + i + len("\n    }")
	var b bytes.Buffer
	b.Write(witnessed[:i])
	for k := range n {
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(edit(k, witnessed[i:j]))
	}
	b.Write(witnessed[j:])
	return b.Bytes()
}

// TestReadPartsParallelSame: the records read on several goroutines give
// what the one-goroutine loop gives, byte for byte and problem for
// problem, on every vector and on long documents with problems in one,
// several or many records (past the cap of reported problems), a syntax
// error after problems, and records in and out of canonical form.
func TestReadPartsParallelSame(t *testing.T) {
	for name, b := range vectorDocs(t) {
		t.Run(name, func(t *testing.T) { sameRead(t, b) })
	}
	seq := func(bad string) func(int, []byte) []byte {
		return func(_ int, r []byte) []byte { return bytes.Replace(r, []byte(`"sequence": 1,`), []byte(bad), 1) }
	}
	// What reaches the reader in parts: the shape scanner sends text it
	// cannot follow to the one-tree reader, but a duplicate member is a
	// parse error here, and field types and details are checked here.
	const (
		notInteger = `"sequence": 1.5,`
		badNumber  = `"sequence": 1, "details": {"n": 1.50},`
		duplicate  = `"sequence": 1, "details": {"a": 1, "a": 2},`
	)
	only := func(edits map[int]string) func(int, []byte) []byte {
		return func(k int, r []byte) []byte {
			if e, ok := edits[k]; ok {
				return seq(e)(k, r)
			}
			return r
		}
	}
	for name, doc := range map[string][]byte{
		"300 as given":                    manyRecords(t, 300, func(_ int, r []byte) []byte { return r }),
		"rule problems in every record":   manyRecords(t, 300, seq(`"sequence": -1,`)),
		"rule problems in some records":   manyRecords(t, 300, only(map[int]string{7: `"sequence": 0,`, 129: `"sequence": 1, "check": "",`, 255: `"sequence": -3,`})),
		"one bad sequence":                manyRecords(t, 300, only(map[int]string{171: `"sequence": "1",`})),
		"decode problems in every record": manyRecords(t, 300, seq(notInteger)),
		"check problems in every record":  manyRecords(t, 300, seq(badNumber)),
		"both kinds, alternating":         manyRecords(t, 300, func(k int, r []byte) []byte { return seq([]string{notInteger, badNumber}[k%2])(k, r) }),
		"non-canonical detail numbers":    manyRecords(t, 300, only(map[int]string{3: badNumber, 130: badNumber, 299: badNumber})),
		"details too large":               manyRecords(t, 300, only(map[int]string{200: `"sequence": 1, "details": {"s": "` + strings.Repeat("x", MaxDetailsBytes) + `"},`})),
		"duplicate member after problems": manyRecords(t, 300, only(map[int]string{5: notInteger, 9: badNumber, 250: duplicate})),
		"duplicate member in the first":   manyRecords(t, 300, only(map[int]string{0: duplicate})),
		"duplicate member, same chunk":    manyRecords(t, 300, only(map[int]string{1: notInteger, 2: duplicate, 3: notInteger})),
		"problems past the cap, duplicate": manyRecords(t, 300, func(k int, r []byte) []byte {
			if k == 290 {
				return seq(duplicate)(k, r)
			}
			return seq(notInteger)(k, r)
		}),
		// Records in canonical form: the fast path reads them.
		"canonical records":                   manyRecords(t, 300, flat(nil)),
		"canonical records, problems in some": manyRecords(t, 300, flat(map[int]string{4: `"sequence":0,`, 140: `"sequence":1.5,`, 141: `"sequence": 2,`, 299: `"sequence":"x",`})),
		"canonical records, duplicate member": manyRecords(t, 300, flat(map[int]string{200: `"sequence":1,"sequence":1,`})),
		"compact array, ids twice": flatDoc(t, 300, true, func(k int, r []byte) []byte {
			raw := flat(nil)(k, r)
			if k == 5 || k == 200 || k == 299 { // 5, 200 and 299 take 4's, 128's and 4's ids
				from := map[int]int{5: 4, 200: 128, 299: 4}[k]
				raw = bytes.Replace(raw, []byte(fmt.Sprintf("%012d", k+1)), []byte(fmt.Sprintf("%012d", from+1)), 1)
			}
			return raw
		}),
		// A compact array of canonical records: its bytes are the signed
		// bytes' records (a window); a record not in canonical form, a
		// problem or a parse error anywhere ends the window.
		"compact array":                       flatDoc(t, 300, true, flat(nil)),
		"compact array, first not canonical":  flatDoc(t, 300, true, pretty(0)),
		"compact array, one not canonical":    flatDoc(t, 300, true, pretty(150)),
		"compact array, last not canonical":   flatDoc(t, 300, true, pretty(299)),
		"compact array, problems in some":     flatDoc(t, 300, true, flat(map[int]string{4: `"sequence":0,`, 299: `"sequence":"x",`})),
		"compact array, decode problem last":  flatDoc(t, 300, true, flat(map[int]string{299: `"sequence":1.5,`})),
		"compact array, duplicate member":     flatDoc(t, 300, true, flat(map[int]string{200: `"sequence":1,"sequence":1,`})),
		"compact array, problem in the first": flatDoc(t, 300, true, flat(map[int]string{0: `"sequence":-1,`})),
		"array with a space before its end":   flatDoc(t, 300, false, flat(nil)),
		// Written in canonical form, but with a problem the reader finds
		// (not a rule found after): the window ends there.
		"compact array, details too large": flatDoc(t, 300, true, func(k int, r []byte) []byte {
			if k != 200 {
				return flat(nil)(k, r)
			}
			m := numbered(k)
			m["details"] = map[string]any{"s": strings.Repeat("x", MaxDetailsBytes)}
			return canonicalOf(t, m)
		}),
	} {
		t.Run(name, func(t *testing.T) { sameRead(t, doc) })
	}
}

// flatDoc returns the witnessed vector with its records array replaced by
// n records, record k given by edit(k) (flat or pretty); compact, the
// array has no space inside, else a newline before its ']'.
func flatDoc(t testing.TB, n int, compact bool, edit func(int, []byte) []byte) []byte {
	t.Helper()
	witnessed, err := os.ReadFile("../../../testdata/vectors/vpec/valid/witnessed.json")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(witnessed, []byte(`"records": [`)) + len(`"records": [`)
	j := bytes.Index(witnessed, []byte("\n  ],\n  \"signing_key_id\""))
	if i < len(`"records": [`) || j < i {
		t.Fatal("no records array in the witnessed vector")
	}
	var b bytes.Buffer
	b.Write(witnessed[:i])
	for k := range n {
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(edit(k, nil))
	}
	if !compact {
		b.WriteString("\n  ")
	}
	b.Write(witnessed[j+len("\n  "):])
	return b.Bytes()
}

// pretty is flat(nil) with record k written with a space after each colon
// (not its canonical form).
func pretty(k int) func(int, []byte) []byte {
	return func(i int, r []byte) []byte {
		raw := flat(nil)(i, r)
		if i == k {
			raw = bytes.ReplaceAll(raw, []byte(`":`), []byte(`": `))
		}
		return raw
	}
}

// TestSignedPartsWindow: a large VPEC whose records are each written in
// canonical form gives its signed bytes with the records as windows of the
// input (one window for a compact array, else one per record with commas
// between), not copies; any other gives them in one part. Either way
// they are the document's SignedBytes.
func TestSignedPartsWindow(t *testing.T) {
	for name, tc := range map[string]struct {
		doc   []byte
		parts int
	}{
		"compact canonical":            {flatDoc(t, 300, true, flat(nil)), 3},
		"compact, one not canonical":   {flatDoc(t, 300, true, pretty(150)), 1},
		"space before the end":         {flatDoc(t, 300, false, flat(nil)), 3},
		"one per line":                 {bytes.ReplaceAll(flatDoc(t, 300, true, flat(nil)), []byte("},{\"chain_hash"), []byte("},\n    {\"chain_hash")), 2 + 2*300 - 1},
		"one per line, one not":        {bytes.ReplaceAll(flatDoc(t, 300, true, pretty(7)), []byte("},{\"chain_hash"), []byte("},\n    {\"chain_hash")), 1},
		"compact, too few to share":    {flatDoc(t, parMinimum-1, true, flat(nil)), 1},
		"compact, exactly the minimum": {flatDoc(t, parMinimum, true, flat(nil)), 3},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := Parse(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.SignedParts) != tc.parts {
				t.Fatalf("%d parts; want %d", len(d.SignedParts), tc.parts)
			}
			for i, p := range d.SignedParts {
				if i > 0 && i < len(d.SignedParts)-1 && !inside(p, tc.doc) && !bytes.Equal(p, []byte(",")) {
					t.Fatalf("part %d of the records, %.40q, is not a window of the input", i, p)
				}
			}
			want, err := SignedBytes(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(d.Signed(), want) {
				t.Fatalf("signed bytes differ from SignedBytes")
			}
		})
	}
}

// flat returns an edit giving baseRecord in canonical form, its sequence
// member replaced in record k by edits[k].
func flat(edits map[int]string) func(int, []byte) []byte {
	return func(k int, _ []byte) []byte {
		m := numbered(k)
		raw, err := canonical.Marshal(m)
		if err != nil {
			panic(err)
		}
		if e, ok := edits[k]; ok {
			raw = bytes.Replace(raw, []byte(fmt.Sprintf(`"sequence":%d,`, k+1)), []byte(e), 1)
		}
		return raw
	}
}

// TestSignedWritten: SignedTo's writer is given the signed bytes while the
// records are read, and SignedWritten says so, only when they are the part
// before the records, the records as written and the part after them:
// every record in canonical form, read on several goroutines, without
// problems. Otherwise it is false (the writer may have been given other
// bytes). A SignedTo that returns nil is given nothing.
func TestSignedWritten(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  []byte
		par  readPar
		want bool
	}{
		"compact canonical":               {flatDoc(t, 300, true, flat(nil)), readPar{2, 128}, true},
		"compact canonical, small chunks": {flatDoc(t, 300, true, flat(nil)), readPar{3, 7}, true},
		"space before the end":            {flatDoc(t, 300, false, flat(nil)), readPar{2, 128}, true},
		"one record per line":             {flatDoc(t, 300, false, func(k int, _ []byte) []byte { return append([]byte("\n    "), flat(nil)(k, nil)...) }), readPar{2, 128}, true},
		"first not canonical":             {flatDoc(t, 300, true, pretty(0)), readPar{2, 128}, false},
		"last not canonical":              {flatDoc(t, 300, true, pretty(299)), readPar{2, 128}, false},
		// A rule problem is found after the read: the bytes are still the
		// signed bytes (the signature is then not checked).
		"a rule problem in one":   {flatDoc(t, 300, true, flat(map[int]string{140: `"sequence":0,`})), readPar{2, 128}, true},
		"a decode problem in one": {flatDoc(t, 300, true, flat(map[int]string{140: `"sequence":1.5,`})), readPar{2, 128}, false},
		"a parse error in one":    {flatDoc(t, 300, true, flat(map[int]string{200: `"sequence":1,"sequence":1,`})), readPar{2, 128}, false},
		"one goroutine":           {flatDoc(t, 300, true, flat(nil)), readPar{workers: 1}, false},
	} {
		t.Run(name, func(t *testing.T) {
			d, ok, errs, w := readSigned(tc.doc, tc.par)
			if d.SignedWritten() != tc.want {
				t.Fatalf("SignedWritten = %v, want %v (ok=%v %q)", d.SignedWritten(), tc.want, ok, errs)
			}
			if tc.want && !bytes.Equal(w.Bytes(), d.Signed()) {
				t.Fatal("the writer was given other bytes than the signed bytes")
			}
		})
	}
	d := Document{raw: flatDoc(t, 300, true, flat(nil)), par: readPar{2, 128}, signedTo: func(*VPEC) io.Writer { return nil }}
	if !d.read(d.raw, func(string, ...any) {}) || d.SignedWritten() {
		t.Fatalf("SignedTo returning nil: SignedWritten = %v", d.SignedWritten())
	}
}

// chained returns flatDoc's records with a chain that holds from the
// witnessed vector's genesis, except as edit changes record k (its map,
// before its chain hash is set; the next record links to what edit left).
func chained(t testing.TB, edit func(k int, m map[string]any)) func(int, []byte) []byte {
	witnessed, err := os.ReadFile("../../../testdata/vectors/vpec/valid/witnessed.json")
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(witnessed, &top); err != nil {
		t.Fatal(err)
	}
	prev := Genesis(top.RunID)
	return func(k int, _ []byte) []byte {
		m := numbered(k)
		delete(m, "chain_hash")
		next := NextChainHash(prev, canonicalOf(t, m))
		m["chain_hash"] = commitment.OfSHA256(next).String()
		if edit != nil {
			edit(k, m)
		}
		got, err := commitment.ParseSHA256(m["chain_hash"].(string))
		if err != nil {
			t.Fatal(err)
		}
		prev = got
		return canonicalOf(t, m)
	}
}

// TestChainBreaksFromLinks: the chain links the record goroutines compute
// as they read (each chunk's first record linked by the replay) give the
// breaks VerifyChainInputs recomputes: none on an intact chain, and the
// one record changed, wherever it falls (first, a chunk's first or last,
// last). A mutation of either link (the worker's or the replay's) fails it.
func TestChainBreaksFromLinks(t *testing.T) {
	wrong := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name  string
		at    int // the record changed; -1: none
		edit  func(m map[string]any)
		want  int   // breaks
		first int64 // the first break's sequence
	}{
		{"intact", -1, nil, 0, 0},
		{"first hash wrong", 0, func(m map[string]any) { m["chain_hash"] = wrong }, 1, 1},
		{"a chunk's last wrong", 127, func(m map[string]any) { m["chain_hash"] = wrong }, 1, 128},
		{"a chunk's first wrong", 128, func(m map[string]any) { m["chain_hash"] = wrong }, 1, 129},
		{"last wrong", 299, func(m map[string]any) { m["chain_hash"] = wrong }, 1, 300},
		{"a chunk's first changed after hashing", 256, func(m map[string]any) { m["check_result"] = "fail" }, 1, 257},
		{"sequence skips", 200, func(m map[string]any) { m["sequence"] = 202 }, 2, 202},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := flatDoc(t, 300, true, chained(t, func(k int, m map[string]any) {
				if k == tc.at {
					tc.edit(m)
				}
			}))
			for _, par := range []readPar{{2, 128}, {3, 7}, {1, 0}} {
				d, ok, errs := readWith(doc, par)
				if !ok {
					t.Fatalf("%+v: %q", par, errs)
				}
				if par.workers > 1 && d.links == nil {
					t.Fatalf("%+v: no links computed", par)
				}
				got, want := d.ChainBreaks(), VerifyChainInputs(d.VPEC.RunID, d.VPEC.Records, d.Chain)
				if len(got) != tc.want || !reflect.DeepEqual(got, want) {
					t.Fatalf("%+v: breaks %v; recomputed %v; want %d", par, got, want, tc.want)
				}
				if tc.want > 0 && got[0].Sequence != tc.first {
					t.Fatalf("%+v: first break at sequence %d, want %d", par, got[0].Sequence, tc.first)
				}
			}
		})
	}
}

// FuzzReadParallel: on any document, reading the records on several
// goroutines gives what the one-goroutine loop gives.
func FuzzReadParallel(f *testing.F) {
	for _, b := range vectorDocs(f) {
		f.Add(b)
	}
	f.Add(manyRecords(f, 300, flat(map[int]string{3: `"sequence":1.5,`})))
	f.Add(flatDoc(f, 300, true, flat(nil)))  // records left in the input, one window
	f.Add(flatDoc(f, 300, false, pretty(9))) // records left in the input up to one not canonical
	f.Add(manyRecords(f, 5, func(k int, r []byte) []byte {
		if k == 3 {
			return bytes.Replace(r, []byte(`"sequence": 1,`), []byte(`"sequence": 1.0,`), 1)
		}
		return r
	}))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if checkShape(doc) != nil {
			return
		}
		sameRead(t, doc)
	})
}

// joined is each chain input in one slice.
func joined(in []ChainInput) [][]byte {
	out := make([][]byte, len(in))
	for i, c := range in {
		out[i] = c.Bytes()
	}
	return out
}

// inside reports whether w is a window of b (or empty).
func inside(w, b []byte) bool {
	if len(w) == 0 {
		return true
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	return at >= start && at+uintptr(len(w)) <= start+uintptr(len(b))
}

// TestParseOwned: ParseOwned reads every vector and long documents (records
// in canonical form or not, with problems) exactly as Parse does, and only
// it shares the input's bytes: Parse's records own theirs, so a caller may
// change doc after Parse.
func TestParseOwned(t *testing.T) {
	docs := map[string][]byte{
		"compact canonical":          flatDoc(t, 300, true, flat(nil)),
		"one per line":               bytes.ReplaceAll(flatDoc(t, 300, true, flat(nil)), []byte("},{\"chain_hash"), []byte("},\n    {\"chain_hash")),
		"one not canonical":          flatDoc(t, 300, false, pretty(40)),
		"problems in some":           flatDoc(t, 300, true, flat(map[int]string{4: `"sequence":0,`, 299: `"sequence":"x",`})),
		"duplicate member":           flatDoc(t, 300, true, flat(map[int]string{200: `"sequence":1,"sequence":1,`})),
		"witnessed, many as written": manyRecords(t, 300, func(_ int, r []byte) []byte { return r }),
	}
	for name, b := range vectorDocs(t) {
		docs[name] = b
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want, werr := Parse(doc)
			got, gerr := ParseOwned(bytes.Clone(doc))
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || (got == nil) != (want == nil) {
				t.Fatalf("ParseOwned: %v; Parse: %v", gerr, werr)
			}
			if got == nil {
				return
			}
			if !reflect.DeepEqual(got.VPEC, want.VPEC) || !bytes.Equal(got.Signed(), want.Signed()) ||
				!reflect.DeepEqual(joined(got.Chain), joined(want.Chain)) || got.MerkleRoot() != want.MerkleRoot() {
				t.Fatal("ParseOwned read the document differently from Parse")
			}
		})
	}
	doc := flatDoc(t, 300, true, flat(nil))
	shares := func(d *Document) bool {
		id := d.VPEC.Records[150].RecordID
		return inside(unsafe.Slice(unsafe.StringData(id), len(id)), doc)
	}
	if d, err := ParseOwned(doc); err != nil || !shares(d) {
		t.Fatalf("ParseOwned: %v; its records share the input's bytes: %v", err, err == nil && shares(d))
	}
	if d, err := Parse(doc); err != nil || shares(d) {
		t.Fatalf("Parse: %v; its records share the input's bytes: %v", err, err == nil && shares(d))
	}
}

// TestDuplicateIDs: the duplicate-id rule from the record goroutines'
// hashes reports what the map of ids reports, record by record, with the
// real hashes and with hashes that all collide or collide in pairs (an
// equal hash is only a reason to compare the ids).
func TestDuplicateIDs(t *testing.T) {
	seed := maphash.MakeSeed()
	for name, ids := range map[string][]string{
		"none":        {"rec_a", "rec_b", "rec_c", "rec_d"},
		"one twice":   {"rec_a", "rec_b", "rec_a", "rec_c"},
		"adjacent":    {"rec_a", "rec_a", "rec_b"},
		"three times": {"rec_a", "rec_b", "rec_a", "rec_c", "rec_a"},
		"two pairs":   {"rec_a", "rec_b", "rec_b", "rec_a"},
		"many, some repeat": func() (s []string) {
			for i := range 1000 {
				s = append(s, fmt.Sprintf("rec_%d", i%700))
			}
			return s
		}(),
	} {
		recs := make([]Record, len(ids))
		for i, id := range ids {
			recs[i].RecordID = id
		}
		want := (&Document{VPEC: VPEC{Records: recs}}).duplicateIDs()
		var wantDup []bool
		for i := range recs {
			wantDup = append(wantDup, want(i))
		}
		for hname, hash := range map[string]func(string) uint64{
			"maphash":         func(s string) uint64 { return maphash.String(seed, s) },
			"all collide":     func(string) uint64 { return 7 },
			"pairs collide":   func(s string) uint64 { return maphash.String(seed, s) &^ 1 },
			"collide by size": func(s string) uint64 { return uint64(len(s)) },
		} {
			d := &Document{VPEC: VPEC{Records: recs}, idHashes: make([]uint64, len(recs))}
			for i, id := range ids {
				d.idHashes[i] = hash(id)
			}
			twice := d.duplicateIDs()
			for i := range recs {
				if got := twice(i); got != wantDup[i] {
					t.Fatalf("%s, %s: record %d (%s) twice = %v, the map says %v", name, hname, i, ids[i], got, wantDup[i])
				}
			}
		}
	}
}
