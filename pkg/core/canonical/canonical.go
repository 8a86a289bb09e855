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
// top-level array or object has depth 1; each array or object inside
// another adds one; scalars add nothing.
const MaxDepth = 1000

// MaxInput is the largest input the parser accepts (256 MiB): offsets in
// the compact parse tree are 28 bits.
const MaxInput = 1 << 28

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
	// ErrTooLarge reports an input larger than MaxInput.
	ErrTooLarge = errors.New("canonical: input too large")
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
	v, err := ParseDepth(data, MaxDepth)
	if err != nil {
		return nil, err
	}
	return v.AppendCanonical(make([]byte, 0, len(data))), nil
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
	p := parser{data: data, maxDepth: MaxDepth}
	return p.parseText()
}

// Node kinds of the compact parse tree (4 bits).
const (
	nNull   = iota
	nTrue   // true
	nFalse  // false
	nNum    // a number whose text is already canonical
	nNumX   // a number that must be reformatted (fraction, exponent, -0, long)
	nStr    // a string without escapes: its content is the raw bytes
	nStrEsc // a string with escapes
	nArr
	nObj
)

const (
	offBits = 28
	offMask = 1<<offBits - 1
)

// node is one JSON value (or object member name) of the compact tree, in
// document order (preorder): 8 bytes per value, whatever its type. An
// object's children are its members' name and value nodes, alternating.
type node struct {
	a uint32 // kind<<28 | byte offset of the value's first byte
	b uint32 // scalars: offset one past the token; containers: index one past the subtree
}

func (n node) kind() uint32 { return n.a >> offBits }
func (n node) off() uint32  { return n.a & offMask }

// tree is a parsed JSON text: the input (aliased) and its nodes.
type tree struct {
	data  []byte
	nodes []node
}

// next returns the index of the node after the subtree at i.
func (t *tree) next(i uint32) uint32 {
	if n := t.nodes[i]; n.kind() >= nArr {
		return n.b
	}
	return i + 1
}

// nameRef is an object member name during the duplicate check.
type nameRef struct {
	name []byte // decoded
	off  int    // offset of the opening quote
}

// parser is a recursive-descent JSON parser over a byte slice that
// validates and, when build is set, records the compact tree.
type parser struct {
	data     []byte
	pos      int
	depth    int
	maxDepth int
	build    bool
	nodes    []node
	// Scratch for the duplicate-key check of the objects being parsed:
	// each object's names are a window of names, escaped names are
	// decoded into arena; both are truncated when the object closes.
	names []nameRef
	arena []byte
}

// countTokens returns an upper bound of the number of nodes data parses
// into (value and member name starts), so the node slice is allocated once.
func countTokens(data []byte) int {
	n := 0
	inString := false
	prevValueByte := false // the previous byte outside strings continues a number or literal
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			n++
			prevValueByte = false
		case c == '{' || c == '[':
			n++
			prevValueByte = false
		case c == '-' || c == '+' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
			if !prevValueByte {
				n++
			}
			prevValueByte = true
		default:
			prevValueByte = false
		}
	}
	return n
}

// ParseDepth is Parse with another nesting limit than MaxDepth.
func ParseDepth(data []byte, maxDepth int) (*Value, error) {
	if len(data) > MaxInput {
		return nil, &Error{Offset: MaxInput, Msg: fmt.Sprintf("input of %d bytes is larger than %d", len(data), MaxInput), Err: ErrTooLarge}
	}
	p := parser{data: data, maxDepth: maxDepth, build: true}
	p.nodes = make([]node, 0, countTokens(data))
	if err := p.parseText(); err != nil {
		return nil, err
	}
	return &Value{t: &tree{data: data, nodes: p.nodes}}, nil
}

// Parser parses many small JSON texts one after the other (the records of
// a large document, say) reusing its buffers, so that the work allocates
// nothing once the buffers have grown to the largest text.
type Parser struct {
	// MaxDepth is the nesting limit (MaxDepth when 0).
	MaxDepth int
	p        parser
	t        tree
	v        Value
}

