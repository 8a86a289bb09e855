// Package document reads and signs svc's JSON documents (VPECs, model
// profiles, circuit entries, API bodies). It decodes untrusted JSON
// strictly and computes the exact bytes a signature covers: the RFC 8785
// canonical form of the document without its signature fields.
//
// Reading untrusted JSON is three layers, each with one job. Add to one of
// them; do not start a fourth:
//
//   - pkg/core/canonical is the JSON text layer: it parses bytes into a
//     tree under I-JSON's rules (UTF-8, no duplicate keys, finite numbers,
//     bounded nesting) and writes a tree's RFC 8785 bytes. It knows no
//     document type; its errors are *canonical.Error at a byte offset.
//   - this package is the document layer: CheckInput refuses what cannot
//     be a document at all (too large, empty, binary, not UTF-8, a byte
//     order mark) before anything is parsed, ParseTree parses, DecodeWith
//     decodes a tree strictly into a Go struct by its json tags, and
//     SignedBytes gives the bytes a signature covers. Its errors are the
//     types every caller matches with errors.As, never by their text:
//     *SyntaxError (the input is not readable JSON, at a byte offset),
//     *FieldError (one member is wrong: Path names it, e.g.
//     records[3].sequence) and *SchemaError (every problem a document's
//     reader found, in order, as a person reads them). Each matches
//     ErrSchema.
//   - a document type's own reader adds what struct tags cannot say, and
//     reports through those types: pkg/core/vpec's shape scan (shape.go: in
//     one pass over the bytes it refuses what cannot be a v1 VPEC before
//     any parse, and finds each record so a large VPEC is read one record
//     at a time) and its v1 rules (ids, times, enums, which blocks go with
//     which proof level); pkg/core/profile's rules likewise.
package document

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/canonical"
)

// MaxSize is the largest document the decoders accept (256 MiB). Larger
// input is refused before it is read as JSON, with an error matching
// ErrTooLarge.
const MaxSize = 256 << 20

// MaxDepth is the deepest nesting of arrays and objects a document may
// have. The document's top-level object has depth 1 and every array or
// object inside another adds one (a VPEC record's details object is at
// depth 4, so its contents may nest 60 levels more); scalars add nothing.
const MaxDepth = 64

var (
	// ErrSchema reports a document that is not valid JSON of the expected
	// shape: invalid JSON, duplicate keys, unknown, missing, empty, null or
	// mistyped fields, numbers not in their one accepted form.
	ErrSchema = errors.New("schema")
	// ErrTooLarge reports a document larger than MaxSize.
	ErrTooLarge = errors.New("document too large")
	// ErrNotJSON reports input that is not a JSON text at all: empty,
	// binary, not UTF-8, or starting with a byte order mark.
	ErrNotJSON = errors.New("not JSON")
	// ErrSyntax reports text that is not valid JSON (cut off, a missing
	// comma, trailing data, ...).
	ErrSyntax = errors.New("invalid JSON")
)

// SyntaxError reports input that cannot be read as an I-JSON document, at
// a byte offset, in words a person understands. It matches ErrSchema and
// Err: ErrTooLarge, ErrNotJSON, ErrSyntax, or for JSON that breaks I-JSON
// rules canonical.ErrDuplicateKey, canonical.ErrNumber or canonical.ErrDepth.
type SyntaxError struct {
	Offset int    // byte offset of the problem in the input
	Msg    string // the problem, without the offset
	Err    error
}

// Error returns the message with its position.
func (e *SyntaxError) Error() string {
	switch e.Err {
	case ErrTooLarge:
		return e.Msg
	}
	if e.Offset < 0 {
		return e.Msg
	}
	return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset)
}

// Unwrap returns the class of the problem and ErrSchema.
func (e *SyntaxError) Unwrap() []error { return []error{e.Err, ErrSchema} }

