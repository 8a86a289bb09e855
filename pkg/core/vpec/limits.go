package vpec

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/document"
)

// MaxDocumentBytes is the largest VPEC (or model profile) the verifier
// reads: 256 MiB. A larger input is refused at once, before it is parsed,
// with an error matching ErrTooLarge (the CLI exits 2). The service never
// issues a VPEC above it.
const MaxDocumentBytes = document.MaxSize

// ErrTooLarge reports an input larger than MaxDocumentBytes.
var ErrTooLarge = document.ErrTooLarge

// ErrShape reports a JSON document whose shape cannot be a v1 VPEC (the
// top level is not an object, a member v1 does not define, records or gaps
// not an array of objects, ...). It matches document.ErrSchema.
var ErrShape = errors.New("not a VPEC")

// maxDetailsValues bounds the JSON values (scalars, arrays, objects) in one
// record's details: a value of v values is at least 2v-1 bytes in
// canonical form, so more than this many cannot be within MaxDetailsBytes.
const maxDetailsValues = (MaxDetailsBytes + 1) / 2

// maxDisclosureValues bounds the JSON values of a record's disclosures
// the same way (disclosure.MaxDisclosureBytes).
const maxDisclosureValues = (disclosure.MaxDisclosureBytes + 1) / 2

// jsonNames returns the JSON member names of struct type t.
func jsonNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}

// requiredCount returns how many members of struct type t are required
// (not omitempty): an object with fewer cannot decode into it.
func requiredCount(t reflect.Type) int {
	n := 0
	for i := 0; i < t.NumField(); i++ {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "-" && !strings.Contains(opts, "omitempty") {
			n++
		}
	}
	return n
}

var (
	// The fewest members each object of the VPEC may have: every one of
	// them costs more decoded than written unless it carries its
	// required members.
	minMembers = map[string]int{
		"records":           requiredCount(reflect.TypeFor[Record]()),
		"gaps":              requiredCount(reflect.TypeFor[Gap]()),
		"review":            requiredCount(reflect.TypeFor[Review]()),
		"check_session":     requiredCount(reflect.TypeFor[CheckSession]()),
		"bounded_inference": requiredCount(reflect.TypeFor[BoundedInference]()),
		"zk_proof":          requiredCount(reflect.TypeFor[ZKProof]()),
	}
	vpecMembers   = jsonNames(reflect.TypeFor[VPEC]())
	recordMembers = jsonNames(reflect.TypeFor[Record]())
	gapMembers    = jsonNames(reflect.TypeFor[Gap]())
	// Record members whose value is an object.
	recordObjects = map[string]bool{"details": true, "review": true, "check_session": true, "bounded_inference": true, "zk_proof": true}
)

// CheckShape is the cheap first look at an untrusted document: one pass
// over the bytes, allocating nothing unless it fails, that refuses what
// cannot be a v1 VPEC before the expensive parse: a top level that is not
// an object, a top-level member v1 does not define, records or gaps that
// are not arrays of objects, a record member v1 does not define, a
// details, review, check_session or bounded_inference that is not an
// object, a record's details holding more values than MaxDetailsBytes
// allows, a proof level breakdown with more members than there are proof
// levels, or nesting deeper than document.MaxDepth. It does not judge JSON
// syntax: text it cannot follow is left for the parser to report, so nil
// means "not refused by shape", not "valid". Errors match ErrShape and
// document.ErrSchema and name the member and byte offset.
//
// The member names of the top level, of records and of gaps must be
// written plainly, without escapes: "\u0072ecords" is the same member in
// canonical form, so accepting it would accept byte-different copies of
// one signed document.
func CheckShape(doc []byte) error {
	s := shapeScanner{d: doc}
	return s.scan()
}

func (s *shapeScanner) scan() error {
	s.ws()
	if s.pos >= len(s.d) {
		return nil
	}
	if s.d[s.pos] != '{' {
		return s.fail("(document)", "is a JSON %s, not an object: it cannot be a VPEC", s.kindAt())
	}
	var err error
	s.object(func(name []byte, plain bool) bool {
		switch {
		case !plain:
			err = s.fail(quoteName(name), "is a member name written with escapes; write it plainly")
		case !vpecMembers[string(name)]:
			err = s.fail(quoteName(name), "is not a member of a v1 VPEC")
		case string(name) == "records":
			a := &s.arrays[0]
			a.start, a.elems = s.pos, a.elems[:0]
			err = s.arrayOfObjects("records", func(i int) error { return s.record(i) })
			a.end = s.pos
		case string(name) == "gaps":
			a := &s.arrays[1]
			a.start, a.elems = s.pos, a.elems[:0]
			err = s.arrayOfObjects("gaps", func(i int) error { return s.gap(i) })
			a.end = s.pos
		case string(name) == "proof_level_breakdown" || string(name) == "provable_surface_breakdown":
			// Keyed by proof level: at most one member per level.
			if s.pos < len(s.d) && s.d[s.pos] == '{' {
				members := 0
				s.object(func([]byte, bool) bool { members++; s.skip(); return true })
				if members > len(proofLevels) && !s.bad {
					err = s.fail(string(name), "has %d members; there are %d proof levels", members, len(proofLevels))
				}
				break
			}
			s.skip()
		default:
			s.skip()
		}
		return err == nil
	})
	return err
}

