package vpec

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/merkle"
)

// A large VPEC's records are read on several goroutines: each parses,
// checks, encodes and decodes a chunk of consecutive records on its own
// (a record's work depends on no other record), and the reader then
// replays the chunks' outcomes in record order, with the same error caps
// and the same stopping point as the one-goroutine loop of readParts
// (TestReadPartsParallelSame compares the two on every vector). At most
// parReadAhead chunks are ahead of the replay, so memory stays bounded,
// and so does the work done past a stopping point (a hostile document
// with a problem in its first record costs at most parReadAhead chunks).
const (
	parChunk     = 128 // records per chunk
	parReadAhead = 8   // chunks parsed ahead of the replay
	parMinimum   = 2 * parChunk
)

// readWorkers is how many goroutines read n records, and how many records
// a chunk holds: 1 reads them in the one-goroutine loop.
func (p *Document) readWorkers(n int) (workers, chunk int) {
	if p.par.workers > 0 { // set by tests
		return p.par.workers, p.par.chunk
	}
	return parWorkers(n), parChunk
}

// parWorkers is how many goroutines share work over n records: up to 4
// for parMinimum records or more, else 1.
func parWorkers(n int) int {
	if n < parMinimum {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), 4))
}

// inSpans calls fn on workers contiguous spans [from, to) of [0, n), each
// on its own goroutine, and returns when all have.
func inSpans(n, workers int, fn func(from, to int)) {
	var wg sync.WaitGroup
	per := (n + workers - 1) / max(1, workers)
	for from := 0; from < n; from += per {
		wg.Go(func() { fn(from, min(from+per, n)) })
	}
	wg.Wait()
}

// readPar forces how records are read (tests): workers goroutines (1: the
// one-goroutine loop), chunk records a chunk.
type readPar struct{ workers, chunk int }

// recordOutcome is what reading one record gave, before any error cap.
type recordOutcome struct {
	parseErr  error      // the record did not parse (its offset in doc)
	checkErrs []string   // from the details and disclosure checks, each capped alone
	enc       []byte     // its canonical form (its bytes as written, or encoded)
	written   bool       // enc is its bytes as written
	chain     ChainInput // what its chain hash covers
	decodeErr error      // from decoding it into its Record
	rules     []string   // its own v1 rules' problems (recordRules), when it read without one
}

// recordChunk is records [from, from+len(out)) and what reading them gave.
type recordChunk struct {
	from, n int
	out     []recordOutcome // set when the chunk is handed to a worker
	done    chan struct{}
}

// recordBufs are a worker's buffers: scratch for the details check, enc
// for the canonical forms of records not written in it (dropped once
// replayed), chain for their chain inputs (kept: Document.Chain). A record
// written in its canonical form needs neither: its canonical form and
// chain input are windows of the input.
type recordBufs struct {
	scratch, enc, chain []byte
	size                int  // the chunk's records' bytes
	owned               bool // fields may be windows of the input (ParseOwned)
}

// readRecord reads record i (raw, at offset at in doc) as readParts'
// loop does, into o and rec, collecting its problems uncapped.
func readRecord(ps *canonical.Parser, doc, raw []byte, at, i int, b *recordBufs, o *recordOutcome, rec *Record) {
	if !fastRecord(raw, b.owned, o, rec) {
		readRecordTree(ps, doc, raw, at, i, b, o, rec)
	}
}

// readRecordTree is readRecord through the record's parsed tree: any
// record, and the problems of one.
func readRecordTree(ps *canonical.Parser, doc, raw []byte, at, i int, b *recordBufs, o *recordOutcome, rec *Record) {
	v, err := ps.Parse(raw)
	if err != nil {
		o.parseErr = document.SyntaxErrorAt(doc, at, err)
		return
	}
	end, written := v.WrittenCanonically()
	written = written && v.Offset() == 0 && end == len(raw)
	if written {
		checkDetailsWritten(v, i, &o.checkErrs)
	} else {
		b.scratch = checkDetails(v, i, b.scratch, &o.checkErrs)
		checkDisclosureNumbers(v, i, &o.checkErrs)
	}
	if written {
		o.enc, o.written = raw, true
		o.chain = without(v, raw, "chain_hash")
	} else {
		if b.enc == nil {
			// Sized for the chunk: the canonical forms are about its
			// records' bytes (whitespace goes, escapes shrink; the rare
			// number whose canonical form is longer makes append grow
			// them, earlier windows keeping the old array), and so are
			// the chain inputs.
			b.enc = make([]byte, 0, b.size)
			b.chain = make([]byte, 0, b.size)
		}
		e := len(b.enc)
		b.enc = v.AppendCanonical(b.enc)
		o.enc = b.enc[e:len(b.enc):len(b.enc)]
		start := len(b.chain)
		b.chain = v.AppendCanonical(b.chain, "chain_hash")
		o.chain.Head = b.chain[start:len(b.chain):len(b.chain)]
	}
	o.decodeErr = document.DecodeWith(v, rec, document.Options{Path: "records", Indexed: true, Index: i, SkipFreeMaps: true, CanonicalNumbers: true})
	rec.Details = linkDetails(v)
}

