package vpec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
)

// sameRecord fails t unless fastRecord, when it takes raw, gives exactly
// what the tree path gives: no problem of any kind, the same decoded
// record, canonical form and chain input. It reports whether fastRecord
// took raw.
func sameRecord(t *testing.T, raw []byte) bool {
	t.Helper()
	var fast, tree Record
	var fo, to recordOutcome
	if !fastRecord(raw, false, &fo, &fast) {
		if !reflect.DeepEqual(fo, recordOutcome{}) || !reflect.DeepEqual(fast, Record{}) {
			t.Fatalf("declined %q but changed its outcome or record", raw)
		}
		return false
	}
	ps := canonical.Parser{MaxDepth: document.MaxDepth - 2}
	readRecordTree(&ps, raw, raw, 0, 7, &recordBufs{}, &to, &tree)
	switch {
	case to.parseErr != nil || len(to.checkErrs) > 0 || to.decodeErr != nil:
		t.Fatalf("fast path took %q; the tree path finds: parse %v, checks %q, decode %v", raw, to.parseErr, to.checkErrs, to.decodeErr)
	case !bytes.Equal(fo.enc, to.enc):
		t.Fatalf("canonical forms differ for %q:\n%q\n%q", raw, fo.enc, to.enc)
	case !bytes.Equal(fo.chain.Bytes(), to.chain.Bytes()):
		t.Fatalf("chain inputs differ for %q:\n%q\n%q", raw, fo.chain.Bytes(), to.chain.Bytes())
	case !inside(fo.chain.Head, raw) || !inside(fo.chain.Tail, raw):
		t.Fatalf("the fast path's chain input for %q is not windows of it", raw)
	case !reflect.DeepEqual(fast, tree):
		t.Fatalf("records differ for %q:\n%+v\n%+v", raw, fast, tree)
	}
	// Owned (ParseOwned), the same record, its fields windows of raw.
	var owned Record
	var oo recordOutcome
	if !fastRecord(raw, true, &oo, &owned) || !reflect.DeepEqual(owned, fast) || !reflect.DeepEqual(oo, fo) {
		t.Fatalf("owned, %q reads differently", raw)
	}
	return true
}

// baseRecord is a record as the service writes it (canonical form), with
// every flat field the fast path reads.
func baseRecord(t testing.TB) map[string]any {
	return map[string]any{
		"record_id": "rec_00000000-0000-4000-8000-000000000001", "sequence": 1, "check": "pii_detection",
		"manifest_id":  "sha256:60aa88e9ade3a8b416633ae276d0afbdd7c1e8f2d4c714981af92554264e00ea",
		"check_result": "pass", "proof_level": "execution", "commitment_algorithm": "sha256",
		"commitment_hash":   "sha256:2c8b632e891cd4bf380f849b6d6e116ecde0ddf3325a3a4435b615864332df17",
		"output_commitment": "sha256:3c8b632e891cd4bf380f849b6d6e116ecde0ddf3325a3a4435b615864332df17",
		"visibility":        "opaque", "recorded_at": "2026-11-25T00:14:34.500Z",
		"details":    map[string]any{"model": "pii-detector-v3", "threshold": 0.8},
		"chain_hash": "sha256:4c8b632e891cd4bf380f849b6d6e116ecde0ddf3325a3a4435b615864332df17",
	}
}

func canonicalOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := canonical.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fastCases are records in canonical form, each edited from baseRecord,
// and whether the fast path takes them.
func fastCases(t testing.TB) map[string]struct {
	raw  []byte
	fast bool
} {
	with := func(edit func(m map[string]any)) []byte {
		m := baseRecord(t)
		edit(m)
		return canonicalOf(t, m)
	}
	set := func(k string, v any) []byte { return with(func(m map[string]any) { m[k] = v }) }
	drop := func(k string) []byte { return with(func(m map[string]any) { delete(m, k) }) }
	base := canonicalOf(t, baseRecord(t))
	replace := func(old, new string) []byte {
		if !bytes.Contains(base, []byte(old)) {
			t.Fatalf("%q not in the base record", old)
		}
		return bytes.Replace(base, []byte(old), []byte(new), 1)
	}
	out := map[string]struct {
		raw  []byte
		fast bool
	}{}
	add := func(name string, raw []byte, fast bool) {
		out[name] = struct {
			raw  []byte
			fast bool
		}{raw, fast}
	}
	add("base", base, true)
	add("no details", drop("details"), true)
	add("no output commitment", drop("output_commitment"), true)
	add("every optional string", with(func(m map[string]any) {
		m["onnx_model_hash"], m["stage_type"], m["stage_part"] = "sha256:ab", "retrieval", "retrieval"
		m["disclosed_input"], m["disclosed_output"] = "x", "y"
	}), true)
	add("details of every JSON type", set("details", map[string]any{
		"a": []any{1, -2, 0.5, 1e21, 1e-7, -0.25, true, false, nil, "é☃𝄞", map[string]any{}, []any{}},
		"b": map[string]any{"c": map[string]any{"d": []any{[]any{"deep"}}}}, "n": 123456789012345,
	}), true)
	add("non-ASCII strings", set("check", "détection ☃"), true)
	add("DEL in a string", set("check", "a\x7fb"), true)
	add("negative sequence", set("sequence", -5), true)
	add("zero sequence", set("sequence", 0), true)
	add("15-digit sequence", set("sequence", 999999999999999), true)
	add("inference stage without details", with(func(m map[string]any) {
		m["stage_part"] = "inference"
		delete(m, "details")
	}), true)
	add("empty required string", set("check", ""), true)
	add("details at the size limit", set("details", map[string]any{"s": strings.Repeat("x", MaxDetailsBytes-8)}), true)

	// Declined: the tree path reads them (most are problems).
	add("details over the size limit", set("details", map[string]any{"s": strings.Repeat("x", MaxDetailsBytes-7)}), false)
	add("inference stage with details", set("stage_part", "inference"), false)
	add("16-digit sequence", set("sequence", 1234567890123456), false)
	add("sequence with a fraction", replace(`"sequence":1,`, `"sequence":1.5,`), false)
	add("sequence 1.0", replace(`"sequence":1,`, `"sequence":1.0,`), false)
	add("sequence 1e0", replace(`"sequence":1,`, `"sequence":1e0,`), false)
	add("sequence -0", replace(`"sequence":1,`, `"sequence":-0,`), false)
	add("sequence 01", replace(`"sequence":1,`, `"sequence":01,`), false)
	add("sequence a string", replace(`"sequence":1,`, `"sequence":"1",`), false)
	add("sequence null", replace(`"sequence":1,`, `"sequence":null,`), false)
	add("check a number", replace(`"check":"pii_detection"`, `"check":5`), false)
	add("check null", replace(`"check":"pii_detection"`, `"check":null`), false)
	add("escape in a string", set("check", "a\"b"), false)
	add("control character escaped", set("check", "a\nb"), false)
	add("solidus escaped", replace(`"check":"pii_detection"`, `"check":"pii\/detection"`), false)
	add("raw control character", replace(`"check":"pii_detection"`, "\"check\":\"pii\x01detection\""), false)
	add("invalid UTF-8", replace(`"check":"pii_detection"`, "\"check\":\"pii\xffdetection\""), false)
	add("surrogate in UTF-8", replace(`"check":"pii_detection"`, "\"check\":\"pii\xed\xa0\x80\""), false)
	add("empty optional string", set("output_commitment", ""), false)
	add("empty details", set("details", map[string]any{}), false)
	add("details not an object", set("details", []any{1}), false)
	add("details null", set("details", nil), false)
	add("non-canonical number in details", replace(`"threshold":0.8`, `"threshold":0.80`), false)
	add("exponent in details", replace(`"threshold":0.8`, `"threshold":8e-1`), false)
	add("huge number in details", replace(`"threshold":0.8`, `"threshold":1e400`), false)
	add("details members out of order", replace(`"model":"pii-detector-v3","threshold":0.8`, `"threshold":0.8,"model":"pii-detector-v3"`), false)
	add("details duplicate member", replace(`"model":"pii-detector-v3","threshold":0.8`, `"model":"a","model":"b"`), false)
	add("non-ASCII member name in details", set("details", map[string]any{"é": 1}), false)
	add("members out of order", replace(`"chain_hash"`, `"zchain_hash"`), false)
	add("unknown member", set("zzz", "1"), false)
	add("missing record_id", drop("record_id"), false)
	add("missing chain_hash", drop("chain_hash"), false)
	add("missing sequence", drop("sequence"), false)
	add("a review", set("review", map[string]any{"session_id": "s"}), false)
	session := func(edit func(m map[string]any)) []byte {
		cs := map[string]any{"check_close_tst": "MIIB" + strings.Repeat("Zm9v", 300) + "==", "check_open_tst": "MIIA+/9=", "session_id": "chk_00000000-0000-4000-8000-0000000c4ec1"}
		edit(cs)
		return set("check_session", cs)
	}
	add("a check session", session(func(map[string]any) {}), true)
	add("a check session of empty strings", session(func(m map[string]any) {
		m["check_close_tst"], m["check_open_tst"], m["session_id"] = "", "", ""
	}), true)
	add("a check session missing a member", set("check_session", map[string]any{"session_id": "s"}), false)
	add("a check session with a fourth member", session(func(m map[string]any) { m["zz"] = "x" }), false)
	add("a check session member first out of order", session(func(m map[string]any) { m["a"] = "x" }), false)
	add("a check session member not a string", session(func(m map[string]any) { m["session_id"] = 5 }), false)
	add("a check session member null", session(func(m map[string]any) { m["check_open_tst"] = nil }), false)
	add("a check session token escaped", session(func(m map[string]any) { m["check_open_tst"] = "a\nb" }), false)
	add("a check session not an object", set("check_session", "s"), false)
	add("a check session empty", set("check_session", map[string]any{}), false)
	add("a check session and a review", with(func(m map[string]any) {
		m["check_session"] = map[string]any{"check_close_tst": "a", "check_open_tst": "b", "session_id": "c"}
		m["review"] = map[string]any{"session_id": "s"}
	}), false)
	add("field digests", set("field_digests", []any{"a"}), false)
	add("a space after a colon", replace(`"check":"pii`, `"check": "pii`), false)
	add("a newline between members", replace(`,"check":`, ",\n\"check\":"), false)
	add("whitespace inside details", replace(`"threshold":0.8`, `"threshold": 0.8`), false)
	add("trailing garbage", append(append([]byte{}, base...), 'x'), false)
	add("truncated", base[:len(base)-1], false)
	add("empty object", []byte(`{}`), false)
	add("not an object", []byte(`[1]`), false)
	add("deep details", set("details", map[string]any{"a": nest(fastMaxDepth + 2)}), false)
	add("literal misspelt", replace(`"threshold":0.8`, `"threshold":tru`), false)
	return out
}

