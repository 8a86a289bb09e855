package vpec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/document"
)

// The shape scan is the cheap first look at an untrusted VPEC, the third
// layer of reading untrusted JSON (pkg/core/document's doc comment says
// which layer does what): one pass over the bytes, allocating nothing
// unless it fails, before anything is parsed.

// errShape reports a JSON document whose shape cannot be a v1 VPEC (the
// top level is not an object, a member v1 does not define, records or gaps
// not an array of objects, ...). It matches document.ErrSchema.
var errShape = errors.New("not a VPEC")

// shapeError is a refusal of the shape scan: the member at path (as the
// scan names it: "records[2].\"x\"", "gaps") cannot be in a v1 VPEC.
type shapeError struct {
	path, msg string
	offset    int
}

// Error returns "schema: " followed by detail.
func (e *shapeError) Error() string { return "schema: " + e.detail() }

// detail is the problem as the schema check lists it.
func (e *shapeError) detail() string {
	return fmt.Sprintf("%s: %s %s (at byte %d)", errShape, e.path, e.msg, e.offset)
}

// Unwrap returns document.ErrSchema and errShape.
func (e *shapeError) Unwrap() []error { return []error{document.ErrSchema, errShape} }

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
	vpecMembers = jsonNames(reflect.TypeFor[VPEC]())
	gapMembers  = jsonNames(reflect.TypeFor[Gap]())
	// recordMembers classes each member of a v1 record (one lookup a
	// member): those whose value is an object, disclosures, the rest.
	recordMembers = func() memberTable {
		m := map[string]memberClass{}
		for name := range jsonNames(reflect.TypeFor[Record]()) {
			m[name] = plainMember
		}
		for _, name := range []string{"details", "review", "check_session", "bounded_inference", "zk_proof"} {
			m[name] = objectMember
		}
		m["disclosures"] = disclosuresMember
		return newMemberTable(m)
	}()
)

// memberTable classes member names: those of each length, few, are
// compared one by one (cheaper than hashing for names this short).
type memberTable [][]struct {
	name  string
	class memberClass
}

func newMemberTable(m map[string]memberClass) memberTable {
	var t memberTable
	for name, c := range m {
		for len(t) <= len(name) {
			t = append(t, nil)
		}
		t[len(name)] = append(t[len(name)], struct {
			name  string
			class memberClass
		}{name, c})
	}
	return t
}

// class is name's class, unknownMember when the table does not hold it.
func (t memberTable) class(name []byte) memberClass {
	if len(name) >= len(t) {
		return unknownMember
	}
	for _, e := range t[len(name)] {
		if e.name == string(name) {
			return e.class
		}
	}
	return unknownMember
}

// memberClass is how the shape scan looks at a record member's value.
type memberClass uint8

const (
	unknownMember     memberClass = iota // not a v1 record member
	plainMember                          // skipped
	objectMember                         // an object: details, or evidence with required members
	disclosuresMember                    // bounded as details are
)

// checkShape is the cheap first look at an untrusted document: one pass
// over the bytes, allocating nothing unless it fails, that refuses what
// cannot be a v1 VPEC before the expensive parse: a top level that is not
// an object, a top-level member v1 does not define, records or gaps that
// are not arrays of objects, a record member v1 does not define, a
// details, review, check_session or bounded_inference that is not an
// object, a record's details holding more values than MaxDetailsBytes
// allows, a proof level breakdown with more members than there are proof
// levels, or nesting deeper than document.MaxDepth. It does not judge JSON
// syntax: text it cannot follow is left for the parser to report, so nil
// means "not refused by shape", not "valid". Errors are *shapeError,
// matching errShape and document.ErrSchema, naming the member and byte
// offset.
//
// The member names of the top level, of records and of gaps must be
// written plainly, without escapes: "\u0072ecords" is the same member in
// canonical form, so accepting it would accept byte-different copies of
// one signed document.
func checkShape(doc []byte) error {
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
	// aheadMin is the records array size from which its second half is
	// scanned beside (recordsAhead): 0 aheadMinimum, below 0 never (tests).
	aheadMin int
	joined   bool // a scan ahead's result was taken (tests)
}

// arrayPart is where an array of objects lies in a document.
type arrayPart struct {
	name       string
	start, end int      // the array, '[' to after ']'; start -1: absent
	elems      []uint32 // each element's start and end offsets
}

func (s *shapeScanner) fail(field, format string, a ...any) error {
	return &shapeError{path: field, msg: fmt.Sprintf(format, a...), offset: s.pos}
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
	d := s.d
	if s.pos >= len(d) || d[s.pos] != '"' {
		s.bad = true
		return nil, false
	}
	start := s.pos + 1
	// Most strings hold no backslash: then the first quote ends them.
	if q := bytes.IndexByte(d[start:], '"'); q >= 0 && bytes.IndexByte(d[start:start+q], '\\') < 0 {
		s.pos = start + q + 1
		return d[start : start+q], true
	}
	plain := true
	for i := start; i < len(d); i++ {
		switch d[i] {
		case '\\':
			plain = false
			i++
		case '"':
			s.pos = i + 1
			return d[start:i], plain
		}
	}
	s.bad = true
	s.pos = len(d)
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
	var ahead *recordsAhead // the second half of a large records array, scanned beside
	s.array(func(i int) bool {
		if i == 0 && s.collect && field == "records" {
			ahead = startRecordsAhead(s.d, s.pos, s.depth, s.aheadMin)
		}
		if ahead != nil && s.pos >= ahead.at {
			if s.pos == ahead.at && ahead.join() {
				s.arrays[0].elems = append(s.arrays[0].elems, ahead.elems...)
				s.pos, ahead, s.joined = ahead.end, nil, true
				return true // the array's ']' is next
			}
			ahead.cancel() // not an element start, or a problem there: scan it here
			ahead = nil
		}
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
	if ahead != nil {
		ahead.cancel() // the array ended (or the scan stopped) before the guess
	}
	return err
}

func (s *shapeScanner) record(i int) error {
	var err error
	members := 0
	s.object(func(name []byte, plain bool) bool {
		members++
		class := recordMembers.class(name)
		switch {
		case !plain:
			err = s.fail(fmt.Sprintf("records[%d].%s", i, quoteName(name)), "is a member name written with escapes; write it plainly")
		case class == unknownMember:
			err = s.fail(fmt.Sprintf("records[%d].%s", i, quoteName(name)), "is not a member of a v1 record")
		case class == objectMember:
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
		case class == disclosuresMember:
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
