package server

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// A close reads its run's records in one pass that overlaps the store's
// reads with their decoding: one goroutine reads the records (in the
// store's pages) into chunks, parseWorkers decode the chunks, and issue
// consumes them in sequence order. At most readAhead chunks are in
// flight, each at most chunkRecords records or chunkBytes bytes of
// bodies, so memory stays bounded whatever the run's size.
const (
	chunkRecords = 256
	chunkBytes   = 1 << 20
	readAhead    = 4
)

// parseWorkers is how many goroutines decode a close's records.
func parseWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), 4)) }

// parsedRecord is one stored record decoded for a close.
type parsedRecord struct {
	seq  int64 // the store's sequence (for errors)
	body []byte
	// from and to are body's place in its chunk's buffer, which may move
	// while the chunk fills: body is set from them when the chunk is sent.
	from, to int
	rec      vpec.Record
	// chain is what the record's chain hash covers: cut from the stored
	// body (chainInput, cut set), or, when the body's form is not the
	// one the cut needs, the canonical bytes from the parse tree.
	chain []byte
	cut   bool
	err   error
}

// recordChunk is a run of consecutive records; done is closed once every
// record is decoded.
type recordChunk struct {
	buf  []byte // the chunk's bodies, copied out of the store's page
	recs []parsedRecord
	done chan struct{}
}

func (c *recordChunk) parse() {
	for i := range c.recs {
		p := &c.recs[i]
		tree, err := decodeForClose(p.body, &p.rec)
		if err != nil {
			p.err = fmt.Errorf("stored record %d: %w", p.seq, err)
			continue
		}
		if p.chain = chainInput(p.body, tree); p.chain != nil {
			p.cut = true
		} else {
			p.chain = tree.Canonical("chain_hash")
		}
	}
	close(c.done)
}

// decodeForClose decodes a stored record for a close as strictly as
// document.Parse (every field checked, the same errors), but leaves its
// details undecoded (document.Options.SkipFreeMaps: still checked to be
// a non-empty object) unless the record may raise model_profile_missing,
// whose check reads the details' GPU class (gpuClassOf): gaps, summary,
// claims and the Merkle root read no details. Decoding details built a
// map per record, most of a 10,000-record close's allocations.
// TestDecodeForClose and FuzzDecodeForClose compare it with
// document.Parse.
func decodeForClose(body []byte, rec *vpec.Record) (*canonical.Value, error) {
	tree, err := document.ParseWith(body, rec, document.Options{SkipFreeMaps: true})
	if err != nil || !rec.RaisesProfileMissing() {
		return tree, err
	}
	*rec = vpec.Record{}
	return tree, document.Decode(tree, rec)
}

// eachParsed reads run runID's records from the store and calls fn with
// each, decoded, in sequence order; it stops at fn's first error (or a
// record that does not decode) and returns it. What fn is given (the
// body, the record) is valid only until fn returns: fn copies what it
// keeps.
func (s *Server) eachParsed(ctx context.Context, runID string, fn func(*parsedRecord) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ordered := make(chan *recordChunk, readAhead)
	work := make(chan *recordChunk, readAhead)
	// free holds the chunks issue is done with, for the reader to reuse:
	// a close allocates a few chunks, whatever the run's size.
	free := make(chan *recordChunk, readAhead+2)
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(ordered)
		defer close(work)
		send := func(c *recordChunk) error {
			for i := range c.recs {
				p := &c.recs[i]
				p.body = c.buf[p.from:p.to:p.to]
			}
			select {
			case ordered <- c:
			case <-ctx.Done():
				return ctx.Err()
			}
			work <- c // never blocks longer than a worker's chunk: work has ordered's capacity
			return nil
		}
		newChunk := func() *recordChunk {
			select {
			case c := <-free:
				c.buf, c.recs, c.done = c.buf[:0], c.recs[:0], make(chan struct{})
				return c
			default:
				// The buffers grow as the chunk fills (to chunkBytes and
				// chunkRecords at most): a close of a few records, the
				// common case, allocates a few kilobytes, not a megabyte.
				return &recordChunk{done: make(chan struct{})}
			}
		}
		cur := newChunk()
		readErr = s.cfg.Storage.Runs.EachRecordBody(ctx, runID, func(seq int64, body []byte) error {
			if len(cur.recs) == chunkRecords || (len(cur.recs) > 0 && len(cur.buf)+len(body) > chunkBytes) {
				if err := send(cur); err != nil {
					return err
				}
				cur = newChunk()
			}
			start := len(cur.buf)
			cur.buf = append(cur.buf, body...)
			cur.recs = append(cur.recs, parsedRecord{seq: seq, from: start, to: len(cur.buf)})
			return nil
		})
		if readErr == nil && len(cur.recs) > 0 {
			readErr = send(cur)
		}
	})
	for range parseWorkers() {
		wg.Go(func() {
			for c := range work {
				c.parse()
			}
		})
	}
	var err error
	for c := range ordered {
		<-c.done
		for i := range c.recs {
			if err != nil {
				break
			}
			p := &c.recs[i]
			if err = p.err; err == nil {
				err = fn(p)
			}
		}
		if err == nil {
			clear(c.recs) // fn kept copies of what it needs
			select {
			case free <- c:
			default:
			}
		}
		if err != nil {
			cancel()
			for range ordered { // let the reader see the cancel and end
			}
			break
		}
	}
	wg.Wait()
	if err != nil {
		return err
	}
	return readErr
}

// chainMember is how a canonical record's chain_hash member starts.
var chainMember = []byte(`"chain_hash":`)

// chainInput returns the bytes a record's chain hash covers, cut from its
// stored body: the body without its top-level chain_hash member and the
// comma beside it. For a body in RFC 8785 form (what the service stores:
// appends check the chain over exactly that form) these are the bytes
// tree.Canonical("chain_hash") would build, without building them. It
// returns nil when the member is not written as the canonical form writes
// it. A body not in canonical form gives bytes its chain hash does not
// cover; issue recomputes every link from the parse tree whenever the
// chain does not verify over the cut bytes, so the cut never reports a
// break that is not there, and a link that verifies over them verifies
// over the bytes the append checked (SHA-256 collision resistance).
func chainInput(body []byte, tree *canonical.Value) []byte {
	if tree.Kind() != canonical.KindObject {
		return nil
	}
	for name, m := range tree.MemberNames() {
		if string(name) != "chain_hash" {
			continue
		}
		raw, off := m.Raw(), m.Offset()
		start, end := off-len(chainMember), off+len(raw)
		if raw == nil || start < 1 || !bytes.Equal(body[start:off], chainMember) {
			return nil
		}
		switch {
		case body[start-1] == ',':
			start--
		case end < len(body) && body[end] == ',':
			end++
		}
		out := make([]byte, 0, len(body)-(end-start))
		return append(append(out, body[:start]...), body[end:]...)
	}
	return bytes.Clone(body) // none: the whole body (not the chunk's buffer)
}
