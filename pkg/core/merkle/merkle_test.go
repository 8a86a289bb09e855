package merkle

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

var oracle = rfc6962.DefaultHasher

func mustHex(t testing.TB, s string) Hash {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != HashSize {
		t.Fatalf("bad hex %q", s)
	}
	return Hash(b)
}

// leafData returns deterministic, distinct leaf contents of varying length.
func leafData(n int) [][]byte {
	leaves := make([][]byte, n)
	for i := range leaves {
		b := make([]byte, i%7)
		for j := range b {
			b[j] = byte(i*31 + j)
		}
		leaves[i] = binary.BigEndian.AppendUint32(b, uint32(i))
	}
	return leaves
}

func leafHashes(leaves [][]byte) []Hash {
	hs := make([]Hash, len(leaves))
	for i, l := range leaves {
		hs[i] = LeafHash(l)
	}
	return hs
}

func toSlices(hs []Hash) [][]byte {
	out := make([][]byte, len(hs))
	for i := range hs {
		h := hs[i]
		out[i] = h[:]
	}
	return out
}

// refRoot is a direct transcription of the recursive RFC 6962 definition.
func refRoot(hs []Hash) Hash {
	switch len(hs) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return hs[0]
	}
	k := 1
	for k*2 < len(hs) {
		k *= 2
	}
	return NodeHash(refRoot(hs[:k]), refRoot(hs[k:]))
}

// TestKnownVectors uses the certificate-transparency test data (8 leaves),
// as also published in transparency-dev/merkle testonly/constants.go.
func TestKnownVectors(t *testing.T) {
	inputs := []string{"", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"}
	roots := []string{
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
		"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
		"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
		"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
		"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
		"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
		"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
		"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
	}
	leaves := make([][]byte, len(inputs))
	for i, s := range inputs {
		leaves[i], _ = hex.DecodeString(s)
	}
	for size := 0; size <= len(leaves); size++ {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			want := mustHex(t, roots[size])
			if got := Root(leaves[:size]); got != want {
				t.Errorf("Root = %s, want %s", got.Hex(), want.Hex())
			}
			if got := RootFromLeafHashes(leafHashes(leaves[:size])); got != want {
				t.Errorf("RootFromLeafHashes = %s, want %s", got.Hex(), want.Hex())
			}
		})
	}
	// Leaf hash of the empty leaf and an inclusion proof from the CT tests
	// (leaf 0 of the 8-leaf tree).
	if got := LeafHash(nil).Hex(); got != "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d" {
		t.Errorf("LeafHash(empty) = %s", got)
	}
	want := []string{
		"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
		"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		"6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
	}
	p, err := InclusionProof(leafHashes(leaves), 0)
	if err != nil || len(p) != len(want) {
		t.Fatalf("InclusionProof: %v, %d hashes", err, len(p))
	}
	for i := range want {
		if p[i].Hex() != want[i] {
			t.Errorf("proof[%d] = %s, want %s", i, p[i].Hex(), want[i])
		}
	}
}

func TestRootAgainstOracle(t *testing.T) {
	all := leafData(300)
	for size := 0; size <= 300; size++ {
		leaves := all[:size]
		rf := compact.RangeFactory{Hash: oracle.HashChildren}
		r := rf.NewEmptyRange(0)
		for _, l := range leaves {
			if err := r.Append(oracle.HashLeaf(l), nil); err != nil {
				t.Fatal(err)
			}
		}
		want := oracle.EmptyRoot()
		if size > 0 {
			var err error
			if want, err = r.GetRootHash(nil); err != nil {
				t.Fatal(err)
			}
		}
		hs := leafHashes(leaves)
		for i, l := range leaves {
			if !bytes.Equal(hs[i][:], oracle.HashLeaf(l)) {
				t.Fatalf("LeafHash(%x) differs from oracle", l)
			}
		}
		if got := Root(leaves); !bytes.Equal(got[:], want) {
			t.Errorf("size %d: Root = %s, oracle %x", size, got.Hex(), want)
		}
		if got := RootFromLeafHashes(hs); !bytes.Equal(got[:], want) {
			t.Errorf("size %d: RootFromLeafHashes = %s, oracle %x", size, got.Hex(), want)
		}
		if got := refRoot(hs); !bytes.Equal(got[:], want) {
			t.Errorf("size %d: reference recursion = %s, oracle %x", size, got.Hex(), want)
		}
	}
}