// Parse parses data under the rules of [Transform]. The result aliases
// data and the parser's buffers: it is valid until the next call.
func (ps *Parser) Parse(data []byte) (*Value, error) {
	depth := ps.MaxDepth
	if depth == 0 {
		depth = MaxDepth
	}
	clear(ps.p.names)
	ps.p = parser{data: data, maxDepth: depth, build: true, nodes: ps.p.nodes[:0], names: ps.p.names[:0], arena: ps.p.arena[:0]}
	if err := ps.p.parseText(); err != nil {
		return nil, err
	}
	ps.t = tree{data: data, nodes: ps.p.nodes}
	ps.v = Value{t: &ps.t}
	return &ps.v, nil
}

func (p *parser) fail(off int, sentinel error, format string, args ...any) error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func (p *parser) syntax(off int, format string, args ...any) error {
	return p.fail(off, ErrInvalidJSON, format, args...)
}

// parseText parses a whole JSON text: one value with optional surrounding
// whitespace.
func (p *parser) parseText() error {
	if len(p.data) > MaxInput {
		return p.fail(MaxInput, ErrTooLarge, "input of %d bytes is larger than %d", len(p.data), MaxInput)
	}
	p.skipSpace()
	if err := p.parseValue(); err != nil {
		return err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return p.syntax(p.pos, "unexpected %s after top-level value", p.describe(p.pos))
	}
	return nil
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

// add appends a scalar node.
func (p *parser) add(kind uint32, start, end int) {
	if p.build {
		p.nodes = append(p.nodes, node{a: kind<<offBits | uint32(start), b: uint32(end)})
	}
}

func (p *parser) parseValue() error {
	if p.pos >= len(p.data) {
		return p.syntax(p.pos, "unexpected end of input, expected a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.parseObject()
	case c == '[':
		return p.parseArray()
	case c == '"':
		start := p.pos
		esc, err := p.parseString()
		if err != nil {
			return err
		}
		k := uint32(nStr)
		if esc {
			k = nStrEsc
		}
		p.add(k, start, p.pos)
		return nil
	case c == '-' || ('0' <= c && c <= '9'):
		return p.parseNumber()
	case c == 't':
		return p.parseLiteral("true", nTrue)
	case c == 'f':
		return p.parseLiteral("false", nFalse)
	case c == 'n':
		return p.parseLiteral("null", nNull)
	default:
		return p.syntax(p.pos, "unexpected %s, expected a value", p.describe(p.pos))
	}
}

func (p *parser) parseLiteral(lit string, kind uint32) error {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
		return p.syntax(p.pos, "invalid literal, expected %q", lit)
	}
	p.add(kind, p.pos, p.pos+len(lit))
	p.pos += len(lit)
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > p.maxDepth {
		return p.fail(p.pos, ErrDepth, "nesting deeper than %d", p.maxDepth)
	}
	return nil
}

// open appends a container node and returns its index.
func (p *parser) open(kind uint32) int {
	if !p.build {
		return 0
	}
	p.nodes = append(p.nodes, node{a: kind<<offBits | uint32(p.pos)})
	return len(p.nodes) - 1
}

func (p *parser) close(i int) {
	p.depth--
	if p.build {
		p.nodes[i].b = uint32(len(p.nodes))
	}
}

func (p *parser) parseArray() error {
	if err := p.enter(); err != nil {
		return err
	}
	self := p.open(nArr)
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.close(self)
		return nil
	}
	for {
		p.skipSpace()
		if err := p.parseValue(); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.syntax(p.pos, "unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.close(self)
			return nil
		default:
			return p.syntax(p.pos, "unexpected %s in array, expected ',' or ']'", p.describe(p.pos))
		}
	}
}

