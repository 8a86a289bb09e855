package commitment

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

const (
	emptySHA = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	abcSHA   = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	// FIPS 180-2 appendix B.2 two-block message.
	abc448SHA = "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
	abc448    = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
)

func TestLength(t *testing.T) {
	if Length != 71 {
		t.Fatalf("Length = %d, want 71", Length)
	}
	if got := len(String(nil)); got != Length {
		t.Fatalf("len(String(nil)) = %d, want %d", got, Length)
	}
}

func TestKnownVectors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", emptySHA},
		{"abc", "abc", abcSHA},
		{"448-bit", abc448, abc448SHA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String([]byte(tt.in)); got != tt.want {
				t.Errorf("String = %s, want %s", got, tt.want)
			}
			h, n, err := SumReader(strings.NewReader(tt.in))
			if err != nil || n != int64(len(tt.in)) || h.String() != tt.want {
				t.Errorf("SumReader = %s, %d, %v", h, n, err)
			}
			if err := Check(tt.want, []byte(tt.in)); err != nil {
				t.Errorf("Check: %v", err)
			}
			if err := CheckReader(tt.want, strings.NewReader(tt.in)); err != nil {
				t.Errorf("CheckReader: %v", err)
			}
		})
	}
}

func TestSumReaderMatchesSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 63, 64, 65, 4095, 4096, bufSize - 1, bufSize, bufSize + 1, 3*bufSize + 17}
	for i := 0; i < 10; i++ {
		sizes = append(sizes, rng.IntN(2*bufSize))
	}
	for _, size := range sizes {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		want := Sum(data)
		readers := map[string]io.Reader{
			"bytes":   bytes.NewReader(data),
			"onebyte": iotest.OneByteReader(bytes.NewReader(data[:min(size, 5000)])),
			"half":    iotest.HalfReader(bytes.NewReader(data)),
		}
		for name, r := range readers {
			h, n, err := SumReader(r)
			if err != nil {
				t.Fatalf("size %d %s: %v", size, name, err)
			}
			exp := want
			expN := int64(size)
			if name == "onebyte" {
				exp, expN = Sum(data[:min(size, 5000)]), int64(min(size, 5000))
			}
			if !Equal(h, exp) || n != expN {
				t.Errorf("size %d %s: got %s/%d want %s/%d", size, name, h, n, exp, expN)
			}
		}
	}
}

func TestSumFileAndOpenSSL(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	openssl, lookErr := exec.LookPath("openssl")
	for _, size := range []int{0, 1, 1000, bufSize + 1, 5*bufSize + 3} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		h, n, err := SumFile(path)
		if err != nil || n != int64(size) || !Equal(h, Sum(data)) {
			t.Fatalf("SumFile size %d: %s %d %v", size, h, n, err)
		}
		if lookErr != nil {
			continue
		}
		out, err := exec.Command(openssl, "dgst", "-sha256", "-r", path).Output()
		if err != nil {
			t.Fatalf("openssl: %v", err)
		}
		hexDigest, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
		if want := "sha256:" + hexDigest; h.String() != want {
			t.Errorf("size %d: ours %s, openssl %s", size, h, want)
		}
	}
	if lookErr != nil {
		t.Skip("openssl not installed; cross-check skipped")
	}
}

func TestSumFileErrors(t *testing.T) {
	_, _, err := SumFile(filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	_, _, err = SumFile(t.TempDir()) // a directory: read fails
	if err == nil {
		t.Errorf("directory: want error")
	}
}

func TestSumReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom))
	_, n, err := SumReader(r)
	if !errors.Is(err, boom) || n != 3 {
		t.Errorf("got n=%d err=%v", n, err)
	}
	if _, _, err := SumReader(nil); err == nil {
		t.Errorf("nil reader: want error")
	}
	if err := CheckReader(abcSHA, iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("CheckReader: %v", err)
	}
}

