package commitment

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Poseidon2 commitments (docs/FORMATS.md, "Poseidon2 commitments").
//
// The value is first encoded as a sequence of BN254 scalar-field elements
//
//	tag, chunk_0, ..., chunk_{n-1}, length
//
// and the sequence is hashed with gnark-crypto's Poseidon2 Merkle–Damgård
// construction (poseidon2perm.go: width-2 permutation, 6 full and 50 partial rounds, zero initial
// state, each element one 32-byte big-endian block). The digest is the final
// state: one field element, written as 32 big-endian bytes.
//
//   - tag is the ASCII domain tag ([Poseidon2TagBytes] or [Poseidon2TagInt8])
//     read as an unsigned big-endian integer;
//   - chunk_i is bytes [31i, 31i+31) of the payload, the last chunk padded on
//     the right with zero bytes to 31 bytes, read as an unsigned big-endian
//     integer (below 2^248, so always a canonical field element);
//   - length is the payload length in bytes (Merkle–Damgård strengthening:
//     the length comes last, so a stream can be hashed before its length is
//     known).
//
// An int8 vector's payload is one byte per value, the value plus 128
// ("offset binary": -128 -> 0x00, 0 -> 0x80, 127 -> 0xff), under its own tag;
// its length is the number of values.

// Poseidon2 domain tags: the first element of every encoded sequence.
const (
	// Poseidon2TagBytes tags a commitment to raw bytes (a record's input or
	// output).
	Poseidon2TagBytes = "svc/poseidon2/bytes/v1"
	// Poseidon2TagInt8 tags a commitment to a vector of int8 values (a
	// quantised embedding, the input of a proved model head).
	Poseidon2TagInt8 = "svc/poseidon2/int8/v1"
)

// Poseidon2ChunkBytes is the number of payload bytes packed into one field
// element.
const Poseidon2ChunkBytes = 31

// Poseidon2DigestBytes is the size of a Poseidon2 digest: one BN254 scalar
// field element, big-endian.
const Poseidon2DigestBytes = fr.Bytes

// Int8Offset is added to an int8 value to give its payload byte.
const Int8Offset = 128

var (
	// ErrEncoding reports an element sequence that is not the encoding of
	// any payload (see [DecodePoseidon2Elements]).
	ErrEncoding = errors.New("commitment: not a poseidon2 element encoding")
)

// Poseidon2Hasher streams a payload into a Poseidon2 commitment: Write the
// payload's bytes, then call Sum. The zero value is not usable; use
// [NewPoseidon2Hasher].
type Poseidon2Hasher struct {
	state fr.Element
	buf   [Poseidon2ChunkBytes]byte
	nbuf  int
	n     uint64
}

// NewPoseidon2Hasher returns a hasher for payloads under the given domain
// tag (at most 31 bytes; [Poseidon2TagBytes] or [Poseidon2TagInt8] for
// commitments carried in records).
func NewPoseidon2Hasher(tag string) (*Poseidon2Hasher, error) {
	t, err := TagElement(tag)
	if err != nil {
		return nil, err
	}
	h := &Poseidon2Hasher{}
	h.absorb(&t)
	return h, nil
}

// TagElement returns the field element of a domain tag: its ASCII bytes read
// as an unsigned big-endian integer. The tag must be 1 to 31 printable ASCII
// bytes.
func TagElement(tag string) (fr.Element, error) {
	if len(tag) == 0 || len(tag) > Poseidon2ChunkBytes {
		return fr.Element{}, fmt.Errorf("commitment: poseidon2 tag %q must be 1 to %d bytes", tag, Poseidon2ChunkBytes)
	}
	for i := 0; i < len(tag); i++ {
		if tag[i] < 0x20 || tag[i] > 0x7e {
			return fr.Element{}, fmt.Errorf("commitment: poseidon2 tag %q has a non-printable byte at %d", tag, i)
		}
	}
	var e fr.Element
	e.SetBigInt(new(big.Int).SetBytes([]byte(tag)))
	return e, nil
}

// absorb runs one Merkle–Damgård step: state = Compress(state, e), where
// Compress(l, r) = P(l, r)[1] + r (gnark-crypto's Permutation.Compress).
func (h *Poseidon2Hasher) absorb(e *fr.Element) {
	h.state = poseidon2Compress(&h.state, e)
}

