package canonical

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseMemory: the parse tree costs at most 8 bytes per JSON value,
// allocated once, so the densest input (two bytes per value) parses in at
// most 4 times its size; the old tree of 80-byte values with growing
// scratch stacks took about 120 times.
func TestParseMemory(t *testing.T) {
	shapes := map[string][]byte{
		"zeros":   []byte("[" + strings.Repeat("0,", 1<<19) + "0]"),
		"strings": []byte("[" + strings.Repeat(`"a",`, 1<<18) + `"a"]`),
		"objects": []byte("[" + strings.Repeat(`{"a":0},`, 1<<17) + `{}]`),
		"nested":  []byte(strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)),
	}
	for name, doc := range shapes {
		t.Run(name, func(t *testing.T) {
			var v *Value
			n := allocated(func() {
				var err error
				if v, err = Parse(doc); err != nil {
					t.Fatal(err)
				}
			})
			if limit := uint64(4.1*float64(len(doc))) + 4096; n > limit {
				t.Fatalf("Parse of %d bytes allocated %d bytes (%.1fx), want at most 4x", len(doc), n, float64(n)/float64(len(doc)))
			}
			out := v.Canonical()
			if !bytes.Equal(out, mustTransform(t, doc)) {
				t.Fatal("canonical form differs from Transform")
			}
		})
	}
}

func mustTransform(t *testing.T, doc []byte) []byte {
	t.Helper()
	out, err := Transform(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestValueAccess covers the tree's accessors, in document order.
func TestValueAccess(t *testing.T) {
	doc := []byte(` {"b":[1,2.50,"x\u0041",null,true,false],"a":{"\u006b":-0,"z":{}},"c":"d"} `)
	v, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind() != KindObject || v.Len() != 3 || v.Offset() != 1 || v.Raw() != nil {
		t.Fatalf("top: kind %v len %d offset %d", v.Kind(), v.Len(), v.Offset())
	}
	var names []string
	for name := range v.Members() {
		names = append(names, name)
	}
	if strings.Join(names, ",") != "b,a,c" {
		t.Fatalf("members in document order: %v", names)
	}
	b := v.Get("b")
	if b.Len() != 6 || b.Index(1).Kind() != KindNumber || string(b.Index(1).Raw()) != "2.50" {
		t.Fatalf("b: %d elements", b.Len())
	}
	if text, f := b.Index(1).Number(); text != "2.5" || f != 2.5 {
		t.Fatalf("number %q %v", text, f)
	}
	if b.Index(2).Str() != "xA" || string(b.Index(2).Raw()) != `"x\u0041"` || b.Index(3).Kind() != KindNull || !b.Index(4).Bool() || b.Index(5).Bool() {
		t.Fatal("scalars")
	}
	if name, k := v.Member(1); name != "a" || k.Get("k") == nil || k.Get("z").Len() != 0 {
		t.Fatalf("member 1 = %q", name)
	}
	if v.Get("missing") != nil || b.Get("x") != nil {
		t.Fatal("Get of a missing member")
	}
	// Concurrent encoders share the tree.
	want := `{"a":{"k":0,"z":{}},"b":[1,2.5,"xA",null,true,false],"c":"d"}`
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := string(v.Canonical()); got != want {
				t.Errorf("canonical %s", got)
			}
		})
	}
	wg.Wait()
	if got := string(v.Canonical("b", "c")); got != `{"a":{"k":0,"z":{}}}` {
		t.Fatalf("without: %s", got)
	}
}

func TestParserReuseAndReplacing(t *testing.T) {
	var ps Parser
	for _, doc := range []string{`{"b":1,"a":[true]}`, `[1,2,3,{"x":"\u0041"}]`, `"s"`, `{"k":{"k":1}}`} {
		v, err := ps.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(v.Canonical()), string(mustTransform(t, []byte(doc))); got != want {
			t.Fatalf("reused parser: %s, want %s", got, want)
		}
	}
	if _, err := ps.Parse([]byte(`{"a":1,"a":2}`)); err == nil {
		t.Fatal("duplicate accepted by a reused parser")
	}
	doc := []byte(`{"z":0,"records":[],"sig":"s","a":{"records":5}}`)
	v, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := v.AppendCanonicalReplacing(nil, map[string]func([]byte) []byte{
		"records": func(dst []byte) []byte { return append(dst, `[1,2]`...) },
		"z":       func(dst []byte) []byte { return append(dst, `true`...) },
	}, "sig")
	if string(got) != `{"a":{"records":5},"records":[1,2],"z":true}` {
		t.Fatalf("replacing: %s", got)
	}
	small := []byte(`{"b":1,"a":[true,{"c":null}]}`)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := ps.Parse(small); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Fatalf("a warmed-up Parser allocated %v times", allocs)
	}
}

// FuzzParser: a reused Parser accepts and encodes exactly what Transform
// does, whatever it parsed before.
func FuzzParser(f *testing.F) {
	for _, s := range []string{`{"a":null,"b":[null,{"c":null}]}`, `[1.0,-0,1e21,"\u0000"]`, `{"a":1,"a":2}`, `[[[]]]`, `"\ud800"`, ``} {
		f.Add([]byte(s), []byte(`{"warm":[1,2,{"x":"y"}]}`))
	}
	f.Fuzz(func(t *testing.T, data, before []byte) {
		var ps Parser
		_, _ = ps.Parse(before)
		v, err := ps.Parse(data)
		want, werr := Transform(data)
		if (err == nil) != (werr == nil) {
			t.Fatalf("Parser err %v, Transform err %v", err, werr)
		}
		if err == nil && !bytes.Equal(v.Canonical(), want) {
			t.Fatalf("Parser gives %q, Transform %q", v.Canonical(), want)
		}
	})
}

func TestNonCanonicalNumber(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a":[1,0.5,1e-7,1e+21,-3,"1.0"]}`: "",
		`{"a":[1,1.0]}`:                     "1.0",
		`[-0]`:                              "-0",
		`{"x":{"y":[2.50]}}`:                "2.50",
		`[1E-7]`:                            "1E-7",
		`[1e20]`:                            "1e20",
		`[0.000001,1e-06]`:                  "1e-06",
		`[100000000000000000000]`:           "",
		`[1234567890123456789]`:             "1234567890123456789",
	} {
		v, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if n := v.NonCanonicalNumber(); n != nil {
			got = string(n.Raw())
		}
		if got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}
