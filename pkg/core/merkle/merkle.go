// Package merkle implements the RFC 6962 / RFC 9162 Merkle tree hash over
// SHA-256, with inclusion (audit path) proofs and their verification.
//
// A leaf hash is SHA-256(0x00 || data), an interior node hash is
// SHA-256(0x01 || left || right), a tree of n > 1 leaves is split at the
// largest power of two smaller than n, and the root of the empty tree is
// SHA-256 of the empty string.
package merkle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
)

// HashSize is the size in bytes of a hash (SHA-256).
const HashSize = 32

// Hash is a SHA-256 Merkle tree hash (leaf, node or root).
type Hash [HashSize]byte

// Hex returns h as 64 lowercase hex digits.
func (h Hash) Hex() string { return hex.EncodeToString(h[:]) }

var (
	// ErrIndex reports a leaf index outside the tree.
	ErrIndex = errors.New("merkle: leaf index out of range")
	// ErrProofSize reports an inclusion proof with the wrong number of
	// hashes for the given index and tree size.
	ErrProofSize = errors.New("merkle: wrong inclusion proof size")
	// ErrRootMismatch reports a proof that does not lead to the expected
	// root.
	ErrRootMismatch = errors.New("merkle: root mismatch")
)

const (
	leafPrefix = 0x00
	nodePrefix = 0x01
)

// LeafHash returns the RFC 6962 leaf hash SHA-256(0x00 || data).
func LeafHash(data []byte) Hash {
	if len(data) <= shortLeaf {
		// One block on the stack: no digest or copy on the heap for the
		// short leaves svc hashes (commitment strings, log entries).
		var buf [1 + shortLeaf]byte
		buf[0] = leafPrefix
		copy(buf[1:], data)
		return sha256.Sum256(buf[:1+len(data)])
	}
	h := sha256.New()
	h.Write([]byte{leafPrefix})
	h.Write(data)
	var out Hash
	h.Sum(out[:0])
	return out
}

// shortLeaf is the longest leaf LeafHash hashes from a stack buffer.
const shortLeaf = 255

// NodeHash returns the RFC 6962 interior node hash SHA-256(0x01 || l || r).
func NodeHash(l, r Hash) Hash {
	var buf [1 + 2*HashSize]byte
	buf[0] = nodePrefix
	copy(buf[1:], l[:])
	copy(buf[1+HashSize:], r[:])
	return sha256.Sum256(buf[:])
}

// emptyRoot is SHA-256 of the empty string, the root of the empty tree.
var emptyRoot = Hash(sha256.Sum256(nil))

// stack accumulates leaf hashes left to right and keeps the roots of the
// perfect subtrees covering the leaves seen so far (a compact range): at most
// one per bit of the leaf count, so its memory is O(log n).
type stack struct {
	hashes [64]Hash
	n      int    // number of entries in hashes
	count  uint64 // number of leaves pushed
}

func (s *stack) push(h Hash) {
	// Each trailing one bit of count is a perfect subtree of the same size
	// as the one being completed: merge it in.
	for c := s.count; c&1 == 1; c >>= 1 {
		s.n--
		h = NodeHash(s.hashes[s.n], h)
	}
	s.hashes[s.n] = h
	s.n++
	s.count++
}

// root folds the perfect subtrees right to left, which yields the RFC 6962
// split at the largest power of two.
func (s *stack) root() Hash {
	if s.n == 0 {
		return emptyRoot
	}
	h := s.hashes[s.n-1]
	for i := s.n - 2; i >= 0; i-- {
		h = NodeHash(s.hashes[i], h)
	}
	return h
}

// Root returns the Merkle tree hash of the given leaf data. It hashes the
// leaves as it goes and uses O(log n) extra memory.
func Root(leaves [][]byte) Hash {
	var s stack
	for _, l := range leaves {
		s.push(LeafHash(l))
	}
	return s.root()
}

// RootFromLeafHashes returns the Merkle tree hash of a tree whose leaf hashes
// are given, in O(n) time and O(log n) extra memory.
func RootFromLeafHashes(hashes []Hash) Hash {
	var s stack
	for _, h := range hashes {
		s.push(h)
	}
	return s.root()
}

// InclusionProof returns the RFC 6962 section 2.1.1 audit path for the leaf
// at index in the tree with the given leaf hashes, ordered from the leaf's
// sibling up to the child of the root. It returns an error wrapping ErrIndex
// if index is not in [0, len(hashes)).
func InclusionProof(hashes []Hash, index int) ([]Hash, error) {
	if index < 0 || index >= len(hashes) {
		return nil, fmt.Errorf("%w: index %d, tree size %d", ErrIndex, index, len(hashes))
	}
	// Walk down from the root, recording the sibling subtree at each split;
	// the audit path lists them bottom-up.
	path := make([]Hash, 0, bits.Len(uint(len(hashes))))
	lo, hi := 0, len(hashes)
	for hi-lo > 1 {
		k := splitPoint(hi - lo)
		if index < lo+k {
			path = append(path, RootFromLeafHashes(hashes[lo+k:hi]))
			hi = lo + k
		} else {
			path = append(path, RootFromLeafHashes(hashes[lo:lo+k]))
			lo += k
		}
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
}

// splitPoint returns the largest power of two smaller than n (n >= 2).
func splitPoint(n int) int {
	return 1 << (bits.Len(uint(n-1)) - 1)
}

// VerifyInclusion checks that leaf (a leaf hash) is at index in the tree of
// the given size with the given root, using the RFC 9162 section 2.1.3.2
// algorithm. It returns nil on success or an error wrapping ErrIndex (index
// >= size), ErrProofSize (the proof has the wrong length) or ErrRootMismatch.
//
// As in RFC 9162, a proof does not by itself bind the tree size: some proofs
// also verify for a neighbouring size. Root must therefore be the trusted
// root of a tree of exactly this size (e.g. from a signed checkpoint).
func VerifyInclusion(index, size uint64, leaf Hash, proof []Hash, root Hash) error {
	if index >= size {
		return fmt.Errorf("%w: index %d, tree size %d", ErrIndex, index, size)
	}
	if want := inclusionProofSize(index, size); len(proof) != want {
		return fmt.Errorf("%w: got %d hashes, want %d for index %d in tree size %d",
			ErrProofSize, len(proof), want, index, size)
	}
	fn, sn := index, size-1
	r := leaf
	for _, p := range proof {
		if sn == 0 { // unreachable after the size check; kept per RFC 9162
			return fmt.Errorf("%w: proof too long", ErrProofSize)
		}
		if fn&1 == 1 || fn == sn {
			r = NodeHash(p, r)
			if fn&1 == 0 {
				for fn&1 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			r = NodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 { // unreachable after the size check; kept per RFC 9162
		return fmt.Errorf("%w: proof too short", ErrProofSize)
	}
	if r != root {
		return fmt.Errorf("%w: computed %s, expected %s", ErrRootMismatch, r.Hex(), root.Hex())
	}
	return nil
}

// inclusionProofSize returns the audit path length for index in a tree of
// the given size (index < size): the levels below the point where the paths
// to index and to the last leaf diverge, plus one hash per perfect subtree
// left of it on the right border.
func inclusionProofSize(index, size uint64) int {
	inner := bits.Len64(index ^ (size - 1))
	border := bits.OnesCount64(index >> uint(inner))
	return inner + border
}
