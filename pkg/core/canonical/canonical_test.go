package canonical

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

func TestTransformValid(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"null", "null", "null"},
		{"true ws", " \t\r\ntrue\n", "true"},
		{"false", "false", "false"},
		{"empty string", `""`, `""`},
		{"empty array", "[ ]", "[]"},
		{"empty object", "{ }", "{}"},
		{"nested", `[ [ ], { "a" : [ 1 , { } ] } ]`, `[[],{"a":[1,{}]}]`},
		{"int", "42", "42"},
		{"neg int", "-42", "-42"},
		{"zero", "0", "0"},
		{"neg zero", "-0", "0"},
		{"neg zero float", "-0.0e5", "0"},
		{"fraction", "4.50", "4.5"},
		{"exp", "1E30", "1e+30"},
		{"1e21", "1e21", "1e+21"},
		{"1e20", "1e20", "100000000000000000000"},
		{"1e-7", "1e-7", "1e-7"},
		{"1e-6", "0.000001", "0.000001"},
		{"big int", "123456789012345678901", "123456789012345680000"},
		{"2^53+1", "9007199254740993", "9007199254740992"},
		{"underflow to zero", "1e-400", "0"},
		{"long mantissa", "0." + strings.Repeat("3", 400), "0.3333333333333333"},
		{"many digits int", "1" + strings.Repeat("0", 300), "1e+300"},
		{"exp plus", "1.5e+3", "1500"},
		{"exp leading zeros", "1e007", "10000000"},
		{"15-digit int", "999999999999999", "999999999999999"},
		{"16-digit int", "9999999999999999", "10000000000000000"},
		{"escapes", `"\"\\\/\b\f\n\r\t"`, `"\"\\/\b\f\n\r\t"`},
		{"control escapes", `"\u0000\u001F\u001f\u0007"`, `"\u0000\u001f\u001f\u0007"`},
		{"del and c1 literal", `"\u007f\u0080\u009f"`, "\"\u007f\u0080\u009f\""},
		{"u escapes literal", `"\u00e9\u20AC\u2028\u2029\ufeff"`, "\"é€\u2028\u2029\ufeff\""},
		{"surrogate pair", `"\uD83D\uDE00"`, `"😀"`},
		{"raw utf8", `"😀 é"`, `"😀 é"`},
		{"html not escaped", `"<a href='x'>&</a>"`, `"<a href='x'>&</a>"`},
		{"noncharacter", `"\uffff\ufffe"`, "\"\uffff\ufffe\""},
		{"key order", `{"b":1,"a":2,"c":{"z":0,"y":1}}`, `{"a":2,"b":1,"c":{"y":1,"z":0}}`},
		{"key prefix", `{"ab":1,"a":2,"":3}`, `{"":3,"a":2,"ab":1}`},
		{"utf16 order", `{"\ufb33":1,"\ud83d\ude00":2,"\ue000":3,"\ud7ff":4}`, "{\"\ud7ff\":4,\"😀\":2,\"\ue000\":3,\"\ufb33\":1}"},
		{"escaped key order", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
		{"array order kept", `[3,1,2]`, `[3,1,2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Transform([]byte(tt.in))
			if err != nil {
				t.Fatalf("Transform(%q): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Transform(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if err := CheckStrict([]byte(tt.in)); err != nil {
				t.Errorf("CheckStrict: %v", err)
			}
			again, err := Transform(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("not idempotent: %s, %v", again, err)
			}
			if oracle, err := jcs.Transform([]byte(tt.in)); err == nil && !bytes.Equal(oracle, got) {
				t.Errorf("oracle: %s", oracle)
			}
		})
	}
}

func TestTransformErrors(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	deepObj := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	tests := []struct {
		name    string
		in      string
		wantErr error
		msg     string // substring of the error message
	}{
		{"empty", "", ErrInvalidJSON, "end of input, expected a value at offset 0"},
		{"whitespace only", "  \n", ErrInvalidJSON, "end of input"},
		{"trailing data", "{} {}", ErrInvalidJSON, "after top-level value at offset 3"},
		{"trailing comma array", "[1,]", ErrInvalidJSON, "offset 3"},
		{"trailing comma object", `{"a":1,}`, ErrInvalidJSON, "expected a string key at offset 7"},
		{"missing comma", `[1 2]`, ErrInvalidJSON, "expected ',' or ']'"},
		{"missing colon", `{"a" 1}`, ErrInvalidJSON, "expected ':'"},
		{"unquoted key", `{a:1}`, ErrInvalidJSON, "string key"},
		{"single quotes", `'a'`, ErrInvalidJSON, ""},
		{"unterminated array", `[1`, ErrInvalidJSON, "end of input in array"},
		{"unterminated object", `{"a":1`, ErrInvalidJSON, "end of input in object"},
		{"unterminated string", `"abc`, ErrInvalidJSON, "unterminated string at offset 0"},
		{"bad literal", `tru`, ErrInvalidJSON, "invalid literal"},
		{"literal suffix", `truex`, ErrInvalidJSON, "after top-level value"},
		{"NaN", `NaN`, ErrInvalidJSON, ""},
		{"Infinity", `-Infinity`, ErrInvalidJSON, ""},
		{"leading zero", `01`, ErrInvalidJSON, ""},
		{"leading plus", `+1`, ErrInvalidJSON, ""},
		{"bare dot", `.5`, ErrInvalidJSON, ""},
		{"trailing dot", `1.`, ErrInvalidJSON, "decimal point"},
		{"bare exp", `1e`, ErrInvalidJSON, "exponent"},
		{"exp sign only", `1e+`, ErrInvalidJSON, "exponent"},
		{"minus only", `-`, ErrInvalidJSON, "expected digit"},
		{"hex number", `0x10`, ErrInvalidJSON, ""},
		{"raw control char", "\"a\tb\"", ErrInvalidJSON, "control character 0x09 in string at offset 2"},
		{"raw newline", "\"a\nb\"", ErrInvalidJSON, "control character"},
		{"bad escape", `"\x"`, ErrInvalidJSON, "invalid escape"},
		{"short u escape", `"\u12"`, ErrInvalidJSON, `\u escape`},
		{"bad hex u escape", `"\u12g4"`, ErrInvalidJSON, `\u escape`},
		{"lone high surrogate", `"\ud800"`, ErrInvalidJSON, "unpaired high surrogate"},
		{"high then char", `"\ud800x"`, ErrInvalidJSON, "unpaired high surrogate"},
		{"high then high", `"\ud800\ud800"`, ErrInvalidJSON, "unpaired high surrogate"},
		{"high then bmp", `"\ud800\u0041"`, ErrInvalidJSON, "unpaired high surrogate"},
		{"lone low surrogate", `"\udc00"`, ErrInvalidJSON, "unpaired low surrogate"},
		{"invalid utf8", "\"a\xffb\"", ErrInvalidJSON, "invalid UTF-8 in string at offset 2"},
		{"invalid utf8 after escape", "\"\\n\xc3\"", ErrInvalidJSON, "invalid UTF-8"},
		{"utf8 surrogate", "\"\xed\xa0\x80\"", ErrInvalidJSON, "invalid UTF-8"},
		{"overlong utf8", "\"\xc0\xaf\"", ErrInvalidJSON, "invalid UTF-8"},
		{"invalid utf8 outside string", "[\xff]", ErrInvalidJSON, "byte 0xff"},
		{"bom", "\ufeff{}", ErrInvalidJSON, ""},
		{"nul", "\x00", ErrInvalidJSON, "byte 0x00"},
		{"comment", `{} // x`, ErrInvalidJSON, ""},
		{"duplicate key", `{"a":1,"b":2,"a":3}`, ErrDuplicateKey, `duplicate key "a" at offset 13`},
		{"duplicate escaped key", `{"a":1,"\u0061":2}`, ErrDuplicateKey, `duplicate key "a" at offset 7`},
		{"nested duplicate", `[{"x":{"k":1,"k":1}}]`, ErrDuplicateKey, `"k"`},
		{"duplicate empty key", `{"":1,"":2}`, ErrDuplicateKey, `""`},
		{"number too large", `1e400`, ErrNumber, "offset 0"},
		{"number too large neg", `[-1.8e308]`, ErrNumber, "offset 1"},
		{"huge int", strings.Repeat("9", 400), ErrNumber, ""},
		{"too deep array", deep, ErrDepth, fmt.Sprintf("at offset %d", MaxDepth)},
		{"too deep object", deepObj, ErrDepth, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Transform([]byte(tt.in))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Transform(%.40q) = %s, %v; want %v", tt.in, out, err, tt.wantErr)
			}
			if out != nil {
				t.Errorf("non-nil output on error")
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "canonical: ") {
				t.Errorf("error %q lacks package prefix", err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(tt.in) {
				t.Errorf("error is not a *Error with a valid offset: %#v", err)
			}
			if cerr := CheckStrict([]byte(tt.in)); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("CheckStrict = %v, want %v", cerr, err)
			}
		})
	}
}

func TestMaxDepthBoundary(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Transform([]byte(ok)); err != nil {
		t.Errorf("depth %d rejected: %v", MaxDepth, err)
	}
	// Depth is tracked per path, not cumulatively.
	wide := "[" + strings.Repeat(strings.Repeat("[", MaxDepth-1)+strings.Repeat("]", MaxDepth-1)+",", 3) + "1]"
	if _, err := Transform([]byte(wide)); err != nil {
		t.Errorf("siblings at depth %d rejected: %v", MaxDepth, err)
	}
	// Very deep input must fail cleanly, not overflow the stack.
	huge := strings.Repeat("[", 1_000_000)
	if _, err := Transform([]byte(huge)); !errors.Is(err, ErrDepth) {
		t.Errorf("1e6 brackets: %v", err)
	}
}

func TestMarshal(t *testing.T) {
	type inner struct {
		Z string  `json:"z"`
		A float64 `json:"a"`
	}
	v := map[string]any{
		"html":  "<&>",
		"inner": inner{Z: "é\u2028", A: 1e21},
		"list":  []any{1, 2.5, math.Copysign(0, -1), nil, true}, // negative zero serialises as 0
		"€":     "euro",
		"1":     1,
	}
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"1":1,"html":"<&>","inner":{"a":1e+21,"z":"é` + "\u2028" + `"},"list":[1,2.5,0,null,true],"€":"euro"}`
	if string(got) != want {
		t.Errorf("Marshal\n got %s\nwant %s", got, want)
	}
	if _, err := Marshal(math.Inf(1)); err == nil || !strings.HasPrefix(err.Error(), "canonical: marshal: ") {
		t.Errorf("Marshal(Inf) = %v", err)
	}
	if _, err := Marshal(make(chan int)); err == nil {
		t.Errorf("Marshal(chan) succeeded")
	}
	// json.RawMessage with a duplicate key is passed through and caught.
	_, err = Marshal(json.RawMessage(`{"a":1,"a":2}`))
	if !errors.Is(err, ErrDuplicateKey) || strings.Count(err.Error(), "canonical:") != 1 {
		t.Errorf("Marshal(dup RawMessage) = %v", err)
	}
}

func TestCompareUTF16(t *testing.T) {
	strs := []string{"", "\x00", "1", "A", "a", "ab", "\u007f", "\u0080", "ö", "\u07ff", "\u0800", "€",
		"\ud7ff", "😀", "😂", "\U0010ffff", "\ue000", "\ufb33", "\uffff", "a😀", "a\uffff"}
	for _, a := range strs {
		for _, b := range strs {
			want := slicesCompare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
			got := compareUTF16([]byte(a), []byte(b))
			if sign(got) != want {
				t.Errorf("compareUTF16(%q, %q) = %d, want sign %d", a, b, got, want)
			}
		}
	}
}

func slicesCompare(a, b []uint16) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return sign(int(a[i]) - int(b[i]))
		}
	}
	return sign(len(a) - len(b))
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestAppendNumberMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(f float64) {
		got := string(AppendNumber(nil, f))
		want, err := jcs.NumberToJSON(f)
		if err != nil {
			t.Fatalf("oracle(%v): %v", f, err)
		}
		if got != want {
			t.Fatalf("AppendNumber(%x) = %s, oracle %s", math.Float64bits(f), got, want)
		}
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || back != f && !(f == 0 && back == 0) {
			t.Fatalf("AppendNumber(%x) = %s does not round-trip", math.Float64bits(f), got)
		}
	}
	for i := 0; i < 200_000; i++ {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		check(f)
	}
	// Powers of ten and their neighbours around the format boundaries.
	for e := -330; e <= 310; e++ {
		f, _ := strconv.ParseFloat("1e"+strconv.Itoa(e), 64)
		if math.IsInf(f, 0) {
			continue
		}
		for _, g := range []float64{f, math.Nextafter(f, 0), math.Nextafter(f, math.Inf(1)), -f, f * 1.5, f * 123456789} {
			if !math.IsInf(g, 0) {
				check(g)
			}
		}
	}
	for i := int64(-2000); i <= 2000; i++ {
		check(float64(i))
	}
}

// gen produces random JSON texts, with random spelling (whitespace, escapes,
// number formats), that are valid I-JSON.
type gen struct {
	rng *rand.Rand
	b   strings.Builder
}

func (g *gen) ws() {
	if g.rng.IntN(3) == 0 {
		g.b.WriteString([]string{" ", "\n", "\t", "\r\n  ", ""}[g.rng.IntN(5)])
	}
}

// randRune returns a random scalar value from several ranges.
func (g *gen) randRune() rune {
	switch g.rng.IntN(8) {
	case 0:
		return rune(g.rng.IntN(0x20)) // control
	case 1, 2:
		return rune(0x20 + g.rng.IntN(0x60)) // ASCII
	case 3:
		return rune(0x80 + g.rng.IntN(0x780)) // 2-byte
	case 4:
		r := rune(0x800 + g.rng.IntN(0xD800-0x800)) // 3-byte below surrogates
		return r
	case 5:
		return rune(0xE000 + g.rng.IntN(0x2000)) // 3-byte above surrogates
	case 6:
		return rune(0x10000 + g.rng.IntN(0x100000)) // supplementary
	default:
		return []rune{'"', '\\', '/', 0x7f, 0x2028, 0xfeff, 0xffff, '😀', '€', 0xfb33}[g.rng.IntN(10)]
	}
}

func (g *gen) randString() string {
	n := g.rng.IntN(8)
	if g.rng.IntN(10) == 0 {
		n = g.rng.IntN(40)
	}
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = g.randRune()
	}
	return string(rs)
}

// writeString writes s as a JSON string literal with randomly chosen escapes.
func (g *gen) writeString(s string) {
	g.b.WriteByte('"')
	for _, r := range s {
		mustEscape := r < 0x20 || r == '"' || r == '\\'
		if !mustEscape && g.rng.IntN(6) != 0 {
			g.b.WriteRune(r)
			continue
		}
		short := map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}
		if e, ok := short[r]; ok && g.rng.IntN(2) == 0 {
			g.b.WriteString(e)
			continue
		}
		hexFmt := "\\u%04x"
		if g.rng.IntN(2) == 0 {
			hexFmt = "\\u%04X"
		}
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&g.b, hexFmt+hexFmt, r1, r2)
		} else {
			fmt.Fprintf(&g.b, hexFmt, r)
		}
	}
	g.b.WriteByte('"')
}

func (g *gen) writeNumber() {
	switch g.rng.IntN(6) {
	case 0:
		g.b.WriteString(strconv.FormatInt(g.rng.Int64N(2000)-1000, 10))
	case 1:
		g.b.WriteString(strconv.FormatInt(int64(g.rng.Uint64()), 10))
	case 2:
		g.b.WriteString([]string{"0", "-0", "0.0", "1e21", "1e-7", "0.000001", "1E+2", "-0e-0", "5e-324", "1.7976931348623157e308", "2.5"}[g.rng.IntN(11)])
	default:
		var f float64
		for {
			f = math.Float64frombits(g.rng.Uint64())
			if g.rng.IntN(2) == 0 {
				f = (g.rng.Float64() - 0.5) * math.Pow(10, float64(g.rng.IntN(50)-25))
			}
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				break
			}
		}
		var s string
		switch g.rng.IntN(4) {
		case 0:
			s = strconv.FormatFloat(f, 'g', -1, 64)
		case 1:
			s = strconv.FormatFloat(f, 'E', 25, 64)
		case 2:
			s = strconv.FormatFloat(f, 'e', -1, 64)
		default:
			s = strconv.FormatFloat(f, 'e', g.rng.IntN(17), 64) // lossy: still a valid number
		}
		g.b.WriteString(s)
	}
}

func (g *gen) value(depth int) {
	g.ws()
	k := g.rng.IntN(10)
	if depth > 6 {
		k = 3 + k%7 // scalars only
	}
	switch {
	case k == 0 || k == 1:
		g.b.WriteByte('{')
		n := g.rng.IntN(6)
		seen := map[string]bool{}
		first := true
		for i := 0; i < n; i++ {
			key := g.randString()
			if seen[key] {
				continue
			}
			seen[key] = true
			if !first {
				g.b.WriteByte(',')
			}
			first = false
			g.ws()
			g.writeString(key)
			g.ws()
			g.b.WriteByte(':')
			g.value(depth + 1)
		}
		g.ws()
		g.b.WriteByte('}')
	case k == 2 || k == 3:
		g.b.WriteByte('[')
		n := g.rng.IntN(6)
		for i := 0; i < n; i++ {
			if i > 0 {
				g.b.WriteByte(',')
			}
			g.value(depth + 1)
		}
		g.ws()
		g.b.WriteByte(']')
	case k == 4 || k == 5:
		g.writeString(g.randString())
	case k == 6 || k == 7:
		g.writeNumber()
	default:
		g.b.WriteString([]string{"null", "true", "false"}[g.rng.IntN(3)])
	}
	g.ws()
}

func (g *gen) document() []byte {
	g.b.Reset()
	g.value(0)
	return []byte(g.b.String())
}

func TestPropertyAgainstOracle(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 2_000
	}
	g := &gen{rng: rand.New(rand.NewPCG(11, 12))}
	for i := 0; i < n; i++ {
		doc := g.document()
		got, err := Transform(doc)
		if err != nil {
			t.Fatalf("Transform(%q): %v", doc, err)
		}
		want, err := jcs.Transform(doc)
		if err != nil {
			t.Fatalf("oracle(%q): %v", doc, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("mismatch for %q\n ours   %q\n oracle %q", doc, got, want)
		}
		again, err := Transform(got)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("not idempotent for %q: %q %v", doc, again, err)
		}
		if !utf8.Valid(got) || !json.Valid(got) {
			t.Fatalf("output not valid UTF-8 JSON: %q", got)
		}
		if err := CheckStrict(doc); err != nil {
			t.Fatalf("CheckStrict(%q): %v", doc, err)
		}
	}
}

func FuzzTransform(f *testing.F) {
	seeds := []string{
		`{"b":[1,2.5e10,-0,"x\u0000"],"a":{"\ud83d\ude00":true,"\ufb33":null}}`,
		`[1e400]`, `{"a":1,"a":2}`, `"\ud800"`, "\"\xff\"", `[[[[]]]]`, `0.000001`, `1e21`,
		`{"\u20ac":"Euro Sign","\r":"Carriage Return","1":"One"}`, ` 123 `, `-0.0`, `"\/"`, `{"":""}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Transform(data)
		cerr := CheckStrict(data)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("Transform err %v, CheckStrict err %v", err, cerr)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not *Error", err)
			}
			if !errors.Is(err, ErrInvalidJSON) && !errors.Is(err, ErrDuplicateKey) &&
				!errors.Is(err, ErrNumber) && !errors.Is(err, ErrDepth) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		again, err := Transform(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", data, out, again, err)
		}
		if oracle, oerr := jcs.Transform(data); oerr == nil && !bytes.Equal(oracle, out) {
			t.Fatalf("oracle differs for %q\n ours   %q\n oracle %q", data, out, oracle)
		}
	})
}

// benchDoc builds a ~1 MB document of credential-like records.
func benchDoc(tb testing.TB) []byte {
	tb.Helper()
	g := &gen{rng: rand.New(rand.NewPCG(5, 6))}
	var b bytes.Buffer
	b.WriteString(`{"records":[`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"urn:uuid:%08x-0000-4000-8000-%012x","issued":"2025-01-%02dT00:00:00Z",`+
			`"score":%v,"count":%d,"tags":["alpha","beta","gamma"],"subject":{"name":"Ren\u00e9e %d","ok":true},"extra":`,
			i, i*7919, 1+i%28, float64(i)/7, i*1000003, i)
		g.b.Reset()
		g.value(3)
		b.WriteString(g.b.String())
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func BenchmarkTransform1MB(b *testing.B) {
	doc := benchDoc(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Transform(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckStrict1MB(b *testing.B) {
	doc := benchDoc(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := CheckStrict(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOracleTransform1MB(b *testing.B) {
	doc := benchDoc(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := jcs.Transform(doc); err != nil {
			b.Fatal(err)
		}
	}
}