// readRecordsParallel is readParts' loop over the records (recs, of doc)
// on workers goroutines, chunk records at a time. It appends the records
// array's canonical form to dst, sets records and inputs, adds problems to
// errs as the loop would, computes each record's Merkle leaf hash into
// leaves, and returns dst and the parse error that stopped it, if any.
// owned: records' fields may be windows of doc (ParseOwned).
//
// When every record is written in its canonical form (as the service
// writes them), it appends only the array's '[' and reports asWritten:
// the records are then their bytes in doc (recordParts), not copied.
func readRecordsParallel(doc []byte, owned bool, recs *arrayPart, workers, chunk int, dst []byte, out *parOut, errs *[]string) (_ []byte, asWritten bool, _ error) {
	records, inputs, leaves, rules, links := out.records, out.inputs, out.leaves, out.rules, out.links
	n := len(recs.elems) / 2
	var chunks []*recordChunk
	for from := 0; from < n; from += chunk {
		chunks = append(chunks, &recordChunk{from: from, n: min(chunk, n-from), done: make(chan struct{})})
	}
	stop := make(chan struct{})
	tokens := make(chan struct{}, parReadAhead)
	work := make(chan *recordChunk)
	// The outcomes of chunks replayed are reused: at most parReadAhead+1
	// chunks' are in use, not one per chunk (fresh memory costs its page
	// faults when the collector is off).
	free := make(chan []recordOutcome, parReadAhead+1)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(work)
		for _, c := range chunks {
			select {
			case tokens <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case out := <-free:
				c.out = out[:c.n]
			default:
				c.out = make([]recordOutcome, c.n, chunk)
			}
			select {
			case work <- c:
			case <-stop:
				return
			}
		}
	})
	for range workers {
		wg.Go(func() {
			ps := canonical.Parser{MaxDepth: document.MaxDepth - 2} // elements are at depth 3
			var scratch, leafBuf []byte
			for c := range work {
				last := c.from + c.n - 1
				b := recordBufs{scratch: scratch, size: int(recs.elems[2*last+1] - recs.elems[2*c.from]), owned: owned}
				// Write the chunk's records and outcomes before
				// anything reads them. In fresh memory (svc verify
				// runs without a collector) the first touch of a page
				// decides its fault: a read (a nil check of *rec) maps
				// the zero page and the write after it faults again,
				// with a TLB flush on the other core.
				clear(records[c.from : last+1])
				clear(c.out)
				for k := range c.out {
					i := c.from + k
					at := int(recs.elems[2*i])
					raw := doc[at:recs.elems[2*i+1]]
					o := &c.out[k]
					readRecord(&ps, doc, raw, at, i, &b, o, &records[i])
					if o.parseErr != nil {
						break // the replay stops here
					}
					if len(o.checkErrs) == 0 && o.decodeErr == nil {
						o.rules = recordRules(&records[i], i, o.rules)
					}
					leaves[i], leafBuf = leafOf(&records[i], leafBuf)
					// Hashed while in cache: the duplicate-id rule reads
					// the ids again only where two hashes are equal.
					out.idHashes[i] = maphash.String(out.idSeed, records[i].RecordID)
					// The record's chain link, its bytes still in
					// cache; a chunk's first record follows another
					// chunk's last (the replay links it).
					l := &links[i]
					l.got, l.err = commitment.ParseSHA256(records[i].ChainHash)
					if k > 0 {
						l.want = o.chain.next(links[i-1].got)
					} else if i == 0 {
						l.want = o.chain.next(out.genesis)
					}
				}
				scratch = b.scratch
				close(c.done)
			}
		})
	}
	// The replay: readParts' loop, on the outcomes. While every record so
	// far is its bytes as written, none is appended; the first that is not
	// appends the ones before it, and the loop goes on as it would have.
	dst = append(dst, '[')
	asWritten = true
	var perr error
	stopped := n
	kept := 0 // records appended (or left as written)
	// upTo appends records [0, k) as written.
	upTo := func(k int) {
		dst = slices.Grow(dst, recs.end-recs.start)
		for j := range k {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, doc[recs.elems[2*j]:recs.elems[2*j+1]]...)
		}
	}
