package canonical

import (
	"bytes"
	"slices"
	"strconv"
)

// Kind is the JSON type of a Value.
type Kind uint8

// JSON types.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// String names the kind as JSON does ("null", "boolean", "number", ...).
func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Parse parses a JSON text under the same rules as [Transform] and returns
// its tree, from which canonical bytes of any part can be produced without
// parsing again.
func Parse(data []byte) (*Value, error) {
	p := parser{data: data}
	v, err := p.parseText()
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// Kind returns the JSON type of v.
func (v *Value) Kind() Kind {
	switch v.kind {
	case kindNumber:
		return KindNumber
	case kindString:
		return KindString
	case kindArray:
		return KindArray
	case kindObject:
		return KindObject
	}
	if v.text[0] == 'n' {
		return KindNull
	}
	return KindBool
}

// Bool returns the value of a boolean (false for any other kind).
func (v *Value) Bool() bool { return v.kind == kindLiteral && v.text[0] == 't' }

// Str returns the decoded value of a string ("" for any other kind).
func (v *Value) Str() string {
	if v.kind != kindString {
		return ""
	}
	return string(v.text)
}

// Number returns the canonical text of a number and its float64 value.
func (v *Value) Number() (string, float64) {
	if v.kind != kindNumber {
		return "", 0
	}
	f, _ := strconv.ParseFloat(string(v.text), 64)
	return string(v.text), f
}

// Len returns the number of elements of an array or members of an object.
func (v *Value) Len() int {
	if v.kind == kindObject {
		return len(v.members)
	}
	return len(v.elems)
}

// Index returns element i of an array.
func (v *Value) Index(i int) *Value { return &v.elems[i] }

// Member returns the name and value of member i of an object, in canonical order.
func (v *Value) Member(i int) (string, *Value) {
	m := &v.members[i]
	return string(m.name), &m.val
}

// Get returns the member of an object with the given name, or nil.
func (v *Value) Get(name string) *Value {
	for i := range v.members {
		if string(v.members[i].name) == name {
			return &v.members[i].val
		}
	}
	return nil
}

// AppendCanonical appends the RFC 8785 canonical form of v to dst. For an
// object, the named top-level members are left out.
func (v *Value) AppendCanonical(dst []byte, without ...string) []byte {
	if v.kind != kindObject || len(without) == 0 {
		return appendValue(dst, v)
	}
	dst = append(dst, '{')
	first := true
	for i := range v.members {
		m := &v.members[i]
		if slices.ContainsFunc(without, func(w string) bool { return bytes.Equal(m.name, []byte(w)) }) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, m.name)
		dst = append(dst, ':')
		dst = appendValue(dst, &m.val)
	}
	return append(dst, '}')
}

// Canonical returns the RFC 8785 canonical form of v, without the named
// top-level members when v is an object.
func (v *Value) Canonical(without ...string) []byte { return v.AppendCanonical(nil, without...) }
