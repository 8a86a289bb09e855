package clicore

import (
	"testing"
	"unsafe"
)

// TestMakeReadBuffer: the buffer has the length and capacity asked for,
// reads as zeros, and from 4 MiB up starts on a 2 MiB boundary (so that
// its huge pages hold it from its first byte).
func TestMakeReadBuffer(t *testing.T) {
	for _, n := range []int{0, 1, 4096, 2*hugePage - 1, 2 * hugePage, 6_603_318, 4*hugePage + 1} {
		b := makeReadBuffer(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("makeReadBuffer(%d): len %d, cap %d", n, len(b), cap(b))
		}
		if n >= 2*hugePage {
			if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p%hugePage != 0 {
				t.Errorf("makeReadBuffer(%d) starts at %#x, not on a 2 MiB boundary", n, p)
			}
		}
		for i := 0; i < n; i += 4093 {
			if b[i] != 0 {
				t.Fatalf("makeReadBuffer(%d)[%d] = %d, want 0", n, i, b[i])
			}
		}
		if n > 0 {
			b[n-1] = 1 // writable to its last byte
		}
	}
}