replay:
	for _, c := range chunks {
		<-c.done
		for k := range c.out {
			i, o := c.from+k, &c.out[k]
			if len(*errs) > maxReported {
				stopped = i
				break replay
			}
			if o.parseErr != nil {
				perr, stopped = o.parseErr, i
				break replay
			}
			for _, e := range o.checkErrs {
				if len(*errs) < maxReported {
					*errs = append(*errs, e)
				}
			}
			if len(*errs) == 0 {
				if asWritten && !o.written {
					asWritten = false
					upTo(i)
				}
				kept++
				if !asWritten {
					if i > 0 {
						dst = append(dst, ',')
					}
					dst = append(dst, o.enc...)
				}
				inputs[i] = o.chain
				rules[i] = o.rules
				if k == 0 && i > 0 {
					links[i].want = o.chain.next(links[i-1].got)
				}
			}
			if o.decodeErr != nil {
				addErrors(errs, o.decodeErr)
			}
		}
		free <- c.out[:0]
		c.out = nil // let its encodings go
		<-tokens
	}
	close(stop) // the dispatcher ends; the workers finish their chunks
	wg.Wait()
	// Records after the stopping point stay as the loop leaves them.
	clear(records[stopped:])
	if asWritten && kept < n {
		// The loop stopped early or found problems: the signed bytes are
		// not used (the signature is not checked), but dst holds what the
		// loop would have written.
		asWritten = false
		upTo(kept)
	}
	out.linked = kept == n && perr == nil
	if asWritten {
		return dst, true, perr
	}
	return append(dst, ']'), false, perr
}

// parOut is where readRecordsParallel puts what it reads, one element per
// record: the records, their chain inputs, Merkle leaf hashes, own
// problems (recordRules), chain links (from genesis) and record id hashes.
// linked: every record was read, so links and hashes are complete.
type parOut struct {
	records  []Record
	inputs   []ChainInput
	leaves   []merkle.Hash
	rules    [][]string
	links    []chainLink
	idHashes []uint64 // each record id's maphash, with idSeed
	idSeed   maphash.Seed
	genesis  [32]byte
	linked   bool
}

// comma is the separator between records in the signed bytes' parts.
var comma = []byte{','}

// recordParts appends to parts the records of a (of doc), each written in
// its canonical form, joined by commas: the canonical form of the array
// between its brackets, as windows of doc. Where the array is written
// compactly (single commas between records) that is one window.
func recordParts(parts [][]byte, doc []byte, a *arrayPart) [][]byte {
	n := len(a.elems) / 2
	if n == 0 {
		return parts
	}
	compact := true
	for i := 1; i < n && compact; i++ {
		compact = a.elems[2*i] == a.elems[2*i-1]+1
	}
	if compact {
		return append(parts, doc[a.elems[0]:a.elems[2*n-1]:a.elems[2*n-1]])
	}
	for i := range n {
		if i > 0 {
			parts = append(parts, comma)
		}
		parts = append(parts, doc[a.elems[2*i]:a.elems[2*i+1]:a.elems[2*i+1]])
	}
	return parts
}

// recordRules appends to dst record i's own problems (checkRecord,
// checkEvidenceEncoding), found reading only that record.
func recordRules(r *Record, i int, dst []string) []string {
	bad := func(format string, a ...any) { dst = append(dst, fmt.Sprintf(format, a...)) }
	f := "records[" + strconv.Itoa(i) + "]" // per record: not through fmt
	checkRecord(r, f, bad)
	checkEvidenceEncoding(r, f, bad)
	return dst
}

// recordProblems returns a function that reports record i's own problems
// (recordRules) through bad, called for each record in order. For a large
// VPEC they were found ahead, by the goroutines that read the records
// (Document.rules), and are reported in the same order, with the same
// text, as found one after another.
func (d *Document) recordProblems() func(i int, bad func(string, ...any)) {
	if d.rules != nil {
		return func(i int, bad func(string, ...any)) {
			for _, p := range d.rules[i] {
				bad("%s", p)
			}
		}
	}
	recs := d.VPEC.Records
	return func(i int, bad func(string, ...any)) {
		for _, p := range recordRules(&recs[i], i, nil) {
			bad("%s", p)
		}
	}
}