func (p *parser) parseObject() error {
	if err := p.enter(); err != nil {
		return err
	}
	self := p.open(nObj)
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.close(self)
		return nil
	}
	base, abase := len(p.names), len(p.arena)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.syntax(p.pos, "unexpected %s in object, expected a string key", p.describe(p.pos))
		}
		off := p.pos
		esc, err := p.parseString()
		if err != nil {
			return err
		}
		raw := p.data[off+1 : p.pos-1]
		k := uint32(nStr)
		if esc {
			k = nStrEsc
			start := len(p.arena)
			p.arena = decodeString(p.arena, raw)
			raw = p.arena[start:len(p.arena):len(p.arena)]
		}
		p.add(k, off, p.pos)
		p.names = append(p.names, nameRef{name: raw, off: off})
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return p.syntax(p.pos, "unexpected %s after object key, expected ':'", p.describe(p.pos))
		}
		p.pos++
		p.skipSpace()
		if err := p.parseValue(); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.syntax(p.pos, "unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.close(self)
			err := p.checkDuplicates(p.names[base:])
			clear(p.names[base:])
			p.names, p.arena = p.names[:base], p.arena[:abase]
			return err
		default:
			return p.syntax(p.pos, "unexpected %s in object, expected ',' or '}'", p.describe(p.pos))
		}
	}
}

// checkDuplicates rejects an object with two members of the same name,
// reporting the later occurrence. It reorders ms.
func (p *parser) checkDuplicates(ms []nameRef) error {
	if len(ms) < 2 {
		return nil
	}
	if len(ms) == 2 {
		if !bytes.Equal(ms[0].name, ms[1].name) {
			return nil
		}
	} else {
		slices.SortFunc(ms, func(a, b nameRef) int { return bytes.Compare(a.name, b.name) })
	}
	for i := 1; i < len(ms); i++ {
		if bytes.Equal(ms[i-1].name, ms[i].name) {
			dup := max(ms[i-1].off, ms[i].off)
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

// parseString validates the JSON string starting at the opening quote and
// moves past it. It reports whether the string holds escapes.
func (p *parser) parseString() (bool, error) {
	start := p.pos
	p.pos++ // opening quote
	esc := false
	d := p.data
	for {
		// Fast path: printable ASCII.
		for p.pos < len(d) {
			c := d[p.pos]
			if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
				break
			}
			p.pos++
		}
		if p.pos >= len(d) {
			return false, p.syntax(start, "unterminated string")
		}
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			return esc, nil
		case c < 0x20:
			return false, p.syntax(p.pos, "unescaped control character 0x%02x in string", c)
		case c == '\\':
			esc = true
			if err := p.parseEscape(); err != nil {
				return false, err
			}
		default:
			r, size := utf8.DecodeRune(d[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return false, p.syntax(p.pos, "invalid UTF-8 in string")
			}
			p.pos += size
		}
	}
}

// parseEscape validates the escape sequence at p.pos (a backslash).
func (p *parser) parseEscape() error {
	start := p.pos
	if p.pos+1 >= len(p.data) {
		return p.syntax(start, "unterminated escape sequence")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return nil
	case 'u':
	default:
		return p.syntax(start, "invalid escape sequence \\%s", printable(c))
	}
	r, ok := hex4(p.data, p.pos)
	if !ok {
		return p.syntax(start, "invalid \\u escape")
	}
	p.pos += 4
	if utf16.IsSurrogate(r) {
		if r >= 0xDC00 {
			return p.syntax(start, "unpaired low surrogate \\u%04x", r)
		}
		// A high surrogate must be followed by an escaped low surrogate.
		if p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
			return p.syntax(start, "unpaired high surrogate \\u%04x", r)
		}
		r2, ok := hex4(p.data, p.pos+2)
		if !ok {
			return p.syntax(p.pos, "invalid \\u escape")
		}
		if r2 < 0xDC00 || r2 > 0xDFFF {
			return p.syntax(start, "unpaired high surrogate \\u%04x", r)
		}
		p.pos += 6
	}
	return nil
}

// hex4 reads four hex digits at d[i:].
func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// decodeString appends the decoded value of the content raw of a string
// that parseString accepted.
func decodeString(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				return append(dst, raw[i:]...)
			}
			dst = append(dst, raw[i:i+j]...)
			i += j
			continue
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(raw, i)
			i += 4
			if utf16.IsSurrogate(r) {
				r2, _ := hex4(raw, i+2)
				i += 6
				r = utf16.DecodeRune(r, r2)
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
	}
	return dst
}

