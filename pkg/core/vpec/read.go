package vpec

import (
	"errors"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/merkle"
)

// read parses doc and decodes it into p (the VPEC, its signed bytes and
// each record's chain input), reporting problems through bad. It returns
// false when there were any.
//
// Memory: when the shape scan has located every record, the document is
// read in parts: the top level without its records as one small tree,
// then each record on its own with one reused parser, written straight
// into the two canonical encodings (signed bytes, chain input) and decoded
// into its Record. What stays is the input, those two encodings and the
// decoded records; no tree of the whole document is ever built. Details
// are checked (an object, not empty, at most MaxDetailsBytes canonical)
// and covered by both encodings, but not decoded into Record.Details
// (decoded, the densest JSON costs 20 times its size): only a proved
// record's link members are (linkDetails), for the ZK proofs check.
// In a large VPEC, a record already in its canonical form with only flat
// fields and details (as the service writes it) is read without a tree,
// in one pass over its bytes (fastRecord), with the same outcome.
// A document the scan could not follow is read as one tree (its parse
// error is then reported exactly).
func (p *Document) read(doc []byte, bad func(string, ...any)) bool {
	s := shapeScanner{d: doc, collect: true, arrays: [2]arrayPart{{name: "records", start: -1}, {name: "gaps", start: -1}}}
	err := s.scan()
	if !p.inputOK() {
		return false
	}
	if err != nil {
		var se *shapeError
		if errors.As(err, &se) {
			bad("%s", se.detail())
		} else {
			bad("%v", err)
		}
		return false
	}
	if s.bad || s.arrays[0].start < 0 {
		return p.readWhole(doc, bad)
	}
	var errs []string
	if err := p.readParts(doc, &s, &errs); err != nil {
		p.VPEC, p.SignedParts, p.Chain = VPEC{}, nil, nil
		if err == errWhole {
			return p.readWhole(doc, bad)
		}
		bad("%v", err)
		return false
	}
	for _, e := range errs {
		bad("%s", e)
	}
	return len(errs) == 0
}

// maxReported bounds how many schema problems one document reports.
const maxReported = 20

// addErrors adds the problems of a strict decode (its *document.FieldError
// values) to errs, at most maxReported and a last line saying more were
// left out.
func addErrors(errs *[]string, err error) {
	add := func(e string) {
		switch {
		case len(*errs) < maxReported:
			*errs = append(*errs, e)
		case len(*errs) == maxReported:
			*errs = append(*errs, "… and more problems")
		}
	}
	fes := document.FieldErrors(err)
	if len(fes) == 0 {
		add(err.Error())
	}
	for _, fe := range fes {
		add(fe.Detail())
	}
}

var errWhole = errors.New("read the whole document")

