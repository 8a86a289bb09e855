package vpec

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/svc-gov/svc/pkg/document"
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

var (
	vpecMembers   = jsonNames(reflect.TypeFor[VPEC]())
	recordMembers = jsonNames(reflect.TypeFor[Record]())
	gapMembers    = jsonNames(reflect.TypeFor[Gap]())
	// Record members whose value is an object.
	recordObjects = map[string]bool{"details": true, "review": true, "check_session": true, "bounded_inference": true}
)

// CheckShape is the cheap first look at an untrusted document: one pass
// over the bytes, allocating nothing unless it fails, that refuses what
// cannot be a v1 VPEC before the expensive parse: a top level that is not
// an object, a top-level member v1 does not define, records or gaps that
// are not arrays of objects, a record member v1 does not define, a
// details, review, check_session or bounded_inference that is not an
// object, a record's details holding more values than MaxDetailsBytes
// allows, or nesting deeper than document.MaxDepth. It does not judge JSON
// syntax: text it cannot follow is left for the parser to report, so nil
// means "not refused by shape", not "valid". Errors match ErrShape and
// document.ErrSchema and name the member and byte offset.
func CheckShape(doc []byte) error {
	s := shapeScanner{d: doc}
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
			s.skip() // an escaped name: the decoder judges it
		case !vpecMembers[string(name)]:
			err = s.fail(quoteName(name), "is not a member of a v1 VPEC")
		case string(name) == "records":
			err = s.arrayOfObjects("records", func(i int) error { return s.record(i) })
		case string(name) == "gaps":
			err = s.arrayOfObjects("gaps", func(i int) error { return s.gap(i) })
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
		err = each(i)
		return err == nil
	})
	return err
}

func (s *shapeScanner) record(i int) error {
	var err error
	s.object(func(name []byte, plain bool) bool {
		switch {
		case !plain:
			s.skip()
		case !recordMembers[string(name)]:
			err = s.fail(fmt.Sprintf("records[%d].%s", i, quoteName(name)), "is not a member of a v1 record")
		case recordObjects[string(name)]:
			if s.pos >= len(s.d) || s.d[s.pos] != '{' {
				err = s.fail(fmt.Sprintf("records[%d].%s", i, name), "is a JSON %s, want an object", s.kindAt())
				break
			}
			s.count = 0
			s.skip()
			if string(name) == "details" && s.count > maxDetailsValues && !s.bad {
				err = s.fail(fmt.Sprintf("records[%d].details", i), "holds %d JSON values: more than %d bytes in canonical form", s.count, MaxDetailsBytes)
			}
		default:
			s.skip()
		}
		return err == nil
	})
	return err
}

func (s *shapeScanner) gap(i int) error {
	var err error
	s.object(func(name []byte, plain bool) bool {
		if plain && !gapMembers[string(name)] {
			err = s.fail(fmt.Sprintf("gaps[%d].%s", i, quoteName(name)), "is not a member of a v1 gap")
			return false
		}
		s.skip()
		return true
	})
	return err
}
