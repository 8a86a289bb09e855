package document

import (
	"strings"
	"testing"
)

// firstControlSlow is firstControl one byte at a time: the definition.
func firstControlSlow(data []byte) int {
	for i, c := range data {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return -1
}

// TestFirstControl: every byte value at every position of a word and of
// the tail, beside line breaks and bytes at and above 0x80 (whose high
// bit the word test must not take for a control byte).
func TestFirstControl(t *testing.T) {
	base := []byte(strings.Repeat("a\t\n\r\x7f\x80\xff ", 3)) // 24 bytes: three words
	for n := 0; n <= len(base); n++ {
		for at := range n {
			for c := range 256 {
				data := append([]byte(nil), base[:n]...)
				data[at] = byte(c)
				if got, want := firstControl(data), firstControlSlow(data); got != want {
					t.Fatalf("%q: %d, want %d", data, got, want)
				}
			}
		}
	}
}

func FuzzFirstControl(f *testing.F) {
	f.Add([]byte("{\"a\":\n\t1}\x00"))
	f.Add([]byte("\x80\x9f\x1f\x20\x21\xe0\xa0\x9f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := firstControl(data), firstControlSlow(data); got != want {
			t.Fatalf("%q: %d, want %d", data, got, want)
		}
	})
}