// readParts is read in parts (see read). It returns the parse error of
// the document, if any; schema problems are added to errs.
func (p *Document) readParts(doc []byte, s *shapeScanner, errs *[]string) error {
	// The skeleton: the document with the records and gaps arrays empty.
	var parts []*arrayPart
	cut := 0
	for i := range s.arrays {
		if a := &s.arrays[i]; a.start >= 0 {
			parts = append(parts, a)
			cut += a.end - a.start - 2
		}
	}
	slices.SortFunc(parts, func(a, b *arrayPart) int { return a.start - b.start })
	skel := make([]byte, 0, len(doc)-cut)
	at := 0
	for _, a := range parts {
		skel = append(append(skel, doc[at:a.start]...), "[]"...)
		at = a.end
	}
	skel = append(skel, doc[at:]...)
	top, err := document.ParseTree(skel)
	if err != nil {
		// The error is outside the records and gaps: read the whole
		// document for its exact position.
		return errWhole
	}
	if err := document.DecodeWith(top, &p.VPEC, document.Options{SkipFreeMaps: true, CanonicalNumbers: true}); err != nil {
		addErrors(errs, err)
	}
	ps := canonical.Parser{MaxDepth: document.MaxDepth - 2} // elements are at depth 3
	var perr error
	// each parses element i of a and writes it, calling use on its tree
	// and its bytes, which written says are already its canonical form
	// (then they are copied as they are, not encoded again).
	each := func(dst []byte, a *arrayPart, use func(i int, v *canonical.Value, raw []byte, written bool)) []byte {
		dst = append(dst, '[')
		for i := range len(a.elems) / 2 {
			if len(*errs) > maxReported || perr != nil {
				break
			}
			raw := doc[a.elems[2*i]:a.elems[2*i+1]]
			v, err := ps.Parse(raw)
			if err != nil {
				perr = document.SyntaxErrorAt(doc, int(a.elems[2*i]), err)
				break
			}
			end, written := v.WrittenCanonically()
			written = written && v.Offset() == 0 && end == len(raw)
			if a.name == "records" {
				if written {
					checkDetailsWritten(v, i, errs)
				} else {
					s.scratch = checkDetails(v, i, s.scratch, errs)
					checkDisclosureNumbers(v, i, errs)
				}
			}
			if len(*errs) == 0 {
				// The encodings are needed only for a document without
				// schema problems (their checks do not run otherwise).
				if i > 0 {
					dst = append(dst, ',')
				}
				if written {
					dst = append(dst, raw...)
				} else {
					dst = v.AppendCanonical(dst)
				}
			}
			use(i, v, raw, written)
		}
		return append(dst, ']')
	}
	recs := &s.arrays[0]
	n := len(recs.elems) / 2
	records := make([]Record, n)
	p.Chain = make([]ChainInput, n)
	var chainBuf []byte // the one-goroutine loop's chain inputs of records not written canonically
	split := -1         // where the records as written go in the signed bytes
	var recParts [][]byte
	var feed *signedFeed // giving SignedTo's writer the signed bytes
	defer func() {
		if feed != nil {
			feed.finish(nil, nil, false) // the read stopped before the end
		}
	}()
	replace := map[string]func([]byte) []byte{
		"records": func(dst []byte) []byte {
			if w, chunk := p.readWorkers(n); w > 1 {
				if len(*errs) > maxReported || perr != nil {
					return append(dst, "[]"...) // what each writes when it reads none
				}
				if p.signedTo != nil && len(*errs) == 0 {
					// The signed bytes are the part before the records,
					// the records as written and the part after them
					// when every record is in canonical form: a writer
					// can hash the first two while they are read.
					if w := p.signedTo(&p.VPEC); w != nil {
						recParts = signedRecordParts(doc, recs)
						feed = startSignedFeed(w, append(dst[:len(dst):len(dst)], '['), recParts[1:])
					}
				}
				var err error
				var asWritten bool
				p.rules, p.leaves = make([][]string, n), make([]merkle.Hash, n)
				out := parOut{records: records, inputs: p.Chain, leaves: p.leaves, rules: p.rules, links: make([]chainLink, n),
					idHashes: make([]uint64, n), idSeed: maphash.MakeSeed(), genesis: Genesis(p.VPEC.RunID)}
				dst, asWritten, err = readRecordsParallel(doc, p.owned, recs, w, chunk, dst, &out, errs)
				if err != nil {
					perr = err
				}
				if out.linked {
					p.links, p.linksRunID = out.links, p.VPEC.RunID
					p.idHashes = out.idHashes
				}
				if asWritten {
					split = len(dst)
					dst = append(dst, ']')
				}
				return dst
			}
			return each(dst, recs, func(i int, v *canonical.Value, raw []byte, written bool) {
				if len(*errs) == 0 {
					if written {
						p.Chain[i] = without(v, raw, "chain_hash")
					} else {
						start := len(chainBuf)
						chainBuf = v.AppendCanonical(chainBuf, "chain_hash")
						p.Chain[i].Head = chainBuf[start:len(chainBuf):len(chainBuf)]
					}
				}
				if err := document.DecodeWith(v, &records[i], document.Options{Path: "records", Indexed: true, Index: i, SkipFreeMaps: true, CanonicalNumbers: true}); err != nil {
					addErrors(errs, err)
				}
				records[i].Details = linkDetails(v)
			})
		},
	}
	var gaps []Gap
	if g := &s.arrays[1]; g.start >= 0 {
		gaps = make([]Gap, len(g.elems)/2)
		replace["gaps"] = func(dst []byte) []byte {
			return each(dst, g, func(i int, v *canonical.Value, _ []byte, _ bool) {
				if err := document.DecodeWith(v, &gaps[i], document.Options{Path: "gaps", Indexed: true, Index: i, CanonicalNumbers: true}); err != nil {
					addErrors(errs, err)
				}
			})
		}
	}
	// Room for everything but records read in parallel, which are most
	// often left in the input (readRecordsParallel makes room when not).
	size := len(doc)
	if w, _ := p.readWorkers(n); w > 1 {
		size -= recs.end - recs.start
	}
	signed := top.AppendCanonicalReplacing(make([]byte, 0, size), replace, unsignedFields...)
	if perr != nil {
		return perr
	}
	if split >= 0 {
		if recParts == nil {
			recParts = signedRecordParts(doc, recs)
		}
		recParts[0] = signed[:split:split]
		p.SignedParts = append(recParts, signed[split:])
	} else {
		p.SignedParts = [][]byte{signed}
	}
	if feed != nil {
		// The feed gave the records as SignedParts holds them (recParts).
		if split >= 0 {
			p.signedWritten = feed.finish(signed[:split], signed[split:], true)
		} else {
			feed.finish(nil, nil, false)
		}
		feed = nil
	}
	p.VPEC.Records = records
	if gaps != nil {
		p.VPEC.Gaps = gaps
	}
	return nil
}

// signedRecordParts is the signed bytes' parts for the records of a (of
// doc), as written: room for the part before them (element 0, to be set)
// and after them (to be appended), and recordParts between.
func signedRecordParts(doc []byte, a *arrayPart) [][]byte {
	return recordParts(make([][]byte, 1, len(a.elems)+1), doc, a) // at most 2n+1
}

