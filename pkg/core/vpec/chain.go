package vpec

import (
	"crypto/sha256"
	"fmt"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/merkle"
)

// chainGenesisPrefix is prepended to the run id to derive the chain's
// genesis value.
const chainGenesisPrefix = "svc.chain.v1:"

// Genesis returns the chain value that precedes a run's first record:
// SHA-256 over "svc.chain.v1:" followed by the run id.
func Genesis(runID string) [32]byte {
	return sha256.Sum256([]byte(chainGenesisPrefix + runID))
}

// NextChainHash returns the chain hash of a record whose canonical bytes
// (JCS of the record without chain_hash) are recordJCS, following prev.
func NextChainHash(prev [32]byte, recordJCS []byte) [32]byte {
	return ChainInput{Head: recordJCS}.next(prev)
}

// ChainInput is what a record's chain hash covers (RFC 8785 of the record
// without chain_hash) as it was read: Head followed by Tail, each a window
// of the bytes it was read from (a record written in its canonical form is
// its bytes with the chain_hash member cut out: two windows, no copy).
type ChainInput struct{ Head, Tail []byte }

// Bytes returns the chain input in one slice: Head itself when Tail is
// empty, else a new slice.
func (c ChainInput) Bytes() []byte {
	if len(c.Tail) == 0 {
		return c.Head
	}
	return append(append(make([]byte, 0, len(c.Head)+len(c.Tail)), c.Head...), c.Tail...)
}

// next returns the chain hash of the record c is the input of, following
// prev (NextChainHash without joining the windows).
func (c ChainInput) next(prev [32]byte) [32]byte {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(c.Head)
	h.Write(c.Tail)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// RecordBytes returns the canonical bytes a record's chain hash covers:
// JCS of the record with its chain_hash field removed.
func RecordBytes(r *Record) ([]byte, error) {
	return document.MarshalSignedBytes(r, "chain_hash")
}

// ChainBreak describes where a chain stops verifying.
type ChainBreak struct {
	Sequence int64  // sequence of the record whose chain hash fails
	Reason   string // what is wrong
	// MissingFrom and MissingTo bound the sequence numbers absent before
	// Sequence (both 0 when none are missing).
	MissingFrom, MissingTo int64
}

// VerifyChain recomputes the chain of records from genesis using each
// record's canonical bytes (recordJCS[i], the bytes as received). Where the
// sequence numbers skip, the chain cannot be followed; the next record is
// taken as a new anchor and the skip is reported as a break. It returns every
// break found; none means the chain is intact end to end.
func VerifyChain(runID string, records []Record, recordJCS [][]byte) []ChainBreak {
	in := make([]ChainInput, len(recordJCS))
	for i, b := range recordJCS {
		in[i].Head = b
	}
	return VerifyChainInputs(runID, records, in)
}

// VerifyChainInputs is VerifyChain on the chain inputs as Parse read them
// (Document.Chain).
func VerifyChainInputs(runID string, records []Record, inputs []ChainInput) []ChainBreak {
	return chainBreaks(records, chainLinks(Genesis(runID), records, inputs))
}

// chainBreaks is VerifyChainInputs on the records' chain links.
func chainBreaks(records []Record, links []chainLink) []ChainBreak {
	var breaks []ChainBreak
	var prevSeq int64
	for i := range records {
		r := &records[i]
		got, err := links[i].got, links[i].err
		if err != nil {
			// Nothing after this record can be linked to it: the next
			// record is checked against a value that cannot match.
			breaks = append(breaks, ChainBreak{Sequence: r.Sequence, Reason: fmt.Sprintf("chain_hash: %v", err)})
			prevSeq = r.Sequence
			continue
		}
		if want := prevSeq + 1; r.Sequence != want {
			b := ChainBreak{Sequence: r.Sequence, Reason: fmt.Sprintf("sequence %d follows %d (record %s missing or out of order)", r.Sequence, prevSeq, missingRange(prevSeq, r.Sequence))}
			if r.Sequence > want {
				b.MissingFrom, b.MissingTo = want, r.Sequence-1
			}
			breaks = append(breaks, b)
			prevSeq = r.Sequence
			continue
		}
		want := links[i].want // NextChainHash(prev, inputs[i]): prev is the previous record's got
		if want != got {
			breaks = append(breaks, ChainBreak{Sequence: r.Sequence, Reason: fmt.Sprintf("chain_hash is %s, recomputed %s", commitment.Short(r.ChainHash), commitment.Short(commitment.OfSHA256(want).String()))})
		}
		prevSeq = r.Sequence
	}
	return breaks
}

// chainLink is one record's stated chain hash (got, or err when it does
// not parse) and the hash recomputed over its bytes from the previous
// record's stated hash (or genesis; zero after one that does not parse).
type chainLink struct {
	got, want [32]byte
	err       error
}

// chainLinks computes every record's link; each depends on its record and
// the one before only, so a long chain is hashed on several goroutines.
func chainLinks(genesis [32]byte, records []Record, inputs []ChainInput) []chainLink {
	links := make([]chainLink, len(records))
	span := func(from, to int) {
		for i := from; i < to; i++ {
			links[i].got, links[i].err = commitment.ParseSHA256(records[i].ChainHash)
		}
	}
	hash := func(from, to int) {
		for i := from; i < to; i++ {
			prev := genesis
			if i > 0 {
				prev = links[i-1].got // zero when it did not parse
			}
			if i < len(inputs) {
				links[i].want = inputs[i].next(prev)
			}
		}
	}
	workers := parWorkers(len(records))
	inSpans(len(records), workers, span)
	inSpans(len(records), workers, hash) // after every got is known
	return links
}

func missingRange(prev, cur int64) string {
	switch {
	case cur <= prev:
		return "repeated"
	case cur == prev+2:
		return fmt.Sprint(prev + 1)
	default:
		return fmt.Sprintf("%d-%d", prev+1, cur-1)
	}
}

// MerkleRoot returns the RFC 6962 Merkle root over the records' commitment
// hash strings (UTF-8 bytes of "sha256:<hex>"), in record order, as "sha256:<hex>".
func MerkleRoot(records []Record) string {
	leaves := make([]merkle.Hash, len(records))
	var buf []byte // one copy buffer for the leaves, not one each
	for i := range records {
		leaves[i], buf = leafOf(&records[i], buf)
	}
	return rootOf(leaves)
}

// leafOf is r's Merkle leaf hash, using buf (returned, for reuse) as the
// commitment's copy buffer.
func leafOf(r *Record, buf []byte) (merkle.Hash, []byte) {
	buf = append(buf[:0], r.CommitmentHash...)
	return merkle.LeafHash(buf), buf
}

// rootOf is the merkle_root value of the leaf hashes.
func rootOf(leaves []merkle.Hash) string {
	return commitment.OfSHA256(merkle.RootFromLeafHashes(leaves)).String()
}