func TestParse(t *testing.T) {
	hex64 := strings.Repeat("0a", 32)
	tests := []struct {
		name    string
		in      string
		wantErr error
		wantAlg Algorithm
		msg     string // substring expected in the error message
	}{
		{"sha256", emptySHA, nil, SHA256, ""},
		{"sha256 zeros", "sha256:" + strings.Repeat("0", 64), nil, SHA256, ""},
		{"poseidon2", "poseidon2:" + hex64, nil, Poseidon2, ""},
		{"poseidon2 modulus-1", "poseidon2:" + bn254R1, nil, Poseidon2, ""},
		{"empty", "", ErrMalformed, "", "empty"},
		{"no prefix", strings.TrimPrefix(emptySHA, "sha256:"), ErrMalformed, "", "missing algorithm prefix"},
		{"unknown", "md5:d41d8cd98f00b204e9800998ecf8427e", ErrMalformed, "", "unknown algorithm"},
		{"upper alg", "SHA256:" + hex64, ErrMalformed, "", "unknown algorithm"},
		{"empty alg", ":" + hex64, ErrMalformed, "", "unknown algorithm"},
		{"short", emptySHA[:70], ErrMalformed, "", "64 hex characters, got 63"},
		{"long", emptySHA + "0", ErrMalformed, "", "got 65"},
		{"empty digest", "sha256:", ErrMalformed, "", "got 0"},
		{"uppercase", strings.ToUpper(emptySHA[:8]) + emptySHA[8:], ErrMalformed, "", "unknown algorithm"},
		{"uppercase hex", "sha256:" + strings.ToUpper(emptySHA[7:]), ErrMalformed, "", "lowercase"},
		{"non-hex", "sha256:" + strings.Repeat("g", 64), ErrMalformed, "", "non-hex"},
		{"space", " " + emptySHA, ErrMalformed, "", "unknown algorithm"},
		{"trailing newline", emptySHA[:70] + "\n", ErrMalformed, "", "non-hex"},
		{"double colon", "sha256::" + hex64[:63], ErrMalformed, "", "non-hex"},
		{"poseidon2 empty", "poseidon2:", ErrMalformed, "", "64 hex characters, got 0"},
		{"poseidon2 short", "poseidon2:0abc", ErrMalformed, "", "64 hex characters, got 4"},
		{"poseidon2 long", "poseidon2:" + hex64 + "00", ErrMalformed, "", "got 66"},
		{"poseidon2 upper", "poseidon2:" + strings.ToUpper(hex64), ErrMalformed, "", "lowercase"},
		{"poseidon2 nonhex", "poseidon2:" + strings.Repeat("z", 64), ErrMalformed, "", "non-hex"},
		{"poseidon2 modulus", "poseidon2:" + bn254R, ErrMalformed, "", "modulus"},
		{"poseidon2 all ff", "poseidon2:" + strings.Repeat("f", 64), ErrMalformed, "", "modulus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Parse(tt.in)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Parse(%q) err = %v, want %v", tt.in, err, tt.wantErr)
			}
			if Validate(tt.in) == nil != (err == nil) {
				t.Errorf("Validate disagrees with Parse")
			}
			if alg, aerr := ParseAlgorithm(tt.in); fmt.Sprint(aerr) != fmt.Sprint(err) || err == nil && alg != h.Algorithm {
				t.Errorf("ParseAlgorithm = %q, %v; Parse gave %q, %v", alg, aerr, h.Algorithm, err)
			}
			if err == nil {
				if n := testing.AllocsPerRun(10, func() { _, _ = ParseAlgorithm(tt.in) }); n != 0 {
					t.Errorf("ParseAlgorithm allocated %v times", n)
				}
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not mention %q", err, tt.msg)
				}
				return
			}
			if h.Algorithm != tt.wantAlg {
				t.Errorf("Algorithm = %q, want %q", h.Algorithm, tt.wantAlg)
			}
			if h.String() != tt.in {
				t.Errorf("String = %q, want %q", h.String(), tt.in)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	a := Sum([]byte("a"))
	b := Sum([]byte("b"))
	a2, _ := Parse(a.String())
	p := Hash{Algorithm: Poseidon2, Digest: a.Digest}
	tests := []struct {
		name string
		x, y Hash
		want bool
	}{
		{"same", a, a2, true},
		{"different digest", a, b, false},
		{"different algorithm", a, p, false},
		{"short digest", a, Hash{Algorithm: SHA256, Digest: a.Digest[:31]}, false},
		{"zero values", Hash{}, Hash{}, false},
	}
	for _, tt := range tests {
		if got := Equal(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		expected string
		data     string
		wantErr  error
	}{
		{"match", abcSHA, "abc", nil},
		{"mismatch", abcSHA, "abd", ErrMismatch},
		{"malformed", "sha256:abc", "abc", ErrMalformed},
		{"uppercase", "sha256:" + strings.ToUpper(abcSHA[7:]), "abc", ErrMalformed},
		{"poseidon2 match", abcP2, "abc", nil},
		{"poseidon2 mismatch", abcP2, "abd", ErrMismatch},
		{"poseidon2 sha of same", abcSHA, "abc", nil},
		{"poseidon2 malformed", "poseidon2:00ff", "abc", ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.expected, []byte(tt.data))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("Check err = %v, want %v", err, tt.wantErr)
			}
			err = CheckReader(tt.expected, strings.NewReader(tt.data))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("CheckReader err = %v, want %v", err, tt.wantErr)
			}
		})
	}
	// The reader must not be consumed when the expected string is invalid.
	r := strings.NewReader("abc")
	_ = CheckReader("nope", r)
	if r.Len() != 3 {
		t.Errorf("CheckReader read input despite malformed expected value")
	}
	err := Check(abcSHA, []byte("x"))
	if !strings.Contains(err.Error(), abcSHA) || !strings.Contains(err.Error(), String([]byte("x"))) {
		t.Errorf("mismatch message lacks both hashes: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{emptySHA, abcSHA, "poseidon2:00", "poseidon2:", abcP2, "poseidon2:" + bn254R, "sha256:", ":", "",
		"sha256:" + strings.ToUpper(emptySHA[7:]), "md5:00", "\xff:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Parse(s)
		if alg, aerr := ParseAlgorithm(s); fmt.Sprint(aerr) != fmt.Sprint(err) || err == nil && alg != h.Algorithm {
			t.Fatalf("ParseAlgorithm(%q) = %q, %v; Parse gave %q, %v", s, alg, aerr, h.Algorithm, err)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrMalformed", s, err)
			}
			return
		}
		if h.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, h.String())
		}
		h2, err := Parse(h.String())
		if err != nil || h2.String() != s || !Equal(h, h2) {
			t.Fatalf("round trip of %q failed: %v", s, err)
		}
		if h.Algorithm == SHA256 && len(s) != Length {
			t.Fatalf("sha256 commitment %q has length %d", s, len(s))
		}
		if h.Algorithm == Poseidon2 && (len(s) != len("poseidon2:")+64 || checkPoseidon2Digest(h.Digest) != nil) {
			t.Fatalf("poseidon2 commitment %q accepted but not a canonical 32-byte element", s)
		}
	})
}