// readWhole reads doc as one tree.
func (p *Document) readWhole(doc []byte, bad func(string, ...any)) bool {
	tree, err := document.ParseTree(doc)
	if err != nil {
		bad("%v", err)
		return false
	}
	p.encode(tree)
	var errs []string
	if err := document.DecodeWith(tree, &p.VPEC, document.Options{SkipFreeMaps: true, CanonicalNumbers: true}); err != nil {
		addErrors(&errs, err)
	}
	if recs := tree.Get("records"); recs != nil {
		var scratch []byte
		for i, rec := range recs.Elements() {
			if i < len(p.VPEC.Records) {
				p.VPEC.Records[i].Details = linkDetails(rec)
			}
			scratch = checkDetails(rec, i, scratch, &errs)
			checkDisclosureNumbers(rec, i, &errs)
		}
	}
	for _, e := range errs {
		bad("%s", e)
	}
	return len(errs) == 0
}

// checkDetails reports a record whose details hold a number not in its
// RFC 8785 form (in a VPEC every number has its one form; the service
// writes details canonically) or exceed MaxDetailsBytes in canonical form
// (the rule Record.Validate applies to decoded details).
func checkDetails(rec *canonical.Value, i int, scratch []byte, errs *[]string) []byte {
	d := rec.Get("details")
	if d == nil || d.Kind() != canonical.KindObject {
		return scratch
	}
	if n := d.NonCanonicalNumber(); n != nil {
		if len(*errs) < maxReported {
			text, _ := n.Number()
			*errs = append(*errs, fmt.Sprintf("records[%d].details: the number %.40s is not in its canonical form %s (RFC 8785)", i, n.Raw(), text))
		}
		return scratch
	}
	scratch = d.AppendCanonical(scratch[:0])
	if len(scratch) > MaxDetailsBytes && len(*errs) < maxReported {
		*errs = append(*errs, fmt.Sprintf("records[%d].details is %d bytes in canonical form, more than %d", i, len(scratch), MaxDetailsBytes))
	}
	return scratch
}

// checkDetailsWritten is checkDetails for a record written in its
// canonical form (so are its numbers): its details' canonical form is
// their bytes as written.
func checkDetailsWritten(rec *canonical.Value, i int, errs *[]string) {
	d := rec.Get("details")
	if d == nil || d.Kind() != canonical.KindObject {
		return
	}
	end, _ := d.WrittenCanonically()
	if n := end - d.Offset(); n > MaxDetailsBytes && len(*errs) < maxReported {
		*errs = append(*errs, fmt.Sprintf("records[%d].details is %d bytes in canonical form, more than %d", i, n, MaxDetailsBytes))
	}
}

// without returns the canonical form of the object v without its member
// name, when raw, v's input, is already v's canonical form: raw with that
// member and one comma beside it cut out, as two windows of raw. The
// member's name is written plainly in canonical form ("chain_hash" needs
// no escape).
func without(v *canonical.Value, raw []byte, name string) ChainInput {
	m := v.Get(name)
	if m == nil {
		return ChainInput{Head: raw}
	}
	start := m.Offset() - len(name) - 3 // `"name":`
	end, _ := m.WrittenCanonically()
	return cut(raw, start, end)
}

// cut is raw without raw[start:end] (a member, name to value) and one comma
// beside it, as two windows of raw.
func cut(raw []byte, start, end int) ChainInput {
	switch {
	case raw[start-1] == ',': // a member before it: cut the comma before
		start--
	case raw[end] == ',': // the first member: cut the comma after
		end++
	}
	return ChainInput{Head: raw[:start:start], Tail: raw[end:]}
}

// encode computes the signed bytes and each record's chain input from the
// tree, the two halves in parallel.
func (p *Document) encode(tree *canonical.Value) {
	if tree.Kind() != canonical.KindObject {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.SignedParts = [][]byte{tree.AppendCanonical(make([]byte, 0, len(p.raw)), unsignedFields...)}
	}()
	if recs := tree.Get("records"); recs != nil && recs.Kind() == canonical.KindArray {
		// One buffer for every record; each record's bytes are a window of it.
		buf := make([]byte, 0, len(p.raw))
		p.Chain = make([]ChainInput, recs.Len())
		for i, rec := range recs.Elements() {
			start := len(buf)
			buf = rec.AppendCanonical(buf, "chain_hash")
			p.Chain[i].Head = buf[start:len(buf):len(buf)]
		}
	}
	<-done
}

// checkDisclosureNumbers reports a record whose disclosed values hold a
// number not in its RFC 8785 form (one form per document, as for details).
func checkDisclosureNumbers(rec *canonical.Value, i int, errs *[]string) {
	d := rec.Get("disclosures")
	if d == nil {
		return
	}
	if n := d.NonCanonicalNumber(); n != nil && len(*errs) < maxReported {
		text, _ := n.Number()
		*errs = append(*errs, fmt.Sprintf("records[%d].disclosures: the number %.40s is not in its canonical form %s (RFC 8785)", i, n.Raw(), text))
	}
}
