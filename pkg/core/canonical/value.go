package canonical

import (
	"iter"
	"slices"
	"strconv"
	"sync"
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

// Value is a value of a parsed JSON text. The tree is compact (8 bytes per
// value, strings and numbers read from the input, which it aliases) and
// immutable: a Value may be read from several goroutines at once.
type Value struct {
	t *tree
	i uint32
}

// Parse parses a JSON text under the same rules as [Transform] and returns
// its tree, from which canonical bytes of any part can be produced without
// parsing again. The tree aliases data, which must not be modified while
// the tree is in use.
func Parse(data []byte) (*Value, error) { return ParseDepth(data, MaxDepth) }

func (v *Value) node() node { return v.t.nodes[v.i] }

// Kind returns the JSON type of v.
func (v *Value) Kind() Kind {
	switch v.node().kind() {
	case nNull:
		return KindNull
	case nTrue, nFalse:
		return KindBool
	case nNum, nNumX:
		return KindNumber
	case nStr, nStrEsc:
		return KindString
	case nArr:
		return KindArray
	}
	return KindObject
}

// Offset returns the byte offset of v in the input.
func (v *Value) Offset() int { return int(v.node().off()) }

// Raw returns the bytes of a scalar as written in the input (a string with
// its quotes and escapes, a number as written); nil for arrays and objects.
func (v *Value) Raw() []byte {
	n := v.node()
	if n.kind() >= nArr {
		return nil
	}
	return v.t.data[n.off():n.b:n.b]
}

// Bool returns the value of a boolean (false for any other kind).
func (v *Value) Bool() bool { return v.node().kind() == nTrue }

// Str returns the decoded value of a string ("" for any other kind).
func (v *Value) Str() string {
	n := v.node()
	switch n.kind() {
	case nStr:
		return string(v.t.data[n.off()+1 : n.b-1])
	case nStrEsc:
		return string(decodeString(nil, v.t.data[n.off()+1:n.b-1]))
	}
	return ""
}

// Number returns the canonical text of a number and its float64 value.
func (v *Value) Number() (string, float64) {
	n := v.node()
	switch n.kind() {
	case nNum, nNumX:
		f, _ := strconv.ParseFloat(string(v.t.data[n.off():n.b]), 64)
		if n.kind() == nNum {
			return string(v.t.data[n.off():n.b]), f
		}
		return string(AppendNumber(nil, f)), f
	}
	return "", 0
}

// Len returns the number of elements of an array or members of an object.
// It takes time proportional to the number.
func (v *Value) Len() int {
	n := v.node()
	if n.kind() < nArr {
		return 0
	}
	count := 0
	for j := v.i + 1; j < n.b; j = v.t.next(j) {
		count++
	}
	if n.kind() == nObj {
		count /= 2
	}
	return count
}

// Elements iterates over the elements of an array. The *Value it yields
// is reused for the next element: copy it (*e) to keep it.
func (v *Value) Elements() iter.Seq2[int, *Value] {
	return func(yield func(int, *Value) bool) {
		n := v.node()
		if n.kind() != nArr {
			return
		}
		k := 0
		e := &Value{t: v.t}
		for j := v.i + 1; j < n.b; j = v.t.next(j) {
			e.i = j
			if !yield(k, e) {
				return
			}
			k++
		}
	}
}

// Members iterates over the members of an object in document order,
// yielding each decoded name and value. The *Value it yields is reused for
// the next member: copy it (*m) to keep it.
func (v *Value) Members() iter.Seq2[string, *Value] {
	return func(yield func(string, *Value) bool) {
		for name, m := range v.MemberNames() {
			if !yield(string(name), m) {
				return
			}
		}
	}
}

// MemberNames is Members with each name as bytes, valid only until the
// next member: the input's bytes when the name has no escapes, so that
// reading names allocates nothing.
func (v *Value) MemberNames() iter.Seq2[[]byte, *Value] {
	return func(yield func([]byte, *Value) bool) {
		n := v.node()
		if n.kind() != nObj {
			return
		}
		m := &Value{t: v.t}
		var buf []byte
		for j := v.i + 1; j < n.b; {
			nn := v.t.nodes[j]
			name := v.t.data[nn.off()+1 : nn.b-1]
			if nn.kind() == nStrEsc {
				buf = decodeString(buf[:0], name)
				name = buf
			}
			m.i = j + 1
			if !yield(name, m) {
				return
			}
			j = v.t.next(j + 1)
		}
	}
}

// Index returns element i of an array. It takes time proportional to i:
// use Elements to visit every element.
func (v *Value) Index(i int) *Value {
	for k, e := range v.Elements() {
		if k == i {
			c := *e
			return &c
		}
	}
	panic("canonical: index out of range")
}

// Member returns the name and value of member i of an object, in document
// order. It takes time proportional to i: use Members to visit every member.
func (v *Value) Member(i int) (string, *Value) {
	k := 0
	for name, m := range v.Members() {
		if k == i {
			c := *m
			return name, &c
		}
		k++
	}
	panic("canonical: member index out of range")
}

// nameIs reports whether the member name at node j equals name.
func (t *tree) nameIs(j uint32, name string) bool {
	n := t.nodes[j]
	raw := t.data[n.off()+1 : n.b-1]
	if n.kind() == nStr {
		return string(raw) == name
	}
	return string(decodeString(nil, raw)) == name
}

// Get returns the member of an object with the given name, or nil.
func (v *Value) Get(name string) *Value {
	n := v.node()
	if n.kind() != nObj {
		return nil
	}
	for j := v.i + 1; j < n.b; j = v.t.next(j + 1) {
		if v.t.nameIs(j, name) {
			return &Value{t: v.t, i: j + 1}
		}
	}
	return nil
}

// NonCanonicalNumber returns the first number in v (v itself or anywhere
// inside it) that is not written in its RFC 8785 form, such as 1.0, 1e0,
// -0 or 0.50, or nil when every number is.
func (v *Value) NonCanonicalNumber() *Value {
	end := v.t.next(v.i)
	var buf [32]byte
	for j := v.i; j < end; j++ {
		n := v.t.nodes[j]
		if n.kind() != nNumX {
			continue // nNum is canonical by construction
		}
		raw := v.t.data[n.off():n.b]
		f, _ := strconv.ParseFloat(string(raw), 64)
		if string(AppendNumber(buf[:0], f)) != string(raw) {
			return &Value{t: v.t, i: j}
		}
	}
	return nil
}

// memberRef is an object member while it is written in canonical order.
type memberRef struct {
	name []byte // decoded
	val  uint32 // node index of the value
}

// encoder writes canonical bytes from a tree; its scratch stacks hold the
// members of the objects being written.
type encoder struct {
	t     *tree
	ms    []memberRef
	arena []byte
	// replace writes the values of members of the object at node top.
	replace map[string]func(dst []byte) []byte
	top     uint32
}

var encoders = sync.Pool{New: func() any { return new(encoder) }}

// AppendCanonical appends the RFC 8785 canonical form of v to dst. For an
// object, the named top-level members are left out.
func (v *Value) AppendCanonical(dst []byte, without ...string) []byte {
	e := encoders.Get().(*encoder)
	e.t = v.t
	dst = e.value(dst, v.i, without)
	e.t = nil
	clear(e.ms)
	e.ms, e.arena = e.ms[:0], e.arena[:0]
	if cap(e.ms) <= 1<<12 && cap(e.arena) <= 1<<16 {
		encoders.Put(e)
	}
	return dst
}

// AppendCanonicalReplacing is AppendCanonical for an object in which the
// values of the top-level members named in replace are written by their
// functions instead (each appends the value's canonical form to dst): a
// document can be encoded in parts.
func (v *Value) AppendCanonicalReplacing(dst []byte, replace map[string]func(dst []byte) []byte, without ...string) []byte {
	e := encoders.Get().(*encoder)
	e.t, e.replace, e.top = v.t, replace, v.i
	dst = e.value(dst, v.i, without)
	e.t, e.replace = nil, nil
	clear(e.ms)
	e.ms, e.arena = e.ms[:0], e.arena[:0]
	encoders.Put(e)
	return dst
}

// Canonical returns the RFC 8785 canonical form of v, without the named
// top-level members when v is an object.
func (v *Value) Canonical(without ...string) []byte { return v.AppendCanonical(nil, without...) }

func (e *encoder) value(dst []byte, i uint32, without []string) []byte {
	t := e.t
	n := t.nodes[i]
	switch n.kind() {
	case nNull, nTrue, nFalse, nNum:
		return append(dst, t.data[n.off():n.b]...)
	case nNumX:
		f, _ := strconv.ParseFloat(string(t.data[n.off():n.b]), 64)
		return AppendNumber(dst, f)
	case nStr:
		// Without escapes the content holds no quote, backslash or control
		// character: it is its own canonical form.
		return append(dst, t.data[n.off():n.b]...)
	case nStrEsc:
		start := len(e.arena)
		e.arena = decodeString(e.arena, t.data[n.off()+1:n.b-1])
		dst = appendString(dst, e.arena[start:])
		e.arena = e.arena[:start]
		return dst
	case nArr:
		dst = append(dst, '[')
		for j := i + 1; j < n.b; j = t.next(j) {
			if j > i+1 {
				dst = append(dst, ',')
			}
			dst = e.value(dst, j, nil)
		}
		return append(dst, ']')
	}
	base, abase := len(e.ms), len(e.arena)
	for j := i + 1; j < n.b; j = t.next(j + 1) {
		nn := t.nodes[j]
		name := t.data[nn.off()+1 : nn.b-1]
		if nn.kind() == nStrEsc {
			start := len(e.arena)
			e.arena = decodeString(e.arena, name)
			name = e.arena[start:len(e.arena):len(e.arena)]
		}
		if len(without) > 0 && slices.ContainsFunc(without, func(w string) bool { return string(name) == w }) {
			continue
		}
		e.ms = append(e.ms, memberRef{name: name, val: j + 1})
	}
	top := len(e.ms)
	window := e.ms[base:top]
	if !slices.IsSortedFunc(window, cmpMember) {
		slices.SortFunc(window, cmpMember)
	}
	dst = append(dst, '{')
	for k := base; k < top; k++ {
		if k > base {
			dst = append(dst, ',')
		}
		m := e.ms[k]
		dst = appendString(dst, m.name)
		dst = append(dst, ':')
		if e.replace != nil && i == e.top {
			if write := e.replace[string(m.name)]; write != nil {
				dst = write(dst)
				continue
			}
		}
		dst = e.value(dst, m.val, nil)
	}
	clear(e.ms[base:top])
	e.ms, e.arena = e.ms[:base], e.arena[:abase]
	return append(dst, '}')
}

func cmpMember(a, b memberRef) int { return compareUTF16(a.name, b.name) }

// WrittenCanonically reports whether v is written in the input exactly in
// its RFC 8785 form (what AppendCanonical would write for it: no
// whitespace, members in canonical order, numbers and strings in their
// one form) and, if so, returns the offset one past it. A caller can then
// use the input's bytes as v's canonical bytes without encoding them. It
// allocates nothing.
func (v *Value) WrittenCanonically() (end int, ok bool) {
	end, ok = v.t.writtenCanonically(v.i, int(v.node().off()))
	return end, ok
}

// writtenCanonically checks the subtree at node i, which must start at
// offset at, and returns the offset one past it.
func (t *tree) writtenCanonically(i uint32, at int) (int, bool) {
	n := t.nodes[i]
	if int(n.off()) != at {
		return 0, false // whitespace before the value
	}
	switch n.kind() {
	case nNull, nTrue, nFalse, nNum, nStr:
		// nNum: a short integer, canonical by construction; nStr: without
		// escapes the content is its own canonical form.
		return int(n.b), true
	case nNumX:
		return int(n.b), canonicalNumber(t.data[n.off():n.b])
	case nStrEsc:
		return int(n.b), canonicalEscapes(t.data[n.off()+1 : n.b-1])
	case nArr:
		at++ // '['
		for j := i + 1; j < n.b; j = t.next(j) {
			if j > i+1 {
				if at >= len(t.data) || t.data[at] != ',' {
					return 0, false
				}
				at++
			}
			var ok bool
			if at, ok = t.writtenCanonically(j, at); !ok {
				return 0, false
			}
		}
		if at >= len(t.data) || t.data[at] != ']' {
			return 0, false
		}
		return at + 1, true
	}
	at++ // '{'
	var prev []byte
	var scratch [2][64]byte
	k := 0
	for j := i + 1; j < n.b; j = t.next(j + 1) {
		if j > i+1 {
			if at >= len(t.data) || t.data[at] != ',' {
				return 0, false
			}
			at++
		}
		var ok bool
		if at, ok = t.writtenCanonically(j, at); !ok {
			return 0, false
		}
		nn := t.nodes[j]
		name := t.data[nn.off()+1 : nn.b-1]
		if nn.kind() == nStrEsc {
			name = decodeString(scratch[k][:0], name)
			k ^= 1 // prev stays in the other buffer
		}
		if j > i+1 && compareUTF16(prev, name) >= 0 {
			return 0, false // not in canonical order
		}
		prev = name
		if at >= len(t.data) || t.data[at] != ':' {
			return 0, false
		}
		if at, ok = t.writtenCanonically(j+1, at+1); !ok {
			return 0, false
		}
	}
	if at >= len(t.data) || t.data[at] != '}' {
		return 0, false
	}
	return at + 1, true
}

// canonicalEscapes reports whether the raw content of a valid JSON string
// holds only the escapes RFC 8785 writes: \" \\ \b \f \n \r \t, and
// \u00xx (lowercase hex) for the other control characters.
func canonicalEscapes(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		switch raw[i] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			continue
		case 'u':
			if i+4 >= len(raw) || raw[i+1] != '0' || raw[i+2] != '0' || (raw[i+3] != '0' && raw[i+3] != '1') {
				return false
			}
			c := raw[i+4]
			var x byte
			switch {
			case '0' <= c && c <= '9':
				x = c - '0'
			case 'a' <= c && c <= 'f':
				x = c - 'a' + 10
			default:
				return false
			}
			x += (raw[i+3] - '0') << 4
			switch x {
			case '\b', '\t', '\n', '\f', '\r':
				return false // has a short form
			}
			i += 4
			continue
		}
		return false
	}
	return true
}