func BenchmarkSumReader(b *testing.B) {
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := SumReader(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSumFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f")
	data := make([]byte, 64<<20)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := SumFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeLowerHex: every byte value, as either digit of a pair,
// decodes as encoding/hex does exactly when it is 0-9 or a-f.
func TestDecodeLowerHex(t *testing.T) {
	for c := range 256 {
		for _, pair := range []string{string([]byte{byte(c), 'a'}), string([]byte{'7', byte(c)})} {
			var got [1]byte
			ok := decodeLowerHex(got[:], pair)
			want, err := hex.DecodeString(pair)
			lower := checkLowerHex(pair) == nil
			if ok != lower || (ok && (err != nil || got[0] != want[0])) {
				t.Fatalf("%q: decoded %v %x; lowercase hex %v, encoding/hex %x %v", pair, ok, got, lower, want, err)
			}
		}
	}
}

// FuzzParseSHA256: the in-place decode gives what Parse gives, digest or
// error.
func FuzzParseSHA256(f *testing.F) {
	for _, s := range []string{emptySHA, abcSHA, abcP2, "sha256:" + strings.ToUpper(emptySHA[7:]), emptySHA[:70] + "g", emptySHA + "0", "sha256:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSHA256(s)
		h, perr := Parse(s)
		switch {
		case perr != nil:
			if err == nil || err.Error() != perr.Error() {
				t.Fatalf("ParseSHA256(%q) = %v; Parse: %v", s, err, perr)
			}
		case h.Algorithm != SHA256:
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("ParseSHA256(%q) = %v, want ErrUnsupported", s, err)
			}
		case err != nil || !bytes.Equal(got[:], h.Digest):
			t.Fatalf("ParseSHA256(%q) = %x, %v; Parse: %x", s, got, err, h.Digest)
		}
	})
}