// FieldError is one schema problem of a decoded document: the member at
// Path is missing, unknown, mistyped, null or empty where it must not be,
// or a number not in its one form. It matches ErrSchema.
type FieldError struct {
	// Path names the member, e.g. records[3].review.session_id;
	// "(document)" is the document itself. It is empty only on the note
	// that closes a list cut short ("… and 4 more problems").
	Path string
	// Msg says what is wrong, e.g. "missing required field".
	Msg string
}

// Error returns "schema: " followed by Detail.
func (e *FieldError) Error() string { return "schema: " + e.Detail() }

// Detail returns the problem as a person reads it, without the error's
// class: "records[3].sequence: missing required field".
func (e *FieldError) Detail() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Unwrap returns ErrSchema.
func (e *FieldError) Unwrap() error { return ErrSchema }

// FieldErrors returns the *FieldError values err holds (itself, or joined
// or wrapped in it), in order; nil when it holds none.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *FieldError:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// SchemaError is every problem a document type's reader found in one
// document (pkg/core/vpec.Parse), in document order, each as a person
// reads it and naming its member ("records[2].check_result \"ok\" is not
// one of [...]"). A reader bounds the list (the last line then says more
// were left out). It matches ErrSchema.
type SchemaError struct {
	Problems []string
}

// Error returns the problems, one a line, each after "schema: ".
func (e *SchemaError) Error() string {
	return "schema: " + strings.Join(e.Problems, "\nschema: ")
}

// Unwrap returns ErrSchema.
func (e *SchemaError) Unwrap() error { return ErrSchema }

// TooLarge is the error for input of size bytes, above MaxSize (size -1:
// a stream known only to hold more than MaxSize bytes). It matches
// ErrTooLarge and ErrSchema.
func TooLarge(size int64) *SyntaxError {
	if size < 0 {
		return &SyntaxError{Offset: -1, Err: ErrTooLarge,
			Msg: fmt.Sprintf("the document is larger than the %d byte (256 MiB) limit", MaxSize)}
	}
	return &SyntaxError{Offset: -1, Err: ErrTooLarge,
		Msg: fmt.Sprintf("the document is %d bytes, larger than the %d byte (256 MiB) limit", size, MaxSize)}
}

// CheckInput refuses, cheaply and before any parsing, input that cannot be
// a document: larger than MaxSize, empty, binary (a control byte other
// than tab, CR or LF: JSON never holds one raw), not UTF-8, or starting
// with a UTF-8 byte order mark. Its errors are *SyntaxError.
func CheckInput(data []byte) error {
	if len(data) > MaxSize {
		return TooLarge(int64(len(data)))
	}
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		return &SyntaxError{Offset: -1, Err: ErrNotJSON, Msg: "the document is empty"}
	}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return &SyntaxError{Offset: -1, Err: ErrNotJSON,
			Msg: "not JSON: the document starts with a UTF-8 byte order mark (EF BB BF); save it without one"}
	}
	if i := firstControl(data); i >= 0 {
		return &SyntaxError{Offset: i, Err: ErrNotJSON, Msg: fmt.Sprintf("not JSON: binary data (byte 0x%02x)", data[i])}
	}
	if i := invalidUTF8(data); i >= 0 {
		return &SyntaxError{Offset: i, Err: ErrNotJSON, Msg: fmt.Sprintf("not UTF-8: invalid byte 0x%02x", data[i])}
	}
	return nil
}

// firstControl returns the offset of the first control byte other than
// tab, LF and CR (below 0x20), or -1. It reads eight bytes at a time and
// looks at each byte only of a word that holds one below 0x20 (a JSON
// text's line breaks): a word x has such a byte exactly when
// (x - 0x20…20) & ^x & 0x80…80 is not zero.
func firstControl(data []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		if (x-0x20*ones)&^x&highs == 0 {
			continue
		}
		for j, c := range data[i : i+8] {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return i + j
			}
		}
	}
	for j, c := range data[i:] {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return i + j
		}
	}
	return -1
}