// oracleProof builds an inclusion proof with transparency-dev/merkle/proof.
func oracleProof(t *testing.T, hs []Hash, index uint64) [][]byte {
	t.Helper()
	nodes, err := proof.Inclusion(index, uint64(len(hs)))
	if err != nil {
		t.Fatal(err)
	}
	hashes := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		begin, end := id.Coverage()
		h := RootFromLeafHashes(hs[begin:end])
		hashes[i] = h[:]
	}
	p, err := nodes.Rehash(hashes, oracle.HashChildren)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInclusionAgainstOracle(t *testing.T) {
	all := leafHashes(leafData(130))
	for size := 1; size <= 130; size++ {
		hs := all[:size]
		root := RootFromLeafHashes(hs)
		for index := 0; index < size; index++ {
			idx, sz := uint64(index), uint64(size)
			got, err := InclusionProof(hs, index)
			if err != nil {
				t.Fatalf("size %d index %d: %v", size, index, err)
			}
			want := oracleProof(t, hs, idx)
			if !bytes.Equal(bytes.Join(toSlices(got), nil), bytes.Join(want, nil)) {
				t.Fatalf("size %d index %d: proof differs from oracle", size, index)
			}
			// Our proof verifies with both verifiers.
			if err := VerifyInclusion(idx, sz, hs[index], got, root); err != nil {
				t.Fatalf("size %d index %d: VerifyInclusion: %v", size, index, err)
			}
			if err := proof.VerifyInclusion(oracle, idx, sz, hs[index][:], toSlices(got), root[:]); err != nil {
				t.Fatalf("size %d index %d: oracle rejects our proof: %v", size, index, err)
			}
			checkTampered(t, idx, sz, hs, got, root)
		}
	}
	t.Logf("wrong size: %d rejected, %d accepted by both verifiers", rejectedShifted, acceptedShifted)
	if rejectedShifted == 0 {
		t.Errorf("no wrong-size proof was rejected")
	}
}

// checkTampered asserts that our verifier rejects modified inputs, and that
// the oracle agrees with every verdict.
// acceptedShifted and rejectedShifted count the wrong-size cases that both
// verifiers accept or reject.
var acceptedShifted, rejectedShifted int

// errAny marks a case that must be rejected with any of our errors.
var errAny = errors.New("any error")