func nest(n int) any {
	var v any = 1
	for range n {
		v = []any{v}
	}
	return v
}

// TestFastRecordSame: each record the fast path takes reads exactly as
// through its tree, and it takes the records the service writes and
// declines every other shape listed.
func TestFastRecordSame(t *testing.T) {
	for name, c := range fastCases(t) {
		t.Run(name, func(t *testing.T) {
			if got := sameRecord(t, c.raw); got != c.fast {
				t.Fatalf("fast path took it: %v, want %v (%q)", got, c.fast, c.raw)
			}
		})
	}
}

// TestFastRecordVectors: on every record of every vector, as written and
// in canonical form, the fast path agrees with the tree path; it takes
// the canonical form of each vector record without nested evidence.
func TestFastRecordVectors(t *testing.T) {
	took := 0
	for _, b := range vectorDocs(t) {
		var doc struct{ Records []json.RawMessage }
		if json.Unmarshal(b, &doc) != nil {
			continue
		}
		for _, r := range doc.Records {
			sameRecord(t, r)
			c, err := canonical.Transform(r)
			if err != nil {
				continue
			}
			if sameRecord(t, c) {
				took++
			}
		}
	}
	if took < 20 {
		t.Fatalf("the fast path took %d vector records, want most flat ones", took)
	}
}

// FuzzFastRecord: on any bytes, when the fast path reads a record it reads
// it as the tree path does.
func FuzzFastRecord(f *testing.F) {
	for _, c := range fastCases(f) {
		f.Add(c.raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameRecord(t, raw) })
}

// TestPlainWord: every byte value, at every position of a word, is plain
// exactly when the byte loop would pass it.
func TestPlainWord(t *testing.T) {
	for c := range 256 {
		want := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
		for k := range 8 {
			w := []byte("aaaaaaaa")
			w[k] = byte(c)
			if got := plainWord(binary.LittleEndian.Uint64(w)); got != want {
				t.Fatalf("byte %#x at %d: plain %v, want %v", c, k, got, want)
			}
		}
	}
}