// shapeScanner walks JSON text without building anything.
type shapeScanner struct {
	d     []byte
	pos   int
	depth int
	bad   bool // text it cannot follow: stop and let the parser report
	count int  // values skipped since the counter was reset
	// With collect, where the records and gaps arrays are and where each
	// of their elements starts and ends.
	collect bool
	arrays  [2]arrayPart // records, gaps
	scratch []byte
}

// arrayPart is where an array of objects lies in a document.
type arrayPart struct {
	name       string
	start, end int      // the array, '[' to after ']'; start -1: absent
	elems      []uint32 // each element's start and end offsets
}

func (s *shapeScanner) fail(field, format string, a ...any) error {
	return fmt.Errorf("%w: %w: %s %s (at byte %d)", document.ErrSchema, ErrShape, field, fmt.Sprintf(format, a...), s.pos)
}

func quoteName(name []byte) string {
	if len(name) > 64 {
		return fmt.Sprintf("%q…", name[:64])
	}
	return fmt.Sprintf("%q", name)
}

func (s *shapeScanner) ws() {
	for s.pos < len(s.d) {
		switch s.d[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// kindAt names the JSON type of the value at pos.
func (s *shapeScanner) kindAt() string {
	if s.pos >= len(s.d) {
		return "nothing"
	}
	switch c := s.d[s.pos]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || '0' <= c && c <= '9':
		return "number"
	}
	return "value"
}

// str moves past the string at pos and returns its raw content and
// whether it holds no escapes.
func (s *shapeScanner) str() ([]byte, bool) {
	if s.pos >= len(s.d) || s.d[s.pos] != '"' {
		s.bad = true
		return nil, false
	}
	start := s.pos + 1
	plain := true
	for i := start; i < len(s.d); i++ {
		switch s.d[i] {
		case '\\':
			plain = false
			i++
		case '"':
			s.pos = i + 1
			return s.d[start:i], plain
		}
	}
	s.bad = true
	s.pos = len(s.d)
	return nil, false
}

// skip moves past one value, counting the values in it.
func (s *shapeScanner) skip() {
	s.ws()
	if s.pos >= len(s.d) {
		s.bad = true
		return
	}
	s.count++
	switch c := s.d[s.pos]; c {
	case '"':
		s.str()
	case '{':
		s.object(func([]byte, bool) bool { s.skip(); return true })
	case '[':
		s.array(func(int) bool { s.skip(); return true })
	default:
		for s.pos < len(s.d) {
			switch s.d[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			s.pos++
		}
	}
}

// object walks the object at pos, calling member for each member with the
// value next; member must move past the value and may stop the walk.
func (s *shapeScanner) object(member func(name []byte, plain bool) bool) {
	if !s.enter() {
		return
	}
	defer func() { s.depth-- }()
	s.pos++ // '{'
	s.ws()
	if s.pos < len(s.d) && s.d[s.pos] == '}' {
		s.pos++
		return
	}
	for !s.bad {
		s.ws()
		name, plain := s.str()
		s.ws()
		if s.bad || s.pos >= len(s.d) || s.d[s.pos] != ':' {
			s.bad = true
			return
		}
		s.pos++
		s.ws()
		if !member(name, plain) || s.bad {
			return
		}
		if !s.sep('}') {
			return
		}
	}
}

// array walks the array at pos, calling elem with the value next.
func (s *shapeScanner) array(elem func(i int) bool) {
	if !s.enter() {
		return
	}
	defer func() { s.depth-- }()
	s.pos++ // '['
	s.ws()
	if s.pos < len(s.d) && s.d[s.pos] == ']' {
		s.pos++
		return
	}
	for i := 0; !s.bad; i++ {
		s.ws()
		if !elem(i) || s.bad {
			return
		}
		if !s.sep(']') {
			return
		}
	}
}

// sep moves past a ',' (true: another item follows) or the closing byte.
func (s *shapeScanner) sep(closing byte) bool {
	s.ws()
	if s.pos >= len(s.d) {
		s.bad = true
		return false
	}
	switch s.d[s.pos] {
	case ',':
		s.pos++
		return true
	case closing:
		s.pos++
		return false
	}
	s.bad = true
	return false
}

func (s *shapeScanner) enter() bool {
	s.depth++
	if s.depth > document.MaxDepth {
		s.bad = true // the parser reports the depth
		return false
	}
	return true
}

// arrayOfObjects walks the array member field, requiring each element to
// be an object checked by each.
func (s *shapeScanner) arrayOfObjects(field string, each func(i int) error) error {
	if s.pos >= len(s.d) || s.d[s.pos] != '[' {
		if s.pos < len(s.d) && s.d[s.pos] == 'n' {
			return s.fail(field, "is null, want an array (use [] when empty)")
		}
		return s.fail(field, "is a JSON %s, want an array of objects", s.kindAt())
	}
	var err error
	s.array(func(i int) bool {
		if s.pos >= len(s.d) || s.d[s.pos] != '{' {
			if !s.bad && s.pos < len(s.d) {
				err = s.fail(fmt.Sprintf("%s[%d]", field, i), "is a JSON %s, want an object", s.kindAt())
			}
			return false
		}
		start := s.pos
		err = each(i)
		if s.collect {
			a := &s.arrays[0]
			if field == "gaps" {
				a = &s.arrays[1]
			}
			a.elems = append(a.elems, uint32(start), uint32(s.pos))
		}
		return err == nil
	})
	return err
}

func (s *shapeScanner) record(i int) error {
	var err error
	members := 0
	s.object(func(name []byte, plain bool) bool {
		members++
		switch {
		case !plain:
			err = s.fail(fmt.Sprintf("records[%d].%s", i, quoteName(name)), "is a member name written with escapes; write it plainly")
		case !recordMembers[string(name)]:
			err = s.fail(fmt.Sprintf("records[%d].%s", i, quoteName(name)), "is not a member of a v1 record")
		case recordObjects[string(name)]:
			if s.pos < len(s.d) && s.d[s.pos] == 'n' {
				err = s.fail(fmt.Sprintf("records[%d].%s:", i, name), "is null; omit the member instead")
				break
			}
			if s.pos >= len(s.d) || s.d[s.pos] != '{' {
				err = s.fail(fmt.Sprintf("records[%d].%s", i, name), "is a JSON %s, want an object", s.kindAt())
				break
			}
			if string(name) == "details" {
				s.count = 0
				s.skip()
				if s.count > maxDetailsValues && !s.bad {
					err = s.fail(fmt.Sprintf("records[%d].details", i), "holds %d JSON values: more than %d bytes in canonical form", s.count, MaxDetailsBytes)
				}
				break
			}
			n := 0
			s.object(func([]byte, bool) bool { n++; s.skip(); return true })
			if want := minMembers[string(name)]; n < want && !s.bad {
				err = s.fail(fmt.Sprintf("records[%d].%s", i, name), "has %d members; a %s block has at least %d", n, name, want)
			}
		case string(name) == "disclosures":
			// Decoded, disclosed values cost more than written: bound
			// them as details are.
			s.count = 0
			s.skip()
			if s.count > maxDisclosureValues && !s.bad {
				err = s.fail(fmt.Sprintf("records[%d].disclosures", i), "holds %d JSON values: more than %d bytes in canonical form", s.count, disclosure.MaxDisclosureBytes)
			}
		default:
			s.skip()
		}
		return err == nil
	})
	if err == nil && !s.bad && members < minMembers["records"] {
		err = s.fail(fmt.Sprintf("records[%d]", i), "has %d members; a v1 record has at least %d", members, minMembers["records"])
	}
	return err
}

func (s *shapeScanner) gap(i int) error {
	var err error
	members := 0
	s.object(func(name []byte, plain bool) bool {
		members++
		if !plain {
			err = s.fail(fmt.Sprintf("gaps[%d].%s", i, quoteName(name)), "is a member name written with escapes; write it plainly")
			return false
		}
		if !gapMembers[string(name)] {
			err = s.fail(fmt.Sprintf("gaps[%d].%s", i, quoteName(name)), "is not a member of a v1 gap")
			return false
		}
		s.skip()
		return true
	})
	if err == nil && !s.bad && members < minMembers["gaps"] {
		err = s.fail(fmt.Sprintf("gaps[%d]", i), "has %d members; a v1 gap has at least %d", members, minMembers["gaps"])
	}
	return err
}

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
// A document the scan could not follow is read as one tree (its parse
// error is then reported exactly).
func (p *parsed) read(doc []byte, bad func(string, ...any)) bool {
	s := shapeScanner{d: doc, collect: true, arrays: [2]arrayPart{{name: "records", start: -1}, {name: "gaps", start: -1}}}
	if err := s.scan(); err != nil {
		bad("%s", strings.TrimPrefix(err.Error(), "schema: "))
		return false
	}
	if s.bad || s.arrays[0].start < 0 {
		return p.readWhole(doc, bad)
	}
	var errs []string
	if err := p.readParts(doc, &s, &errs); err != nil {
		p.v, p.signedJCS, p.recordJCS = VPEC{}, nil, nil
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

func addErrors(errs *[]string, err error) {
	for _, e := range strings.Split(err.Error(), "\n") {
		switch {
		case len(*errs) < maxReported:
			*errs = append(*errs, strings.TrimPrefix(e, "schema: "))
		case len(*errs) == maxReported:
			*errs = append(*errs, "… and more problems")
		}
	}
}

var errWhole = errors.New("read the whole document")

// readParts is read in parts (see read). It returns the parse error of
// the document, if any; schema problems are added to errs.
func (p *parsed) readParts(doc []byte, s *shapeScanner, errs *[]string) error {
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
	if err := document.DecodeWith(top, &p.v, document.Options{SkipFreeMaps: true, CanonicalNumbers: true}); err != nil {
		addErrors(errs, err)
	}
	ps := canonical.Parser{MaxDepth: document.MaxDepth - 2} // elements are at depth 3
	var perr error
	// each parses element i of a and writes it, calling use on its tree.
	each := func(dst []byte, a *arrayPart, use func(i int, v *canonical.Value)) []byte {
		dst = append(dst, '[')
		for i := range len(a.elems) / 2 {
			if len(*errs) > maxReported || perr != nil {
				break
			}
			v, err := ps.Parse(doc[a.elems[2*i]:a.elems[2*i+1]])
			if err != nil {
				perr = document.SyntaxErrorAt(doc, int(a.elems[2*i]), err)
				break
			}
			if a.name == "records" {
				s.scratch = checkDetails(v, i, s.scratch, errs)
				checkDisclosureNumbers(v, i, errs)
			}
			if len(*errs) == 0 {
				// The encodings are needed only for a document without
				// schema problems (their checks do not run otherwise).
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = v.AppendCanonical(dst)
			}
			use(i, v)
		}
		return append(dst, ']')
	}
	recs := &s.arrays[0]
	n := len(recs.elems) / 2
	records := make([]Record, n)
	p.recordJCS = make([][]byte, n)
	chainBuf := make([]byte, 0, recs.end-recs.start)
	replace := map[string]func([]byte) []byte{
		"records": func(dst []byte) []byte {
			return each(dst, recs, func(i int, v *canonical.Value) {
				if len(*errs) == 0 {
					start := len(chainBuf)
					chainBuf = v.AppendCanonical(chainBuf, "chain_hash")
					p.recordJCS[i] = chainBuf[start:len(chainBuf):len(chainBuf)]
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
			return each(dst, g, func(i int, v *canonical.Value) {
				if err := document.DecodeWith(v, &gaps[i], document.Options{Path: "gaps", Indexed: true, Index: i, CanonicalNumbers: true}); err != nil {
					addErrors(errs, err)
				}
			})
		}
	}
	p.signedJCS = top.AppendCanonicalReplacing(make([]byte, 0, len(doc)), replace, unsignedFields...)
	if perr != nil {
		return perr
	}
	p.v.Records = records
	if gaps != nil {
		p.v.Gaps = gaps
	}
	return nil
}

// readWhole reads doc as one tree.
func (p *parsed) readWhole(doc []byte, bad func(string, ...any)) bool {
	tree, err := document.ParseTree(doc)
	if err != nil {
		bad("%v", err)
		return false
	}
	p.encode(tree)
	var errs []string
	if err := document.DecodeWith(tree, &p.v, document.Options{SkipFreeMaps: true, CanonicalNumbers: true}); err != nil {
		addErrors(&errs, err)
	}
	if recs := tree.Get("records"); recs != nil {
		var scratch []byte
		for i, rec := range recs.Elements() {
			if i < len(p.v.Records) {
				p.v.Records[i].Details = linkDetails(rec)
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
