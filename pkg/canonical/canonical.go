// Package canonical implements the JSON Canonicalization Scheme (JCS) of
// RFC 8785.
//
// [Transform] parses a JSON text with a strict, byte-level parser and writes
// its canonical form: no insignificant whitespace, object members sorted by
// the UTF-16 code units of their names, strings escaped minimally, and
// numbers serialised as ECMAScript's Number.prototype.toString does. Input
// that is not I-JSON (RFC 7493) is rejected: invalid JSON or UTF-8, unpaired
// surrogates, duplicate member names, numbers that do not fit a finite
// IEEE-754 double, and nesting deeper than [MaxDepth].
//
// Errors are of type [*Error], carry the byte offset of the problem and wrap
// one of the sentinel errors, so they can be matched with errors.Is.
package canonical

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the maximum nesting depth of arrays and objects accepted. A
// top-level array or object has depth 1.
const MaxDepth = 1000

var (
	// ErrInvalidJSON reports input that is not a single valid JSON text in
	// UTF-8 (including unpaired surrogates and trailing data).
	ErrInvalidJSON = errors.New("canonical: invalid JSON")
	// ErrDuplicateKey reports an object with two members of the same name
	// (after unescaping).
	ErrDuplicateKey = errors.New("canonical: duplicate key")
	// ErrNumber reports a number that is not a finite IEEE-754 double, such
	// as 1e400.
	ErrNumber = errors.New("canonical: number out of range")
	// ErrDepth reports nesting deeper than MaxDepth.
	ErrDepth = errors.New("canonical: nesting too deep")
)

// Error describes a rejected input. It wraps one of ErrInvalidJSON,
// ErrDuplicateKey, ErrNumber or ErrDepth.
type Error struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Msg describes the problem.
	Msg string
	// Err is the sentinel error for the class of problem.
	Err error
}

// Error returns "canonical: <msg> at offset <n>".
func (e *Error) Error() string {
	return fmt.Sprintf("canonical: %s at offset %d", e.Msg, e.Offset)
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

// Transform returns the RFC 8785 canonical form of the JSON text data.
// Leading and trailing whitespace is allowed; anything else after the value
// is rejected. On error the result is nil and the error is an [*Error].
func Transform(data []byte) ([]byte, error) {
	p := parser{data: data}
	v, err := p.parseText()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(data))
	return appendValue(out, &v), nil
}

// Marshal encodes v with encoding/json (HTML escaping disabled) and returns
// its canonical form. Encoding errors are wrapped with "canonical: marshal";
// canonicalization errors are returned as from [Transform] (e.g. a
// json.RawMessage with a duplicate key gives [ErrDuplicateKey]).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical: marshal: %w", err)
	}
	return Transform(buf.Bytes())
}

// CheckStrict applies the same rules as [Transform] without producing
// output. Use it before decoding untrusted documents into structs, since
// encoding/json silently accepts duplicate keys and invalid UTF-8.
func CheckStrict(data []byte) error {
	p := parser{data: data}
	_, err := p.parseText()
	return err
}

// kind is the type of a parsed JSON value.
type kind uint8

const (
	kindLiteral kind = iota // text holds "null", "true" or "false"
	kindNumber              // text holds the canonical number
	kindString              // text holds the decoded (unescaped) string
	kindArray
	kindObject
)

// Value is a parsed JSON value: I-JSON checked, strings decoded, numbers in
// their canonical form and object members in canonical (UTF-16) order.
type Value struct {
	kind    kind
	text    []byte   // may alias the input
	elems   []Value  // kindArray
	members []member // kindObject
}

// member is an object member.
type member struct {
	name   []byte // decoded name; may alias the input
	offset int    // offset of the name's opening quote
	val    Value
}

// parser is a recursive-descent JSON parser over a byte slice.
type parser struct {
	data  []byte
	pos   int
	depth int
	// Scratch stacks for the children of the arrays and objects being
	// parsed; each container copies its children out when it closes, which
	// avoids growing one slice per container.
	elems   []Value
	members []member
}

func (p *parser) fail(off int, sentinel error, format string, args ...any) error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func (p *parser) syntax(off int, format string, args ...any) error {
	return p.fail(off, ErrInvalidJSON, format, args...)
}

// parseText parses a whole JSON text: one value with optional surrounding
// whitespace.
func (p *parser) parseText() (Value, error) {
	p.skipSpace()
	v, err := p.parseValue()
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return Value{}, p.syntax(p.pos, "unexpected %s after top-level value", p.describe(p.pos))
	}
	return v, nil
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// describe names the byte at off for error messages.
func (p *parser) describe(off int) string {
	if off >= len(p.data) {
		return "end of input"
	}
	c := p.data[off]
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return fmt.Sprintf("character %q", c)
}

