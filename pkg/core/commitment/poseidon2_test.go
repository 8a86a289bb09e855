package commitment

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

const (
	// bn254R is the BN254 scalar field modulus r; bn254R1 is r-1.
	bn254R  = "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"
	bn254R1 = "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000000"
	// abcP2 is the poseidon2 commitment of the bytes "abc"
	// (docs/FORMATS.md, "Poseidon2 commitments").
	abcP2 = "poseidon2:24a30569590b9af522878477a13e64fdb0eba66f9e9f3de629ecc16c47987f1b"
)

func elementsHex(t *testing.T, tag string, payload []byte) []string {
	t.Helper()
	el, err := Poseidon2Elements(tag, payload)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(el))
	for i := range el {
		b := el[i].Bytes()
		out[i] = hexString(b[:])
	}
	return out
}

func hexString(b []byte) string { return Hash{Digest: b}.String()[1:] }

// TestPoseidon2DocVectors checks the worked examples of docs/FORMATS.md: each
// element and each digest printed there must be what this package computes.
func TestPoseidon2DocVectors(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/FORMATS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "## Poseidon2 commitments")
	if !ok {
		t.Fatal(`docs/FORMATS.md has no "## Poseidon2 commitments" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	vectors := []struct {
		tag     string
		payload []byte
		digest  string
	}{
		{Poseidon2TagBytes, []byte("abc"), abcP2},
		{Poseidon2TagBytes, nil, "poseidon2:043c4c2aa86226ed034ef43588f58578507383df56d6a250c3454d582ae3f70e"},
		{Poseidon2TagBytes, []byte("Patient John Doe, DOB 1970-01-01, claim #4411"),
			"poseidon2:26eed88369f1ac6cc2810d5b29caae9489889ca7887ecf60282f23454aacab88"},
		{Poseidon2TagInt8, Int8Payload([]int8{-128, -1, 0, 1, 127}),
			"poseidon2:01f6837f1e6a35a96b31e8c24ce593d0432bac1a6116a42e07cb32d257f7aea4"},
	}
	for _, v := range vectors {
		for _, e := range elementsHex(t, v.tag, v.payload) {
			if !strings.Contains(sec, e) {
				t.Errorf("%s %q: element %s is not in the doc", v.tag, v.payload, e)
			}
		}
		h, _ := NewPoseidon2Hasher(v.tag)
		h.Write(v.payload)
		if got := h.Sum().String(); got != v.digest {
			t.Errorf("%s %q: digest %s, want %s", v.tag, v.payload, got, v.digest)
		}
		if !strings.Contains(sec, v.digest) {
			t.Errorf("digest %s is not in the doc", v.digest)
		}
	}
	if got := SumPoseidon2Int8([]int8{-128, -1, 0, 1, 127}).String(); got != vectors[3].digest {
		t.Errorf("SumPoseidon2Int8 = %s", got)
	}
}

// TestPoseidon2Streaming checks that the streaming hasher, in any write
// split, equals the element-sequence hash, across chunk boundaries.
func TestPoseidon2Streaming(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{0, 1, 30, 31, 32, 61, 62, 63, 1000, 70000} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		el, _ := Poseidon2Elements(Poseidon2TagBytes, data)
		want := HashPoseidon2Elements(el)
		got := SumPoseidon2(data)
		if !bytes.Equal(got.Digest, want[:]) {
			t.Fatalf("size %d: SumPoseidon2 %x != element hash %x", size, got.Digest, want)
		}
		r, n, err := SumAlgorithmReader(Poseidon2, iotest.HalfReader(bytes.NewReader(data)))
		if err != nil || n != int64(size) || !Equal(r, got) {
			t.Fatalf("size %d: reader %s %d %v, want %s", size, r, n, err, got)
		}
		if err := CheckReader(got.String(), bytes.NewReader(data)); err != nil {
			t.Fatalf("size %d: CheckReader: %v", size, err)
		}
	}
}

// TestPoseidon2Distinct checks that values the zero-padding could confuse
// (trailing zero bytes, the same bytes as bytes and as int8) get different
// commitments: the length and the tag are hashed.
func TestPoseidon2Distinct(t *testing.T) {
	seen := map[string]string{}
	add := func(name string, h Hash) {
		if prev, ok := seen[h.String()]; ok {
			t.Errorf("%s and %s have the same commitment %s", prev, name, h)
		}
		seen[h.String()] = name
	}
	for n := 0; n <= 63; n++ {
		add("zeros"+string(rune('0'+n/10))+string(rune('0'+n%10)), SumPoseidon2(make([]byte, n)))
	}
	add("abc bytes", SumPoseidon2([]byte("abc")))
	add("abc int8", SumPoseidon2Int8([]int8{'a' - 128, 'b' - 128, 'c' - 128}))
	add("sha vs p2", Hash{Algorithm: Poseidon2, Digest: Sum([]byte("abc")).Digest})
	if Equal(Sum([]byte("abc")), SumPoseidon2([]byte("abc"))) {
		t.Error("sha256 and poseidon2 hashes compare equal")
	}
}

func TestInt8Payload(t *testing.T) {
	got := Int8Payload([]int8{-128, -1, 0, 1, 127})
	if want := []byte{0x00, 0x7f, 0x80, 0x81, 0xff}; !bytes.Equal(got, want) {
		t.Fatalf("Int8Payload = %x, want %x", got, want)
	}
}

func TestTagElement(t *testing.T) {
	for _, bad := range []string{"", strings.Repeat("a", 32), "a\nb", "\x7f"} {
		if _, err := TagElement(bad); err == nil {
			t.Errorf("TagElement(%q) accepted", bad)
		}
		if _, err := NewPoseidon2Hasher(bad); err == nil {
			t.Errorf("NewPoseidon2Hasher(%q) accepted", bad)
		}
	}
	if _, err := SumAlgorithm("md5", nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("SumAlgorithm(md5) = %v, want ErrUnsupported", err)
	}
}

func toBlocks(t testing.TB, tag string, payload []byte) [][32]byte {
	el, err := Poseidon2Elements(tag, payload)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][32]byte, len(el))
	for i := range el {
		out[i] = el[i].Bytes()
	}
	return out
}

func TestDecodePoseidon2Elements(t *testing.T) {
	for _, p := range [][]byte{nil, {0}, []byte("abc"), make([]byte, 31), make([]byte, 32), bytes.Repeat([]byte{0xff}, 100)} {
		tag, got, err := DecodePoseidon2Elements(toBlocks(t, Poseidon2TagInt8, p))
		if err != nil || tag != Poseidon2TagInt8 || !bytes.Equal(got, p) {
			t.Errorf("round trip of %x: %q %x %v", p, tag, got, err)
		}
	}
	good := toBlocks(t, Poseidon2TagBytes, []byte("abc"))
	mut := func(f func(b [][32]byte) [][32]byte) [][32]byte {
		c := append([][32]byte(nil), good...)
		return f(c)
	}
	cases := map[string][][32]byte{
		"too short":     good[:1],
		"padding":       mut(func(b [][32]byte) [][32]byte { b[1][31] = 1; return b }),
		"chunk high":    mut(func(b [][32]byte) [][32]byte { b[1][0] = 1; return b }),
		"length short":  mut(func(b [][32]byte) [][32]byte { b[2][31] = 0; return b }),
		"length long":   mut(func(b [][32]byte) [][32]byte { b[2][31] = 32; return b }),
		"length huge":   mut(func(b [][32]byte) [][32]byte { b[2][0] = 1; return b }),
		"tag empty":     mut(func(b [][32]byte) [][32]byte { b[0] = [32]byte{}; return b }),
		"tag binary":    mut(func(b [][32]byte) [][32]byte { b[0][31] = 1; return b }),
		"non-canonical": mut(func(b [][32]byte) [][32]byte { b[0] = [32]byte{0xff}; return b }),
		"extra chunk":   mut(func(b [][32]byte) [][32]byte { return append(b[:2], b[1], b[2]) }),
	}
	for name, c := range cases {
		if _, _, err := DecodePoseidon2Elements(c); !errors.Is(err, ErrEncoding) {
			t.Errorf("%s: err = %v, want ErrEncoding", name, err)
		}
	}
}

// FuzzDecodePoseidon2Elements checks the decoder never panics, and that
// every sequence it accepts is exactly the encoding of what it returns
// (so two different payloads or tags never share an element sequence).
func FuzzDecodePoseidon2Elements(f *testing.F) {
	for _, p := range []string{"", "abc", strings.Repeat("x", 31), strings.Repeat("y", 70)} {
		var buf []byte
		for _, b := range toBlocks(f, Poseidon2TagBytes, []byte(p)) {
			buf = append(buf, b[:]...)
		}
		f.Add(buf)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw)%32 != 0 || len(raw) > 64*32 {
			return
		}
		blocks := make([][32]byte, len(raw)/32)
		for i := range blocks {
			copy(blocks[i][:], raw[32*i:])
		}
		tag, payload, err := DecodePoseidon2Elements(blocks)
		if err != nil {
			if !errors.Is(err, ErrEncoding) {
				t.Fatalf("error %v does not wrap ErrEncoding", err)
			}
			return
		}
		again := toBlocks(t, tag, payload)
		if len(again) != len(blocks) {
			t.Fatalf("re-encoding has %d elements, input %d", len(again), len(blocks))
		}
		for i := range again {
			if again[i] != blocks[i] {
				t.Fatalf("element %d re-encodes as %x, input %x", i, again[i], blocks[i])
			}
		}
	})
}

// BenchmarkSumPoseidon2 measures the native Poseidon2 commitment over 1
// MiB; compare BenchmarkSumReader (SHA-256) in the same run.
func BenchmarkSumPoseidon2(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		SumPoseidon2(data)
	}
}

// BenchmarkSumPoseidon2Int8 measures the commitment of a 768-value int8
// vector, a head's input.
func BenchmarkSumPoseidon2Int8(b *testing.B) {
	v := make([]int8, 768)
	for i := range v {
		v[i] = int8(i)
	}
	for b.Loop() {
		SumPoseidon2Int8(v)
	}
}