// parseNumber parses a number per the RFC 8259 grammar and checks that it
// is a finite double.
func (p *parser) parseNumber() error {
	start := p.pos
	i, simple, msg := scanNumber(p.data, start)
	if msg != "" {
		return p.syntax(i, "invalid number: %s", msg)
	}
	p.pos = i
	raw := p.data[start:i]
	// Integers of up to 15 digits are exact doubles and already canonical,
	// except negative zero.
	if simple && len(raw) <= 15 && string(raw) != "-0" {
		p.add(nNum, start, i)
		return nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return p.fail(start, ErrNumber, "number %s is not a finite IEEE-754 double", quoteShort(string(raw)))
	}
	p.add(nNumX, start, i)
	return nil
}

// scanNumber reads the number at d[i] per the RFC 8259 grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and returns the offset one
// past it and whether it is an integer without fraction or exponent; when
// it is not a number, the offset of the problem and what was expected.
func scanNumber(d []byte, i int) (end int, simple bool, msg string) {
	digits := func() {
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		digits()
	default:
		return i, false, "expected digit"
	}
	simple = true
	if i < len(d) && d[i] == '.' {
		simple = false
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return i, false, "expected digit after decimal point"
		}
		digits()
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		simple = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return i, false, "expected digit in exponent"
		}
		digits()
	}
	return i, simple, ""
}

// CanonicalNumberAt reads the number at d[i] and returns the offset one
// past it and whether it is a finite double written in its RFC 8785 form
// (what AppendNumber writes for it); ok is false for anything that is not
// a number.
func CanonicalNumberAt(d []byte, i int) (end int, ok bool) {
	end, simple, msg := scanNumber(d, i)
	if msg != "" {
		return end, false
	}
	raw := d[i:end]
	if simple && len(raw) <= 15 && string(raw) != "-0" {
		return end, true
	}
	if ok, decided := shortDecimal(raw); decided {
		return end, ok
	}
	return end, canonicalNumber(raw)
}

// shortDecimal decides, without converting it, whether raw (a number by
// the grammar) is in its RFC 8785 form when it is a decimal fraction of
// at most 15 digits and no exponent, as "0.8" in a record's details;
// decided is false for any other number. Such a decimal converts to the
// nearest double and back to itself (any decimal of at most 15
// significant digits does: DBL_DIG), and no shorter decimal converts to
// that double, so it is the shortest round trip ES6 writes exactly when it
// has no trailing zero in its fraction and, below 1, at most five zeros
// after the point (from 1e-7 down ES6 writes an exponent).
func shortDecimal(raw []byte) (ok, decided bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	point := bytes.IndexByte(digits, '.')
	if point < 0 || len(digits)-1 > 15 || bytes.IndexAny(digits, "eE") >= 0 {
		return false, false
	}
	frac := digits[point+1:]
	if frac[len(frac)-1] == '0' {
		return false, true // "1.50", "0.0"
	}
	if string(digits[:point]) == "0" {
		zeros := 0
		for zeros < len(frac) && frac[zeros] == '0' {
			zeros++
		}
		if zeros > 5 {
			return false, false // the encoder decides (an exponent)
		}
	}
	return true, true
}

// canonicalNumber reports whether raw, a number by the grammar, is a
// finite double in its RFC 8785 form.
func canonicalNumber(raw []byte) bool {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	var buf [32]byte
	return string(AppendNumber(buf[:0], f)) == string(raw)
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