// Write absorbs payload bytes; it never fails.
func (h *Poseidon2Hasher) Write(p []byte) (int, error) {
	n := len(p)
	h.n += uint64(n)
	for len(p) > 0 {
		c := copy(h.buf[h.nbuf:], p)
		h.nbuf += c
		p = p[c:]
		if h.nbuf == Poseidon2ChunkBytes {
			h.flush()
		}
	}
	return n, nil
}

func (h *Poseidon2Hasher) flush() {
	var b [fr.Bytes]byte // 0x00 || 31 chunk bytes: always below r
	copy(b[1:], h.buf[:])
	var e fr.Element
	if err := e.SetBytesCanonical(b[:]); err != nil {
		panic(err) // unreachable: below 2^248
	}
	h.absorb(&e)
	h.buf = [Poseidon2ChunkBytes]byte{}
	h.nbuf = 0
}

// Sum finishes the hash (last chunk zero-padded, then the length element)
// and returns the commitment. The hasher must not be used afterwards.
func (h *Poseidon2Hasher) Sum() Hash {
	if h.nbuf > 0 {
		h.flush()
	}
	var l fr.Element
	l.SetUint64(h.n)
	h.absorb(&l)
	d := h.state.Bytes()
	return Hash{Algorithm: Poseidon2, Digest: d[:]}
}

// Poseidon2Elements returns the element sequence that a payload under tag
// is hashed as: tag, chunks, length. The circuit side (pkg/zk/head) hashes
// this same sequence with gnark's std/hash/poseidon2.
func Poseidon2Elements(tag string, payload []byte) ([]fr.Element, error) {
	t, err := TagElement(tag)
	if err != nil {
		return nil, err
	}
	nchunks := (len(payload) + Poseidon2ChunkBytes - 1) / Poseidon2ChunkBytes
	out := make([]fr.Element, 0, nchunks+2)
	out = append(out, t)
	for i := 0; i < nchunks; i++ {
		var chunk [Poseidon2ChunkBytes]byte
		copy(chunk[:], payload[i*Poseidon2ChunkBytes:])
		var e fr.Element
		e.SetBigInt(new(big.Int).SetBytes(chunk[:]))
		out = append(out, e)
	}
	var l fr.Element
	l.SetUint64(uint64(len(payload)))
	return append(out, l), nil
}

// HashPoseidon2Elements hashes an element sequence as gnark-crypto's
// Poseidon2 Merkle–Damgård hasher does (zero initial state, one element
// per block, state = Compress(state, element)) and returns the 32-byte
// digest.
func HashPoseidon2Elements(elems []fr.Element) [Poseidon2DigestBytes]byte {
	var state fr.Element
	for i := range elems {
		state = poseidon2Compress(&state, &elems[i])
	}
	return state.Bytes()
}

// DecodePoseidon2Elements is the inverse of [Poseidon2Elements]: it returns
// the tag and payload that elems encode, or an error wrapping [ErrEncoding]
// if elems is not an encoding (fewer than 2 elements, a tag that is not 1-31
// printable ASCII bytes, a chunk at or above 2^248, a length that disagrees
// with the number of chunks, or nonzero padding after the last payload byte).
// Every element is 32 big-endian bytes and must be canonical (below the
// field modulus). Together with the round trip this shows the encoding is
// injective.
func DecodePoseidon2Elements(elems [][Poseidon2DigestBytes]byte) (tag string, payload []byte, err error) {
	if len(elems) < 2 {
		return "", nil, fmt.Errorf("%w: %d elements, need at least the tag and the length", ErrEncoding, len(elems))
	}
	fe := make([]fr.Element, len(elems))
	for i := range elems {
		if err := fe[i].SetBytesCanonical(elems[i][:]); err != nil {
			return "", nil, fmt.Errorf("%w: element %d is not a canonical field element: %v", ErrEncoding, i, err)
		}
	}
	// Tag: strip leading zero bytes; the rest must be a valid tag.
	tb := elems[0][:]
	for len(tb) > 0 && tb[0] == 0 {
		tb = tb[1:]
	}
	tag = string(tb)
	if _, err := TagElement(tag); err != nil {
		return "", nil, fmt.Errorf("%w: tag element: %v", ErrEncoding, err)
	}
	last := elems[len(elems)-1]
	for _, b := range last[:24] {
		if b != 0 {
			return "", nil, fmt.Errorf("%w: length element does not fit in 64 bits", ErrEncoding)
		}
	}
	var length uint64
	for _, b := range last[24:] {
		length = length<<8 | uint64(b)
	}
	nchunks := uint64(len(elems) - 2)
	if want := (length + Poseidon2ChunkBytes - 1) / Poseidon2ChunkBytes; want != nchunks || length > nchunks*Poseidon2ChunkBytes {
		return "", nil, fmt.Errorf("%w: length %d needs %d chunks, have %d", ErrEncoding, length, want, nchunks)
	}
	payload = make([]byte, 0, nchunks*Poseidon2ChunkBytes)
	for i := 1; i < len(elems)-1; i++ {
		if elems[i][0] != 0 {
			return "", nil, fmt.Errorf("%w: chunk %d is 2^248 or more", ErrEncoding, i-1)
		}
		payload = append(payload, elems[i][1:]...)
	}
	for i := length; i < uint64(len(payload)); i++ {
		if payload[i] != 0 {
			return "", nil, fmt.Errorf("%w: nonzero padding byte at payload offset %d", ErrEncoding, i)
		}
	}
	return tag, payload[:length], nil
}