func checkTampered(t *testing.T, index, size uint64, hs []Hash, p []Hash, root Hash) {
	t.Helper()
	leaf := hs[index]
	type tc struct {
		name        string
		index, size uint64
		leaf        Hash
		proof       []Hash
		root        Hash
		wantErr     error
	}
	var cases []tc
	for i := range p {
		for _, bit := range []int{0, 7, 255} {
			q := append([]Hash(nil), p...)
			q[i][bit/8] ^= 1 << (bit % 8)
			cases = append(cases, tc{fmt.Sprintf("flip proof[%d] bit %d", i, bit), index, size, leaf, q, root, ErrRootMismatch})
		}
	}
	badLeaf := leaf
	badLeaf[31] ^= 1
	badRoot := root
	badRoot[0] ^= 0x80
	cases = append(cases,
		tc{"flip leaf", index, size, badLeaf, p, root, ErrRootMismatch},
		tc{"flip root", index, size, leaf, p, badRoot, ErrRootMismatch},
		tc{"index = size", size, size, leaf, p, root, ErrIndex},
		tc{"index > size", size + 5, size, leaf, p, root, ErrIndex},
		tc{"size 0", 0, 0, leaf, p, root, ErrIndex},
		tc{"extra hash", index, size, leaf, append(append([]Hash(nil), p...), root), root, ErrProofSize},
	)
	if len(p) > 0 {
		cases = append(cases,
			tc{"truncated", index, size, leaf, p[:len(p)-1], root, ErrProofSize},
			tc{"empty proof", index, size, leaf, nil, root, ErrProofSize},
		)
	}
	// A wrong index must be rejected. Wrong size (wantErr nil): RFC 9162 verification does not bind
	// the tree size by itself when two sizes give the same path (e.g. index 0
	// in sizes 3 and 4 both compute H(H(l0,l1),l2)), so here our verdict
	// must match the oracle's, and a wrong proof length must give
	// ErrProofSize.
	for _, d := range []int64{-1, 1, 2} {
		if ni := int64(index) + d; ni >= 0 && ni < int64(size) {
			cases = append(cases, tc{fmt.Sprintf("index%+d", d), uint64(ni), size, leaf, p, root, errAny})
		}
		if ns := int64(size) + d; ns > int64(index) {
			cases = append(cases, tc{fmt.Sprintf("size%+d", d), index, uint64(ns), leaf, p, root, nil})
		}
	}
	for _, c := range cases {
		err := VerifyInclusion(c.index, c.size, c.leaf, c.proof, c.root)
		oerr := proof.VerifyInclusion(oracle, c.index, c.size, c.leaf[:], toSlices(c.proof), c.root[:])
		if c.wantErr == nil {
			if (err == nil) != (oerr == nil) {
				t.Fatalf("index %d size %d %s: ours %v, oracle %v", index, size, c.name, err, oerr)
			}
			if inclusionProofSize(c.index, c.size) != len(c.proof) && !errors.Is(err, ErrProofSize) {
				t.Fatalf("index %d size %d %s: err = %v, want ErrProofSize", index, size, c.name, err)
			}
			if err == nil {
				acceptedShifted++
				continue
			}
		}
		if err == nil {
			t.Fatalf("index %d size %d %s: tampered proof accepted", index, size, c.name)
		}
		if c.wantErr != nil && c.wantErr != errAny && !errors.Is(err, c.wantErr) {
			t.Fatalf("index %d size %d %s: err = %v, want %v", index, size, c.name, err, c.wantErr)
		}
		if c.wantErr == nil {
			rejectedShifted++
		}
		if !errors.Is(err, ErrIndex) && !errors.Is(err, ErrProofSize) && !errors.Is(err, ErrRootMismatch) {
			t.Fatalf("index %d size %d %s: unexpected error %v", index, size, c.name, err)
		}
		if oerr == nil {
			t.Fatalf("index %d size %d %s: oracle accepts what we reject", index, size, c.name)
		}
	}
}

func TestInclusionProofErrors(t *testing.T) {
	hs := leafHashes(leafData(5))
	tests := []struct {
		name  string
		hs    []Hash
		index int
	}{
		{"empty tree", nil, 0},
		{"negative", hs, -1},
		{"index = size", hs, 5},
		{"large", hs, 1 << 40},
	}
	for _, tt := range tests {
		if _, err := InclusionProof(tt.hs, tt.index); !errors.Is(err, ErrIndex) {
			t.Errorf("%s: err = %v, want ErrIndex", tt.name, err)
		}
	}
	// Single-leaf tree: empty proof, root is the leaf hash.
	p, err := InclusionProof(hs[:1], 0)
	if err != nil || len(p) != 0 {
		t.Fatalf("single leaf: %v %v", p, err)
	}
	if err := VerifyInclusion(0, 1, hs[0], nil, hs[0]); err != nil {
		t.Errorf("single leaf verify: %v", err)
	}
}