func (p *parser) parseValue() (Value, error) {
	if p.pos >= len(p.data) {
		return Value{}, p.syntax(p.pos, "unexpected end of input, expected a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.parseObject()
	case c == '[':
		return p.parseArray()
	case c == '"':
		s, err := p.parseString()
		return Value{kind: kindString, text: s}, err
	case c == '-' || ('0' <= c && c <= '9'):
		return p.parseNumber()
	case c == 't':
		return p.parseLiteral("true")
	case c == 'f':
		return p.parseLiteral("false")
	case c == 'n':
		return p.parseLiteral("null")
	default:
		return Value{}, p.syntax(p.pos, "unexpected %s, expected a value", p.describe(p.pos))
	}
}

func (p *parser) parseLiteral(lit string) (Value, error) {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
		return Value{}, p.syntax(p.pos, "invalid literal, expected %q", lit)
	}
	v := Value{kind: kindLiteral, text: p.data[p.pos : p.pos+len(lit)]}
	p.pos += len(lit)
	return v, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.fail(p.pos, ErrDepth, "nesting deeper than %d", MaxDepth)
	}
	return nil
}

func (p *parser) parseArray() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.pos++ // '['
	v := Value{kind: kindArray}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return v, nil
	}
	base := len(p.elems)
	for {
		p.skipSpace()
		elem, err := p.parseValue()
		if err != nil {
			return Value{}, err
		}
		p.elems = append(p.elems, elem)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return Value{}, p.syntax(p.pos, "unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			v.elems = slices.Clone(p.elems[base:])
			clear(p.elems[base:])
			p.elems = p.elems[:base]
			return v, nil
		default:
			return Value{}, p.syntax(p.pos, "unexpected %s in array, expected ',' or ']'", p.describe(p.pos))
		}
	}
}

func (p *parser) parseObject() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.pos++ // '{'
	v := Value{kind: kindObject}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return v, nil
	}
	base := len(p.members)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return Value{}, p.syntax(p.pos, "unexpected %s in object, expected a string key", p.describe(p.pos))
		}
		off := p.pos
		name, err := p.parseString()
		if err != nil {
			return Value{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return Value{}, p.syntax(p.pos, "unexpected %s after object key, expected ':'", p.describe(p.pos))
		}
		p.pos++
		p.skipSpace()
		val, err := p.parseValue()
		if err != nil {
			return Value{}, err
		}
		p.members = append(p.members, member{name: name, offset: off, val: val})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return Value{}, p.syntax(p.pos, "unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			v.members = slices.Clone(p.members[base:])
			clear(p.members[base:])
			p.members = p.members[:base]
			if err := p.sortMembers(v.members); err != nil {
				return Value{}, err
			}
			return v, nil
		default:
			return Value{}, p.syntax(p.pos, "unexpected %s in object, expected ',' or '}'", p.describe(p.pos))
		}
	}
}

// sortMembers sorts members by name in UTF-16 code unit order and rejects
// duplicate names, reporting the later occurrence.
func (p *parser) sortMembers(ms []member) error {
	if len(ms) < 2 {
		return nil
	}
	cmp := func(a, b member) int { return compareUTF16(a.name, b.name) }
	if !slices.IsSortedFunc(ms, cmp) {
		slices.SortFunc(ms, cmp)
	}
	for i := 1; i < len(ms); i++ {
		if bytes.Equal(ms[i-1].name, ms[i].name) {
			dup := max(ms[i-1].offset, ms[i].offset)
			return p.fail(dup, ErrDuplicateKey, "duplicate key %s", quoteShort(string(ms[i].name)))
		}
	}
	return nil
}

// compareUTF16 compares two valid UTF-8 strings by their UTF-16 code units.
// UTF-8 byte order equals code point order, which differs from UTF-16 order
// only between a supplementary character (encoded as surrogates
// 0xD800-0xDFFF) and a BMP character in 0xE000-0xFFFF.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	// Back up to the start of the differing code point.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return int(utf16Key(ra)) - int(utf16Key(rb))
}

// utf16Key maps a code point to a value whose order is the order of its
// first UTF-16 code unit, refined by code point. Supplementary characters
// sort between 0xD7FF and 0xE000.
func utf16Key(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r - 0x10000) // within [0xD800, 0xD800+0x100000)
	}
	if r >= 0xE000 {
		return r + 0x100000 // above all supplementary characters
	}
	return r
}