// SumPoseidon2 returns the Poseidon2 commitment of raw bytes (tag
// [Poseidon2TagBytes]).
func SumPoseidon2(data []byte) Hash {
	h, _ := NewPoseidon2Hasher(Poseidon2TagBytes) // constant tag: cannot fail
	h.Write(data)
	return h.Sum()
}

// Int8Payload returns the payload bytes of an int8 vector: v[i]+128 each.
func Int8Payload(v []int8) []byte {
	p := make([]byte, len(v))
	for i, x := range v {
		p[i] = byte(int(x) + Int8Offset)
	}
	return p
}

// SumPoseidon2Int8 returns the Poseidon2 commitment of an int8 vector (tag
// [Poseidon2TagInt8], payload [Int8Payload]). It is the public input
// commitment of a proved model head.
func SumPoseidon2Int8(v []int8) Hash {
	h, _ := NewPoseidon2Hasher(Poseidon2TagInt8) // constant tag: cannot fail
	h.Write(Int8Payload(v))
	return h.Sum()
}

// SumAlgorithm returns the commitment of data under alg (sha256 or
// poseidon2 over raw bytes).
func SumAlgorithm(alg Algorithm, data []byte) (Hash, error) {
	switch alg {
	case SHA256:
		return Sum(data), nil
	case Poseidon2:
		return SumPoseidon2(data), nil
	}
	return Hash{}, fmt.Errorf("%w: %q (want sha256 or poseidon2)", ErrUnsupported, alg)
}

// SumAlgorithmReader streams r into the commitment of alg in constant
// memory and returns it with the number of bytes read.
func SumAlgorithmReader(alg Algorithm, r io.Reader) (Hash, int64, error) {
	switch alg {
	case SHA256:
		return SumReader(r)
	case Poseidon2:
	default:
		return Hash{}, 0, fmt.Errorf("%w: %q (want sha256 or poseidon2)", ErrUnsupported, alg)
	}
	if r == nil {
		return Hash{}, 0, errors.New("commitment: nil reader")
	}
	h, _ := NewPoseidon2Hasher(Poseidon2TagBytes)
	buf := make([]byte, 64<<10)
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, buf)
	if err != nil {
		return Hash{}, n, fmt.Errorf("commitment: read after %d bytes: %w", n, err)
	}
	return h.Sum(), n, nil
}

// SumAlgorithmFile is [SumAlgorithmReader] over the file at path.
func SumAlgorithmFile(alg Algorithm, path string) (Hash, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Hash{}, 0, fmt.Errorf("commitment: %w", err)
	}
	defer f.Close()
	h, n, err := SumAlgorithmReader(alg, f)
	if err != nil {
		return Hash{}, n, fmt.Errorf("commitment: hash %s: %w", path, err)
	}
	return h, n, nil
}

// checkPoseidon2Digest reports whether d is a canonical field element.
func checkPoseidon2Digest(d []byte) error {
	var e fr.Element
	if err := e.SetBytesCanonical(d); err != nil {
		return fmt.Errorf("is not below the BN254 scalar field modulus")
	}
	return nil
}