func TestVerifyInclusionHugeSizes(t *testing.T) {
	// Must not panic or loop forever on extreme values.
	var h Hash
	for _, c := range [][2]uint64{{0, 1 << 63}, {1<<64 - 2, 1<<64 - 1}, {1 << 62, 1<<64 - 1}} {
		err := VerifyInclusion(c[0], c[1], h, make([]Hash, 64), h)
		if err == nil {
			t.Errorf("index %d size %d: accepted", c[0], c[1])
		}
		n := inclusionProofSize(c[0], c[1])
		err = VerifyInclusion(c[0], c[1], h, make([]Hash, n), h)
		if !errors.Is(err, ErrRootMismatch) {
			t.Errorf("index %d size %d with %d hashes: %v", c[0], c[1], n, err)
		}
	}
}

func TestHex(t *testing.T) {
	var h Hash
	h[0], h[31] = 0xab, 0x01
	want := "ab" + fmt.Sprintf("%060d", 0) + "01"
	if h.Hex() != want {
		t.Errorf("Hex = %s", h.Hex())
	}
}

func benchmarkRoot(b *testing.B, n int) {
	leaves := leafData(n)
	b.ResetTimer()
	for b.Loop() {
		Root(leaves)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/leaf")
}

func BenchmarkRoot10k(b *testing.B) { benchmarkRoot(b, 10_000) }
func BenchmarkRoot1M(b *testing.B)  { benchmarkRoot(b, 1_000_000) }

func BenchmarkRootFromLeafHashes1M(b *testing.B) {
	hs := leafHashes(leafData(1_000_000))
	b.ResetTimer()
	for b.Loop() {
		RootFromLeafHashes(hs)
	}
}

// FuzzVerifyInclusion checks that verification never panics, that it agrees
// with the oracle, and that valid proofs for small trees verify.
func FuzzVerifyInclusion(f *testing.F) {
	f.Add(uint64(0), uint64(1), []byte{}, uint8(0))
	f.Add(uint64(3), uint64(7), make([]byte, 3*HashSize), uint8(1))
	f.Add(uint64(1<<63), uint64(1<<64-1), make([]byte, 64*HashSize), uint8(2))
	f.Fuzz(func(t *testing.T, index, size uint64, proofBytes []byte, seed uint8) {
		p := make([]Hash, len(proofBytes)/HashSize)
		for i := range p {
			copy(p[i][:], proofBytes[i*HashSize:])
		}
		leaf := LeafHash([]byte{seed})
		root := RootFromLeafHashes(p)
		err := VerifyInclusion(index, size, leaf, p, root)
		oerr := proof.VerifyInclusion(oracle, index, size, leaf[:], toSlices(p), root[:])
		if (err == nil) != (oerr == nil) {
			t.Fatalf("ours %v, oracle %v", err, oerr)
		}
		if err != nil && !errors.Is(err, ErrIndex) && !errors.Is(err, ErrProofSize) && !errors.Is(err, ErrRootMismatch) {
			t.Fatalf("unexpected error %v", err)
		}
		// A real proof in a small tree must verify.
		n := int(size%64) + 1
		hs := make([]Hash, n)
		for i := range hs {
			hs[i] = LeafHash([]byte{seed, byte(i)})
		}
		idx := int(index % uint64(n))
		pr, err := InclusionProof(hs, idx)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyInclusion(uint64(idx), uint64(n), hs[idx], pr, RootFromLeafHashes(hs)); err != nil {
			t.Fatalf("valid proof rejected: %v", err)
		}
	})
}

// TestLeafHashLengths: LeafHash agrees with transparency-dev's RFC 6962
// hasher on each side of its stack-buffer length (shortLeaf) and far
// past it.
func TestLeafHashLengths(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 33, 55, 56, 63, 64, 71, 119, 120, shortLeaf - 1, shortLeaf, shortLeaf + 1, 1000, 1 << 16} {
		data := bytes.Repeat([]byte{byte(n)}, n)
		if got := LeafHash(data); !bytes.Equal(got[:], oracle.HashLeaf(data)) {
			t.Errorf("LeafHash of %d bytes differs from the oracle's", n)
		}
	}
}