// invalidUTF8 returns the offset of the first byte that is not valid
// UTF-8, or -1.
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// ParseTree reads data as an I-JSON document (CheckInput's rules first,
// then the parse, at most MaxDepth levels) and returns its tree. Errors
// are *SyntaxError.
func ParseTree(data []byte) (*canonical.Value, error) { return parse(data) }

func parse(data []byte) (*canonical.Value, error) {
	if err := CheckInput(data); err != nil {
		return nil, err
	}
	tree, err := canonical.ParseDepth(data, MaxDepth)
	if err != nil {
		return nil, syntaxError(data, err)
	}
	return tree, nil
}

// SyntaxErrorAt is for a document parsed in parts: it turns err, from
// parsing a part of data whose first byte is data[offset], into the
// *SyntaxError of data.
func SyntaxErrorAt(data []byte, offset int, err error) error {
	var ce *canonical.Error
	if !errors.As(err, &ce) {
		return fmt.Errorf("%w: %w", ErrSchema, err)
	}
	moved := *ce
	moved.Offset += offset
	return syntaxError(data, &moved)
}

// syntaxError turns a parser error into a *SyntaxError without the
// parser's package prefix.
func syntaxError(data []byte, err error) error {
	var ce *canonical.Error
	if !errors.As(err, &ce) {
		return fmt.Errorf("%w: %w", ErrSchema, err)
	}
	se := &SyntaxError{Offset: ce.Offset, Err: ce.Err}
	switch ce.Err {
	case canonical.ErrInvalidJSON:
		se.Err = ErrSyntax
		line, col := position(data, ce.Offset)
		se.Msg = fmt.Sprintf("not valid JSON (line %d, column %d): %s", line, col, ce.Msg)
	case canonical.ErrTooLarge:
		se.Err = ErrTooLarge
		se.Msg = ce.Msg
	case canonical.ErrDepth:
		se.Msg = fmt.Sprintf("arrays and objects nested deeper than %d levels", MaxDepth)
	default:
		se.Msg = ce.Msg
	}
	return se
}

// position returns the 1-based line and column (in bytes) of offset.
func position(data []byte, offset int) (line, col int) {
	offset = min(offset, len(data))
	line = 1 + bytes.Count(data[:offset], []byte("\n"))
	col = offset - bytes.LastIndexByte(data[:offset], '\n')
	return line, col
}

// Parse checks that data is I-JSON (valid UTF-8, no duplicate keys, finite
// numbers, no trailing data, at most MaxDepth levels) and strictly decodes
// it into target (see Decode). It returns the parsed tree, from which signed
// bytes are computed without parsing again.
func Parse(data []byte, target any) (*canonical.Value, error) {
	return ParseWith(data, target, Options{})
}

// ParseWith is Parse with decoding options; signed documents are read
// with CanonicalNumbers.
func ParseWith(data []byte, target any, opts Options) (*canonical.Value, error) {
	tree, err := parse(data)
	if err != nil {
		return nil, err
	}
	if err := DecodeWith(tree, target, opts); err != nil {
		return tree, err
	}
	return tree, nil
}

// SignedBytes returns the RFC 8785 canonical bytes of the JSON object data
// with the named top-level fields removed: the bytes a signature covers.
func SignedBytes(data []byte, without ...string) ([]byte, error) {
	tree, err := parse(data)
	if err != nil {
		return nil, err
	}
	if tree.Kind() != canonical.KindObject {
		return nil, fmt.Errorf("%w: document is a JSON %s, want an object", ErrSchema, tree.Kind())
	}
	return tree.Canonical(without...), nil
}

// MarshalSignedBytes marshals v and returns SignedBytes of the result.
func MarshalSignedBytes(v any, without ...string) ([]byte, error) {
	raw, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	return SignedBytes(raw, without...)
}

// Marshal encodes v as JSON without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// MarshalIndent encodes v as indented JSON with a trailing newline, the
// form svc writes documents to files in.
func MarshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return buf.Bytes(), nil
}
