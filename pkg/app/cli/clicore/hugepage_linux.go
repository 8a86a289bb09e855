package clicore

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on amd64, and on arm64
// with 4 KiB pages.
const hugePage = 2 << 20

// makeReadBuffer returns a buffer of n bytes to read a file into. From
// 4 MiB up it starts on a 2 MiB boundary, and the kernel is asked to back
// its aligned 2 MiB stretches with transparent huge pages before anything
// is written to it: reading a multi-megabyte document into fresh memory
// otherwise takes a page fault per 4 KiB, which cost svc verify more than
// the read itself (BENCHMARKS.md). The advice changes no byte; where huge
// pages are off, nothing happens. The buffer is Go memory, collected like
// any other; the alignment costs up to 2 MiB of address space, never
// touched.
func makeReadBuffer(n int) []byte {
	if n < 2*hugePage {
		return make([]byte, n)
	}
	raw := make([]byte, n+hugePage)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	beg := int((p+hugePage-1)&^(hugePage-1) - p)
	end := int((p+uintptr(len(raw)))&^(hugePage-1) - p)
	_ = unix.Madvise(raw[beg:end], unix.MADV_HUGEPAGE)
	return raw[beg : beg+n : beg+n]
}