// parseString parses a JSON string starting at the opening quote and returns
// its decoded value, which aliases the input when there are no escapes.
func (p *parser) parseString() ([]byte, error) {
	start := p.pos
	p.pos++ // opening quote
	// Fast path: no escapes.
	i := p.pos
	for i < len(p.data) {
		c := p.data[i]
		if c == '"' {
			s := p.data[p.pos:i]
			if !utf8.Valid(s) {
				return nil, p.syntax(p.pos+invalidUTF8Offset(s), "invalid UTF-8 in string")
			}
			p.pos = i + 1
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		i++
	}
	// Slow path: decode escapes.
	buf := make([]byte, 0, i-p.pos+16)
	buf = append(buf, p.data[p.pos:i]...)
	if !utf8.Valid(buf) {
		return nil, p.syntax(p.pos+invalidUTF8Offset(buf), "invalid UTF-8 in string")
	}
	p.pos = i
	for {
		if p.pos >= len(p.data) {
			return nil, p.syntax(start, "unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return buf, nil
		case c < 0x20:
			return nil, p.syntax(p.pos, "unescaped control character 0x%02x in string", c)
		case c == '\\':
			var err error
			if buf, err = p.parseEscape(buf); err != nil {
				return nil, err
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, p.syntax(p.pos, "invalid UTF-8 in string")
			}
			buf = append(buf, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

// invalidUTF8Offset returns the offset of the first invalid UTF-8 sequence
// in s.
func invalidUTF8Offset(s []byte) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(s)
}

// parseEscape decodes the escape sequence at p.pos (a backslash) and appends
// its UTF-8 encoding to buf.
func (p *parser) parseEscape(buf []byte) ([]byte, error) {
	start := p.pos
	if p.pos+1 >= len(p.data) {
		return nil, p.syntax(start, "unterminated escape sequence")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
	default:
		return nil, p.syntax(start, "invalid escape sequence \\%s", printable(c))
	}
	r, ok := p.hex4()
	if !ok {
		return nil, p.syntax(start, "invalid \\u escape")
	}
	if utf16.IsSurrogate(r) {
		if r >= 0xDC00 {
			return nil, p.syntax(start, "unpaired low surrogate \\u%04x", r)
		}
		// A high surrogate must be followed by an escaped low surrogate.
		if p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
			return nil, p.syntax(start, "unpaired high surrogate \\u%04x", r)
		}
		p.pos += 2
		r2, ok := p.hex4()
		if !ok {
			return nil, p.syntax(p.pos-2, "invalid \\u escape")
		}
		if r2 < 0xDC00 || r2 > 0xDFFF {
			return nil, p.syntax(start, "unpaired high surrogate \\u%04x", r)
		}
		r = utf16.DecodeRune(r, r2)
	}
	return utf8.AppendRune(buf, r), nil
}

// hex4 reads four hex digits at p.pos.
func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	p.pos += 4
	return r, true
}

// parseNumber parses a number per the RFC 8259 grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and returns its canonical
// form.
func (p *parser) parseNumber() (Value, error) {
	start := p.pos
	d := p.data
	i := p.pos
	if d[i] == '-' {
		i++
	}
	simple := true // integer without fraction or exponent
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		return Value{}, p.syntax(i, "invalid number: expected digit")
	}
	if i < len(d) && d[i] == '.' {
		simple = false
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return Value{}, p.syntax(i, "invalid number: expected digit after decimal point")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		simple = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return Value{}, p.syntax(i, "invalid number: expected digit in exponent")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	p.pos = i
	raw := d[start:i]
	// Integers of up to 15 digits are exact doubles and already canonical,
	// except negative zero.
	if simple && len(raw) <= 15 {
		if string(raw) == "-0" {
			return Value{kind: kindNumber, text: raw[1:]}, nil
		}
		return Value{kind: kindNumber, text: raw}, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return Value{}, p.fail(start, ErrNumber, "number %s is not a finite IEEE-754 double", quoteShort(string(raw)))
	}
	return Value{kind: kindNumber, text: AppendNumber(nil, f)}, nil
}

// AppendNumber appends the ECMAScript (ES6 Number.prototype.toString)
// serialisation of the finite double f to dst, as RFC 8785 requires. Negative
// zero is written as "0". NaN and infinities, which have no JSON form, are
// written as "null"; callers must reject them first.
func AppendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-trip digits: "d.ddddde±XX".
	var scratch [32]byte
	s := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64)
	e := bytes.IndexByte(s, 'e')
	exp, _ := strconv.Atoi(string(s[e+1:]))
	var digits [24]byte
	k := 0
	for _, c := range s[:e] {
		if c != '.' {
			digits[k] = c
			k++
		}
	}
	ds := digits[:k]
	n := exp + 1 // the value is 0.ds × 10^n
	switch {
	case k <= n && n <= 21:
		dst = append(dst, ds...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, ds[:n]...)
		dst = append(dst, '.')
		dst = append(dst, ds[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, ds...)
	default:
		dst = append(dst, ds[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, ds[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// appendValue appends the canonical serialisation of v.
func appendValue(dst []byte, v *Value) []byte {
	switch v.kind {
	case kindLiteral, kindNumber:
		return append(dst, v.text...)
	case kindString:
		return appendString(dst, v.text)
	case kindArray:
		dst = append(dst, '[')
		for i := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, &v.elems[i])
		}
		return append(dst, ']')
	default: // kindObject
		dst = append(dst, '{')
		for i := range v.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, v.members[i].name)
			dst = append(dst, ':')
			dst = appendValue(dst, &v.members[i].val)
		}
		return append(dst, '}')
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string escaped per RFC 8785: only '"',
// '\\' and control characters are escaped, using the short forms where they
// exist and \u00xx (lowercase hex) otherwise.
// AppendString appends the RFC 8785 form of a string. It reports false,
// appending nothing, when s is not valid UTF-8 (which JCS cannot encode).
func AppendString(dst []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) {
		return dst, false
	}
	return appendString(dst, []byte(s)), true
}

func appendString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// quoteShort quotes s for an error message, truncating long values.
func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}

// printable renders a byte for an error message.
func printable(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("<0x%02x>", c)
	}
	return string(c)
}
